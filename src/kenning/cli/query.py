"""Delivering the node store (issue 19): `kenning query KIND …` (the §43 Graph Query API), `kenning context
"REQUEST"` (a novelty-gated context packet, §42A.1) and `kenning brief ENTITY` (the §41.4 knowledge brief)."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Iterator, Optional

import typer

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Answer as of this time (ISO-8601; default now).")]
KIND_HELP = ("entity_lookup | entity_neighbors | entity_cards | procedure_bundle | goal_context | knowledge_brief | "
             "related_threads | entity_scoped_search")


@contextlib.contextmanager
def delivery_errors() -> Iterator[None]:
    """What a person can fix (an unknown kind or argument, a node that is not there, a bad date): one line, exit 2."""
    from kenning.knowledge.errors import KnowledgeError

    try:
        yield
    except (KnowledgeError, ValueError) as e:
        fail(str(e), code=2)


def _now(as_of: str | None) -> str:
    from kenning.cli.common import user_errors
    from kenning.pipeline.clock import Clock

    with user_errors():
        return Clock.from_option(as_of).now()


def query_command(
    kind: Annotated[str, typer.Argument(help=KIND_HELP)],
    target: Annotated[Optional[str], typer.Argument(
        help="The entity (id, id prefix, name or alias); for entity_lookup the value; for entity_cards ids/names "
             "separated by commas.")] = None,
    lookup: Annotated[Optional[str], typer.Option("--lookup", help="entity_lookup: id | alias | exact_name.")] = None,
    depth: Annotated[Optional[int], typer.Option("--depth", help="entity_neighbors: 1 or 2.")] = None,
    edge_type: Annotated[Optional[list[str]], typer.Option("--edge-type", help="entity_neighbors: only these "
                                                                                "relations (repeatable).")] = None,
    tier: Annotated[Optional[str], typer.Option("--tier", help="entity_cards: compact | full.")] = None,
    composite: Annotated[Optional[str], typer.Option("--composite", help="procedure_bundle: a composite "
                                                                         "procedure.")] = None,
    text: Annotated[Optional[str], typer.Option("--query", "-q", help="entity_scoped_search: what to "
                                                                      "search for.")] = None,
    max_results: Annotated[Optional[int], typer.Option("--max-results", min=1, max=1000)] = None,
    max_nodes: Annotated[Optional[int], typer.Option("--max-nodes", min=1, max=1000)] = None,
    max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", min=1, max=10000)] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """One typed graph query (seed 003 §43) with its latency; past the kind's ceiling it returns what it has and
    says it was truncated."""
    from kenning.retrieve.graph_query import run_query

    args = _query_args(kind, target, lookup=lookup, depth=depth, edge_types=edge_type or None, card_tier=tier,
                       composite_id=composite, query=text, max_results=max_results, max_nodes=max_nodes,
                       max_tokens=max_tokens)
    now = _now(as_of)
    with open_vault(db, config, readonly=True) as vault, delivery_errors():
        res = run_query(vault.conn, vault.config, kind, now=now, **args)
    if as_json:
        print_json(res.as_dict())
        return
    _print_query(res)


def _query_args(kind: str, target: str | None, **opts: Any) -> dict[str, Any]:
    """The positional TARGET is the argument the kind is about."""
    slot = {"entity_lookup": "value", "entity_cards": "entity_ids", "procedure_bundle": "app_entity_id"}.get(
        kind, "entity_id")
    args = {k: v for k, v in opts.items() if v is not None}
    if target is not None:
        args[slot] = target
    if kind == "entity_lookup":
        args.setdefault("lookup", "exact_name")
    return args


def _print_query(res) -> None:
    for r in res.results:
        if res.query_kind == "knowledge_brief":
            out.print(r["text"], markup=False, highlight=False, soft_wrap=True)
            continue
        if "line" in r:
            text = r["line"]
        elif "title" in r:
            text = f"{(r['last_at'] or '')[:10]}  {r['title'] or '(untitled)'}  ({r['cited_messages']} cited)"
        else:
            rel = f"  ({r['relation_label']}{', depth 2' if r.get('depth') == 2 else ''})" if r.get("relation_label") \
                else ""
            role = f"[{r['role']}] " if r.get("role") else ""
            text = f"{role}{r['name']}  {r['kind']}  {r['confidence']:.2f}{rel}  {r['id'][:8]}"
            if r.get("conflict_flag"):
                text = f"[{r['conflict_flag']}] {text}"
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    if not res.results:
        out.print("no results", markup=False)
    note = f"; truncated: {res.truncation_reason}" if res.truncated else ""
    out.print(f"{res.query_kind}: {len(res.results)} result(s) in {res.latency_ms:.1f} ms{note}", markup=False,
              highlight=False)


def context_command(
    request: Annotated[str, typer.Argument(help="The request an assistant is about to answer.")],
    entity: Annotated[Optional[str], typer.Option("--entity", help="The work context (an entity id/name); default: "
                                                                   "the first entity the request names.")] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", min=0, max=100000,
                                                  help="Gate budget in tokens (default 500).")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="A session id: items this session was "
                                                                     "already given are not repeated.")] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """The context packet for a request (seed 003 §42A.1): entity lines within the budget, relevant directives,
    goals and obligations due soon, with [caution] / [distinguish] flags; its telemetry is stored."""
    from kenning.retrieve.context import build_context

    now = _now(as_of)
    with open_vault(db, config) as vault, delivery_errors():
        packet = build_context(vault.conn, vault.config, request, now=now, entity=entity, budget=budget,
                               session=session)
    if as_json:
        print_json(packet.as_dict())
        return
    for line in packet.lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if not packet.lines:
        out.print("(nothing new to add for this request)" if session else "(the knowledge store names nothing "
                  "this request is about)", markup=False)
    t = packet.telemetry
    share = ", ".join(f"{k} {v}" for k, v in t["source_token_share"].items()) or "none"
    out.print(f"— {t['tokens_used']}/{packet.budget} gate tokens ({share}); {t['packet_tokens']} in all; "
              f"candidates {t['total_candidates_before_filter']} → {t['total_candidates_after_filter']}; "
              f"hubs suppressed {t['hub_nodes_suppressed']}, generic refs {t['generic_refs_excluded']}, already given "
              f"{t['novelty_suppressed']}; {t['latency_ms']:.1f} ms"
              + (f"; truncated: {t['truncation_reason']}" if t["truncated"] else ""), markup=False, highlight=False)


def brief_command(
    node: Annotated[str, typer.Argument(help="The entity: id, id prefix, exact name or alias.")],
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """What Kenning knows about an entity in 200–300 tokens (seed 003 §41.4): related entities, concepts, goals,
    procedures, obligations, recent activity, confidence and what is stale."""
    from kenning.retrieve.brief import knowledge_brief

    now = _now(as_of)
    with open_vault(db, config, readonly=True) as vault, delivery_errors():
        brief = knowledge_brief(vault.conn, vault.config, node, now=now)
    if as_json:
        print_json(brief.as_dict())
        return
    out.print(brief.text, markup=False, highlight=False, soft_wrap=True)
    out.print(f"— {brief.tokens} tokens", markup=False)


def register(app: typer.Typer) -> None:
    app.command("query")(query_command)
    app.command("context")(context_command)
    app.command("brief")(brief_command)
