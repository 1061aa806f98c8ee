"""`kenning inspect`, `kenning sql`, `kenning ask`, `kenning digest`, `kenning truth`: reading the knowledge store
to see why (seed 003 §41, §41.6, §42A.4). Every one opens the vault read-only, except `truth --build`."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, LlmOpt, fail, llm_mode, open_vault, out, print_json

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (ISO-8601) for this command.")]


def _now(as_of: str | None) -> str:
    from kenning.cli.common import user_errors
    from kenning.pipeline.clock import Clock

    with user_errors():
        return Clock.from_option(as_of).now()


def _print_rows(res: dict[str, Any]) -> None:
    t = Table(*res["columns"]) if res["columns"] else Table("(no columns)")
    for r in res["rows"]:
        t.add_row(*("" if v is None else str(v) for v in r))
    out.print(t)
    more = " (more rows: truncated; raise --rows, at most the cap)" if res["truncated"] else ""
    out.print(f"{res['row_count']} row(s) in {res['execution_ms']:.1f} ms{more}")


def inspect_command(
    query_type: Annotated[str, typer.Argument(help="node_detail | provenance_chain | experience_record | "
                                              "confidence_breakdown | connected_nodes | tag_explanation | "
                                              "entity_knowledge_brief | search_knowledge")],
    node: Annotated[Optional[str], typer.Argument(help="The node: id, id prefix, name or alias.")] = None,
    query: Annotated[Optional[str], typer.Option("--query", "-q", help="What to search for (search_knowledge).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", help="At most this many hits / edges.")] = None,
    vectors: Annotated[Optional[bool], typer.Option("--vectors/--no-vectors", help="search_knowledge: also the "
                                                    "node vectors (default inspect.search_vectors).",
                                                    show_default=False)] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Inspect the knowledge store (§41.2 inspect_knowledge): why a node is there, how sure, what it connects to."""
    from kenning.knowledge.errors import KnowledgeError
    from kenning.retrieve.inspect import InspectError, inspect_knowledge

    now = _now(as_of)
    with open_vault(db, config, readonly=True) as v:
        try:
            res = inspect_knowledge(v.conn, v.config, query_type, now=now, node=node, query=query, limit=limit,
                                    vectors=vectors)
        except (InspectError, KnowledgeError) as e:
            fail(str(e), code=2)
    if as_json:
        print_json(res)
        return
    out.print(res["result_summary"])
    for a in res["suggested_actions"]:
        out.print(f"  → {a}")


