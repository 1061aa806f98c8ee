"""`kenning queue`, `kenning mine` and `kenning mode`: the intake funnel's extraction queue and memory modes
(issue 18 parts 2–3; seed 003 §13.4, §20A, §23, §24, §38)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from kenning.cli.common import (ConfigOpt, DbOpt, JsonOpt, LlmOpt, console, fail, ingest_progress, llm_mode,
                                open_vault, out, print_json, user_errors)

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Freeze the run clock at this UTC time "
                                                "(deterministic runs).")]
mode_app = typer.Typer(help="Memory modes (§13.4): make a conversation incognito — never learned from, never in "
                            "context — show the rules, or clear one.", no_args_is_help=True)


def queue_state(conn: Any, config: Any, now: str | None = None, limit: int = 20) -> dict[str, Any]:
    """What `kenning queue` shows: counts by status, priority and depth, the next rows, today's budget and the
    funnel's decisions by reason."""
    from kenning.store import intake as isql

    decisions: dict[str, int] = {}
    for r in isql.decision_counts(conn):
        import orjson

        key = f"{r['decision']}:{'+'.join(orjson.loads(r['reason_codes']))}"
        decisions[key] = decisions.get(key, 0) + r["n"]
    by_status: dict[str, int] = {}
    for r in isql.queue_summary(conn):
        by_status[r["status"]] = by_status.get(r["status"], 0) + r["n"]
    return {"by_status": by_status, "groups": isql.queue_summary(conn),
            "next": isql.queue_rows(conn, "queued", limit), "budget_days": isql.budget_days(conn, 3),
            "decisions": dict(sorted(decisions.items()))}


def queue_command(
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    limit: Annotated[int, typer.Option(help="How many queued rows to list.")] = 20,
) -> None:
    """The extraction queue (§20A.3): rows by status (queued, running, audited, failed, stale_archived), priority
    (critical, normal, deferred) and depth, the next ones to run, the daily budget, and the funnel's decisions
    with their reason codes. `kenning mine` drains it."""
    with open_vault(db, config, readonly=True) as vault:
        st = queue_state(vault.conn, vault.config, limit=limit)
    if json_out:
        print_json(st)
        return
    t = Table(title="extraction queue", show_edge=False)
    for col in ("status", "priority", "depth", "rows"):
        t.add_column(col, justify="right" if col == "rows" else "left")
    for g in st["groups"]:
        t.add_row(g["status"], g["priority"], g["depth"], str(g["n"]))
    out.print(t if st["groups"] else "the extraction queue is empty")
    if st["next"]:
        n = Table(title="next to run", show_edge=False)
        for col in ("pending", "priority", "depth", "source", "retries"):
            n.add_column(col)
        for r in st["next"]:
            n.add_row(r["pending_id"][:11], r["priority"], r["depth"], r["source_ref"][:60],
                      f"{r['retries']}/{r['max_retries']}")
        out.print(n)
    if st["decisions"]:
        out.print("decisions: " + ", ".join(f"{k} {v}" for k, v in st["decisions"].items()))
    for b in st["budget_days"][:1]:
        out.print(f"budget {b['day']}: deep {b['deep_used']} (critical {b['critical_used']}), "
                  f"tokens {b['tokens_used']}, ${b['usd_used']:.2f}, deferred {b['deferred']}")


def mine_command(
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False, as_of: AsOfOpt = None,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Stop after this many extractions.")] = None,
    assess: Annotated[bool, typer.Option("--assess/--no-assess", help="Run the funnel over what is not assessed "
                                         "yet before draining.")] = True,
    llm: LlmOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Drain the extraction queue: recover crashed rows, then run every queued extraction (critical first) through
    the registered miners, audited with the knowledge commits each produced. Deferred deep work runs when the
    day's budget has room. `kenning ingest` does this by default."""
    from kenning.llm.client import mode_is_explicit
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    with open_vault(db, config) as vault, user_errors(), ingest_progress(not quiet and not json_out) as progress:
        mode = llm_mode(vault.config, llm)
        clock = Clock.from_option(as_of)
        results = []
        for name in (["intake"] if assess else []) + ["extract"]:
            results.append(run_stage(vault.conn, STAGES[name], vault.config, clock,
                                     inputs={"limit": limit} if name == "extract" else {},
                                     args={"limit": limit, "as_of": as_of, "llm": mode}, progress=progress,
                                     llm_mode=mode, llm_explicit=mode_is_explicit(vault.config, llm)))
    report = [{"stage": r.stage, "run_id": r.run_id, "counts": r.counts} for r in results]
    if json_out:
        print_json({"runs": report})
        return
    for r in results:
        line = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r.counts.items() if v)
        console.print(f"[bold green]{r.stage}[/]: {line or 'nothing to do'}")