def sql_command(
    sql: Annotated[str, typer.Argument(help="One read-only statement (SELECT, WITH … SELECT, a reading PRAGMA).")],
    rows: Annotated[Optional[int], typer.Option("--rows", help="At most this many rows (default 20, cap 100).")] = None,
    timeout_ms: Annotated[Optional[int], typer.Option("--timeout-ms", help="Stop after this long (default 500, "
                                                      "cap 2000).")] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run read-only SQL against the vault (§41.6): writes, ATTACH, write pragmas, extensions and several
    statements are refused (exit 2)."""
    from kenning.store.readonly_sql import SqlRefused, run_readonly_sql

    with open_vault(db, config, readonly=True) as v:
        try:
            res = run_readonly_sql(v.conn, sql, sql_limits(v.config), max_rows=rows, timeout_ms=timeout_ms).as_dict()
        except SqlRefused as e:
            fail(str(e), code=2)
    if as_json:
        print_json(res)
    else:
        _print_rows(res)


def sql_limits(config: Any) -> Any:
    from kenning.store.readonly_sql import limits_of

    return limits_of(config)


def ask_command(
    question: Annotated[str, typer.Argument(help="A question about your knowledge, in words.")],
    rows: Annotated[Optional[int], typer.Option("--rows", help="At most this many rows (default 20, cap 100).")] = None,
    llm: LlmOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Text-to-SQL (§41.6): a model writes SQL from the schema card, Kenning runs it read-only and prints rows."""
    from kenning.cli.common import user_errors
    from kenning.knowledge.ask import AskError, ask

    with open_vault(db, config) as v:
        mode = llm_mode(v.config, llm)
        if mode == "none":
            fail("`kenning ask` needs a model to write the SQL and none is configured: set KENNING_LLM_BASE_URL "
                 "and KENNING_LLM_MODEL (or pass --llm replay to answer from logged calls); `kenning sql` runs "
                 "SQL you write yourself", code=2)
        with user_errors():
            try:
                res = ask(v.conn, v.config, question, llm_mode=mode, max_rows=rows)
            except AskError as e:
                fail(str(e), code=2)
    if as_json:
        print_json(res)
        if res.get("error"):
            raise typer.Exit(2)
        return
    out.print(f"SQL: {res['sql']}")
    if res.get("error"):
        fail(res["error"], code=2)
    _print_rows(res["result"])


def digest_command(
    since: Annotated[Optional[str], typer.Option("--since", help="Start of the window (ISO date; default "
                                                 "inspect.digest.window_days before now).")] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The weekly knowledge digest (§42A.4.6): new entities, confidence changes, corrections, approaching
    deadlines, stale knowledge."""
    from kenning.knowledge.digest import DigestError, weekly_digest

    now = _now(as_of)
    with open_vault(db, config, readonly=True) as v:
        try:
            d = weekly_digest(v.conn, v.config, now=now, since=since)
        except DigestError as e:
            fail(str(e), code=2)
    if as_json:
        print_json(d)
        return
    c = d["content"]
    out.print(f"Knowledge digest {c['week_start'][:10]} → {c['week_end'][:10]}")
    for s in c["work_context_sections"]:
        out.print(f"  new entities: {len(s['new_entities'])}"
                  + "".join(f"\n    {e['canonical_name']} ({e['node_kind']})" for e in s["new_entities"]))
        out.print(f"  confidence changes: {len(s['confidence_changes'])}"
                  + "".join(f"\n    {c['canonical_name']}: {c['old_confidence']:.2f} → {c['new_confidence']:.2f}"
                            for c in s["confidence_changes"]))
        out.print(f"  corrections applied: {s['corrections_applied']}")
        out.print(f"  approaching deadlines: {len(s['approaching_deadlines'])}"
                  + "".join(f"\n    {a['canonical_name']} ({a['deadline_hint']})" for a in s["approaching_deadlines"]))
        out.print(f"  stale knowledge: {s['stale_knowledge_count']}")


def truth_command(
    node: Annotated[str, typer.Argument(help="The node: id, id prefix, name or alias.")],
    build: Annotated[bool, typer.Option("--build", help="Rebuild the read model now if it is missing or stale.")] = False,
    as_of: AsOfOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A node's compiled truth (§42A.4): the read model with its four hashes, stale reason and status."""
    from kenning.knowledge.compiled import compiled_truth
    from kenning.knowledge.errors import KnowledgeError

    now = _now(as_of)
    with open_vault(db, config, readonly=not build) as v:
        try:
            m = compiled_truth(v.conn, v.config, node, now=now, build=build)
        except KnowledgeError as e:
            fail(str(e), code=2)
    if as_json:
        print_json(m)
        return
    out.print(f"{m['canonical_name']} ({m['node_kind']}): status {m['status']}"
              + (f", stale ({m.get('stale_reason')})" if m["stale"] else ""))
    if m.get("markdown"):
        out.print(m["markdown"])


def constellation_command(
    entity: Annotated[str, typer.Argument(help="The entity: id, id prefix, name or alias.")],
    as_of: AsOfOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The scene around an entity (§42A.4.5 WorkContextConstellation): primary entities, goals, obligations,
    recent changes, unresolved items."""
    from kenning.retrieve.constellation import constellation
    from kenning.knowledge.errors import KnowledgeError

    now = _now(as_of)
    with open_vault(db, config, readonly=True) as v:
        try:
            c = constellation(v.conn, v.config, entity, now=now)
        except KnowledgeError as e:
            fail(str(e), code=2)
    if as_json:
        print_json(c)
        return
    out.print(f"{c['work_context_name']} (scene confidence {c['scene_confidence']:.2f})")
    out.print("  entities: " + ", ".join(f"{p['canonical_name']} {p['relevance_score']:.2f}"
                                         for p in c["primary_entities"]))
    for key, label in (("active_goals", "goals"), ("active_obligations", "obligations")):
        if c[key]:
            out.print(f"  {label}: " + "; ".join(x["canonical_name"] + (f" ({x['due_hint']})" if x.get("due_hint")
                                                                        else "") for x in c[key]))
    for u in c["unresolved_items"]:
        out.print(f"  unresolved: {u}")
    for ch in c["recent_changes"]:
        out.print(f"  {ch['occurred_at'][:10]} {ch['summary']}")


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect_command)
    app.command("sql")(sql_command)
    app.command("ask")(ask_command)
    app.command("digest")(digest_command)
    app.command("truth")(truth_command)
    app.command("constellation")(constellation_command)