# ---- kenning mode ----------------------------------------------------------------------------------------

def _resolve(vault: Any, ref: str) -> str:
    from kenning.store import intake as isql

    found = isql.find_conversations(vault.conn, ref, by_title=True)
    if not found:
        fail(f"no conversation {ref!r}: give its id, the export's conversation id or its exact title "
             f"(`kenning threads` lists the titles)")
    if len(found) > 1:
        fail(f"{ref!r} names {len(found)} conversations ({', '.join(f['conversation_id'][:12] for f in found[:5])}"
             f"…); give its id (or more of it)")
    return found[0]["conversation_id"]


def _run_mode(vault: Any, inputs: dict[str, Any], as_of: str | None) -> dict[str, Any]:
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import SIDE_STAGES

    return run_stage(vault.conn, SIDE_STAGES["intake-mode"], vault.config, Clock.from_option(as_of),
                     inputs=inputs, args={**{k: v for k, v in inputs.items()}, "as_of": as_of}).counts


@mode_app.command("incognito")
def mode_incognito(
    conversation: Annotated[str, typer.Argument(help="Conversation id (Kenning's, the export's, or a prefix) or its exact title.")],
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False, as_of: AsOfOpt = None,
) -> None:
    """Make a conversation incognito: it is never mined, and what was already learned only from it is removed
    from the knowledge graph now (through the single writer, so the event log records it)."""
    with open_vault(db, config) as vault, user_errors():
        cid = _resolve(vault, conversation)
        counts = _run_mode(vault, {"set": [("conversation", cid)]}, as_of)
    if json_out:
        print_json({"conversation_id": cid, **counts})
        return
    console.print(f"conversation {cid} is incognito; removed {counts.get('derived_rows_removed', 0)} derived "
                  f"row(s) (mentions, claims, threads, search …) and "
                  f"{counts.get('nodes_retracted', 0) + counts.get('nodes_deleted', 0)} derived "
                  f"node(s), cancelled {counts.get('extractions_cancelled', 0)} queued extraction(s)")


@mode_app.command("clear")
def mode_clear(
    conversation: Annotated[str, typer.Argument(help="Conversation (id or exact title) whose incognito rule to remove.")],
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False, as_of: AsOfOpt = None,
) -> None:
    """Remove a conversation's incognito rule (config rules stay; edit the config for those). Nothing of it was
    marked processed, so the next `kenning ingest` learns from the whole conversation as if it were new."""
    with open_vault(db, config) as vault, user_errors():
        cid = _resolve(vault, conversation)
        counts = _run_mode(vault, {"clear": [("conversation", cid)], "purge": False}, as_of)
    if json_out:
        print_json({"conversation_id": cid, **counts})
        return
    console.print(f"conversation {cid}: " + ("incognito rule cleared" if counts["rules_cleared"]
                                              else "had no incognito rule of its own"))


@mode_app.command("show")
def mode_show(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """The memory-mode rules (set with `kenning mode`, `kenning ingest --incognito`, or in the config's
    intake.incognito) and the conversations they make incognito."""
    from kenning.intake.modes import incognito_conversations
    from kenning.store import intake as isql

    with open_vault(db, config, readonly=True) as vault:
        rules = isql.mode_rules(vault.conn)
        cfg = vault.config.intake.incognito
        found = incognito_conversations(vault.conn, vault.config)
        titles = {c: t for c, _e, t in isql.conversation_titles(vault.conn) if c in found}
    data = {"rules": rules, "config": cfg.model_dump(),
            "incognito_conversations": [{"conversation_id": c, "title": titles.get(c), "basis": sorted(b)}
                                        for c, b in sorted(found.basis.items())]}
    if json_out:
        print_json(data)
        return
    if not rules and not data["incognito_conversations"]:
        out.print("no memory modes set: everything imported is learned from (normal mode)")
        return
    for r in rules:
        out.print(f"{r['mode']} {r['scope']} {r['scope_value']} (since {r['activated_at']})")
    for c in data["incognito_conversations"]:
        out.print(f"incognito: {c['title'] or 'untitled'} [{c['conversation_id'][:12]}] ({', '.join(c['basis'])})")
    out.print(f"incognito content is kept: {cfg.keep}")


def register(app: typer.Typer) -> None:
    app.command("queue")(queue_command)
    app.command("mine")(mine_command)
    app.add_typer(mode_app, name="mode")
