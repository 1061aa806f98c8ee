"""DOC72 knowledge-store commands: nodes, node show/add/confirm/reject/correct, edge add/end, commits, rollback,
graph rebuild/export-log. Every write goes through the single writer and is a recorded commit."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated, Any, Iterator, Optional

import orjson
import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, console, fail, open_vault, out, print_json

node_app = typer.Typer(help="One DOC72 knowledge node: show it, add one, confirm / reject / correct it.",
                       no_args_is_help=True)
edge_app = typer.Typer(help="Edges between knowledge nodes (governed relation vocabulary).", no_args_is_help=True)

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (ISO-8601) for this command.")]


@contextlib.contextmanager
def knowledge_errors() -> Iterator[None]:
    """Refused writes and bad input: one line naming the field/value and the reason, exit code 2."""
    from pydantic import ValidationError

    from kenning.knowledge.contracts import PayloadError
    from kenning.knowledge.errors import KnowledgeError
    from kenning.knowledge.kinds import UnknownKind
    from kenning.knowledge.relations import RelationError

    try:
        yield
    except (KnowledgeError, PayloadError, RelationError, UnknownKind) as e:
        fail(str(e), code=2)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ()))
        fail(f"{loc}: {err.get('msg')} (got {err.get('input')!r})", code=2)


def _clock(as_of: str | None):
    from kenning.cli.common import user_errors
    from kenning.pipeline.clock import Clock

    with user_errors():
        return Clock.from_option(as_of)


def _writer(vault, as_of: str | None):
    from kenning.knowledge.writer import KnowledgeWriter

    return KnowledgeWriter(vault.conn, vault.config, clock=_clock(as_of))


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}"


def _report(result, as_json: bool, what: str) -> None:
    if as_json:
        print_json(result.as_dict())
        return
    for w in result.warnings:
        console.print(f"[yellow]warning:[/] {w}")
    if result.replayed:
        out.print(f"{what}: already done by commit {result.commit_id} (idempotency key replayed); nothing changed")
    elif not result.created:
        out.print(f"{what}: nothing to change")
    else:
        out.print(f"{what}: commit {result.commit_id} ({result.mutations} change(s))")


# ---- reads ---------------------------------------------------------------------------------------------------

def nodes_command(
    kind: Annotated[Optional[str], typer.Option("--kind", help="Only this node kind (world_entity, goal, …).")] = None,
    lifecycle: Annotated[Optional[str], typer.Option("--lifecycle", help="Only this lifecycle state.")] = None,
    include_inactive: Annotated[bool, typer.Option("--all", help="Include archived / rolled-back nodes.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10000)] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0)] = 0,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """List the DOC72 knowledge nodes: kind, name, confidence (decayed to now), lifecycle."""
    from kenning.knowledge.kinds import check_kind
    from kenning.knowledge.read import node_rows

    with knowledge_errors():
        if kind:
            check_kind(kind)
    with open_vault(db, config, readonly=True) as vault:
        data = node_rows(vault.conn, vault.config, now=_clock(as_of).now(), kind=kind, lifecycle=lifecycle,
                         include_inactive=include_inactive, limit=limit, offset=offset)
    if as_json:
        print_json(data)
        return
    if not data["nodes"]:
        out.print("no knowledge nodes" + (" of that kind" if kind else "") + " yet (run `kenning ingest`)")
        return
    t = Table(show_lines=False, pad_edge=False)
    for col in ("id", "kind", "name", "conf", "α", "β", "lifecycle"):
        t.add_column(col, overflow="fold", no_wrap=col in ("id", "conf", "α", "β"))
    for n in data["nodes"]:
        flag = {"distinguish": " [distinguish]", "caution": " [caution]"}.get(n.get("conflict_flag") or "", "")
        t.add_row(n["id"][:8], n["node_kind"], n["canonical_name"], _fmt(n["confidence"]) + flag, _fmt(n["alpha"]),
                  _fmt(n["beta"]), n["lifecycle_state"] + (f"/{n['lifecycle_substate']}"
                                                           if n.get("lifecycle_substate") else ""))
    out.print(t)
    if data["total"] > data["shown"]:
        out.print(f"showing {data['shown']} of {data['total']} (--limit / --offset for more)")


@node_app.command("show")
def node_show(
    node: Annotated[str, typer.Argument(help="Node id (or its first 8+ characters), exact name, or alias.")],
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """One node: payload, α/β and the confidence breakdown, staleness, lifecycle, aliases, current and ended edges,
    the provenance chain with its quotes (checked against the raw messages now), experience, recent commits."""
    from kenning.knowledge import said
    from kenning.knowledge.read import node_view

    with open_vault(db, config, readonly=True) as vault, knowledge_errors():
        view = node_view(vault.conn, vault.config, node, now=_clock(as_of).now())
        view["said"] = said.reading(vault.conn, vault.config, view, _clock(as_of).now(), view["provenance"])
    if as_json:
        print_json(view)
        return
    _print_node(view)


def _print_node(v: dict[str, Any]) -> None:
    from kenning.knowledge import said

    b = v["confidence_breakdown"]
    out.print(f"[bold]{v['canonical_name']}[/]  ({v['node_kind']}, {v['id']})")
    out.print(f"lifecycle {v['lifecycle_state']}{'/' + v['lifecycle_substate'] if v.get('lifecycle_substate') else ''}"
              f" · staleness {v['staleness_state']} · {'active' if v['is_active'] else 'inactive'}"
              f" · tier {v['sparsity_tier']}")
    caps = f", caps {', '.join(b['caps_applied'])}" if b.get("caps_applied") else ""
    out.print(f"confidence {b['confidence']:.3f} = Beta mean {b['beta_mean']:.3f} (α {b['alpha']:.2f}, "
              f"β {b['beta']:.2f}) × decay {b['decay']:.3f} ({b['age_days']:.0f} days, half-life "
              f"{b['half_life_days'] or '—'}){caps}; conflict {b['conflict_score']:.2f}"
              + (f" [{b['flag']}]" if b.get("flag") else ""))
    if v.get("said", {}).get("last_said"):
        out.print(f"last said {v['said']['last_said']} ({said.ago(v['said']['days_since_said'])}): a low value now "
                  "is age since then, not doubt (H3)")
    payload = v.get("payload") or {}
    if payload:
        out.print("payload: " + orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()[:800])
    if v["aliases"]:
        out.print("aliases: " + ", ".join(a["normalized_alias"] for a in v["aliases"]))
    for label, current in (("edges", True), ("ended edges", False)):
        es = [e for e in v["edges"] if e["current"] == current]
        if es:
            out.print(f"{label}:")
            for e in es[:30]:
                arrow = "→" if e["direction"] == "out" else "←"
                end = f" until {e['end_date'][:10]} ({(e.get('payload') or {}).get('end_reason', '')})" \
                    if e["end_date"] else ""
                out.print(f"  {arrow} {e['relation_type']} {e['other_name']} (from {e['start_date'][:10]}{end}, "
                          f"conf {e['confidence']:.2f})")
    if v["provenance"]:
        out.print("provenance:")
        for p in v["provenance"][-10:]:
            mark = {"verified": "✓", "mismatch": "✗", "source_unavailable": "?"}.get(p["verification"], "·")
            quote = f' "{p["verbatim_excerpt"]}"' if p.get("verbatim_excerpt") else ""
            why = f" — {p['correction_reason']}" if p.get("correction_reason") else ""
            out.print(f"  {mark} {p['created_at'][:10]} {p['entry_type']}{quote}{why}")
        if len(v["provenance"]) > 10:
            out.print(f"  … {len(v['provenance']) - 10} earlier entries (--json for all)")
    if v.get("experience"):
        x = v["experience"]
        out.print(f"experience: used {x['total_usage_count']}× ({x['total_success_count']} ok, "
                  f"{x['total_failure_count']} failed), trend {x['overall_trend']}")
    if v["commits"]:
        out.print("commits:")
        for c in v["commits"][:5]:
            out.print(f"  {c['commit_id'][:8]} {c['timestamp'][:19]} {c['kind']:<8} {c['change_summary'][:90]}")


def commits_command(
    node: Annotated[Optional[str], typer.Option("--node", help="Only commits touching this node (id/name).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10000)] = 30,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """The knowledge store's history (§37): every commit, newest first, with what it changed."""
    from kenning.knowledge.read import resolve_node
    from kenning.store import knowledge as ksql

    with open_vault(db, config, readonly=True) as vault, knowledge_errors():
        node_id = resolve_node(vault.conn, node)["id"] if node else None
        commits = ksql.list_commits(vault.conn, node_id=node_id, limit=limit)
        rolled = ksql.rolled_back_ids(vault.conn)
        for c in commits:
            c["rolled_back"] = c["commit_id"] in rolled
            if as_json:
                c["mutations"] = ksql.get_mutations(vault.conn, c["commit_id"])
        total = ksql.commit_count(vault.conn)
    if as_json:
        print_json({"commits": commits, "total": total})
        return
    if not commits:
        out.print("no commits yet")
        return
    t = Table(pad_edge=False)
    for col in ("commit", "time", "kind", "event", "summary"):
        t.add_column(col, overflow="fold", no_wrap=col in ("commit", "time"))
    for c in commits:
        t.add_row(c["commit_id"][:8], c["timestamp"][:19], c["kind"] + (" (rolled back)" if c["rolled_back"] else ""),
                  c["source_event"], c["change_summary"])
    out.print(t)


# ---- writes --------------------------------------------------------------------------------------------------

def _read_payload(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    text = sys.stdin.read() if path == "-" else None
    if text is None:
        p = Path(path)
        if not p.exists():
            fail(f"payload file {path} does not exist", code=2)
        text = p.read_text(encoding="utf-8")
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        fail(f"payload {path}: not JSON ({e})", code=2)
    if not isinstance(data, dict):
        fail(f"payload {path}: must be a JSON object, got {type(data).__name__}", code=2)
    return data


@node_app.command("add")
def node_add(
    kind: Annotated[str, typer.Option("--kind", help="One of the 11 node kinds.")],
    name: Annotated[str, typer.Option("--name", help="The node's canonical name.")],
    payload: Annotated[Optional[str], typer.Option("--payload", help="Payload JSON file, or - for stdin.")] = None,
    alias: Annotated[Optional[list[str]], typer.Option("--alias", help="Another name (repeatable).")] = None,
    idempotency_key: Annotated[Optional[str], typer.Option("--idempotency-key")] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Add a node you state yourself (taught_by_user evidence). The payload is checked against its kind's contract;
    an invalid one is refused (exit 2) naming the field and the reason, and nothing is written."""
    from kenning.knowledge.ops import AliasIn, CreateNode, KnowledgeWrite, ProvenanceIn

    data = _read_payload(payload)
    with open_vault(db, config) as vault, knowledge_errors():
        w = _writer(vault, as_of)
        req = KnowledgeWrite(source_event="user:node_add", change_summary=f"added {kind} {name!r}",
                             idempotency_key=idempotency_key,
                             ops=[CreateNode(node_kind=kind, canonical_name=name, payload=data,
                                             aliases=tuple(AliasIn(alias=a) for a in alias or ()),
                                             lifecycle_state="confirmed", evidence=("taught_by_user",),
                                             user_confirmed_literals=True,
                                             provenance=(ProvenanceIn(entry_type="user_stated",
                                                                      source_description="added by the user",
                                                                      source_ref="user:node_add",
                                                                      authority_type="personal",
                                                                      authorial_voice="self", still_current="yes"),))])
        res = w.write(req)
    _report(res, as_json, f"added {kind} {name!r} as {res.node_ids[0] if res.node_ids else '—'}")


def _feedback(action: str, node: str, reason: str | None, name: str | None, sets: list[str] | None,
              expected: str | None, as_of: str | None, db, config, as_json: bool) -> None:
    from kenning.knowledge.ops import Feedback, KnowledgeWrite
    from kenning.knowledge.read import resolve_node

    payload_set = None
    if sets:
        payload_set = {}
        for s in sets:
            if "=" not in s:
                fail(f"--set {s!r}: use key=value (value may be JSON)", code=2)
            k, v = s.split("=", 1)
            try:
                payload_set[k.strip()] = orjson.loads(v)
            except orjson.JSONDecodeError:
                payload_set[k.strip()] = v
    with open_vault(db, config) as vault, knowledge_errors():
        target = resolve_node(vault.conn, node)
        req = KnowledgeWrite(source_event=f"user:{action}", change_summary=f"{action} {target['canonical_name']!r}"
                             + (f": {reason}" if reason else ""), expected_updated_at=expected,
                             ops=[Feedback(id=target["id"], action=action, reason=reason, canonical_name=name,
                                           payload_set=payload_set)])
        res = _writer(vault, as_of).write(req)
    _report(res, as_json, f"{action} {target['canonical_name']!r}")


ReasonOpt = Annotated[Optional[str], typer.Option("--reason", help="Why (kept in the node's provenance).")]
ExpectedOpt = Annotated[Optional[str], typer.Option(
    "--expected-updated-at", help="Refuse if the node changed since this updated_at (optimistic concurrency).")]
NodeArg = Annotated[str, typer.Argument(help="Node id, id prefix, exact name or alias.")]


@node_app.command("confirm")
def node_confirm(node: NodeArg, reason: ReasonOpt = None, expected: ExpectedOpt = None, as_of: AsOfOpt = None,
                 db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Confirm a node: confirmed_by_user (1.00) to α, lifecycle confirmed, verified now."""
    _feedback("confirm", node, reason, None, None, expected, as_of, db, config, as_json)


@node_app.command("reject")
def node_reject(node: NodeArg, reason: ReasonOpt = None, expected: ExpectedOpt = None, as_of: AsOfOpt = None,
                db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Reject a node: 1.00 to β, lifecycle retracted (kept with its history; `kenning rollback` undoes it)."""
    _feedback("reject", node, reason, None, None, expected, as_of, db, config, as_json)


@node_app.command("correct")
def node_correct(
    node: NodeArg, reason: ReasonOpt = None,
    name: Annotated[Optional[str], typer.Option("--name", help="The corrected name.")] = None,
    sets: Annotated[Optional[list[str]], typer.Option("--set", help="payload key=value (JSON value; repeatable).")]
    = None,
    expected: ExpectedOpt = None, as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Correct a node's name or payload fields (taught_by_user evidence; the reason goes in its provenance)."""
    _feedback("correct", node, reason, name, sets, expected, as_of, db, config, as_json)


@edge_app.command("add")
def edge_add(
    source: Annotated[str, typer.Argument(help="Source node (id, name or alias).")],
    relation: Annotated[str, typer.Argument(help="Relation type: canonical (§7/§7.0A) or domain_*/learned_*.")],
    target: Annotated[str, typer.Argument(help="Target node (id, name or alias).")],
    start: Annotated[Optional[str], typer.Option("--start", help="When it began to hold (ISO-8601).")] = None,
    confidence: Annotated[float, typer.Option("--confidence", min=0.0, max=1.0)] = 0.8,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Add an edge you state yourself. An unknown relation type is refused with the closest valid names."""
    from kenning.knowledge.ops import CreateEdge, KnowledgeWrite
    from kenning.knowledge.read import resolve_node

    with open_vault(db, config) as vault, knowledge_errors():
        s, t = resolve_node(vault.conn, source), resolve_node(vault.conn, target)
        req = KnowledgeWrite(source_event="user:edge_add",
                             change_summary=f"{s['canonical_name']} {relation} {t['canonical_name']}",
                             ops=[CreateEdge(source_id=s["id"], relation_type=relation, target_id=t["id"],
                                             start_date=_iso(start), confidence=confidence,
                                             payload={"learned_by": "user"})])
        res = _writer(vault, as_of).write(req)
    _report(res, as_json, f"edge {s['canonical_name']} -{relation}-> {t['canonical_name']}")


@edge_app.command("end")
def edge_end(
    source: Annotated[str, typer.Argument()], relation: Annotated[str, typer.Argument()],
    target: Annotated[str, typer.Argument()],
    reason: Annotated[str, typer.Option("--reason", help="Why it stopped holding.")],
    end: Annotated[Optional[str], typer.Option("--end", help="When it stopped (ISO-8601; default now).")] = None,
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """End a current edge: it stays as history with its end date and reason."""
    from kenning.knowledge.ops import EndEdge, KnowledgeWrite
    from kenning.knowledge.read import resolve_node

    with open_vault(db, config) as vault, knowledge_errors():
        s, t = resolve_node(vault.conn, source), resolve_node(vault.conn, target)
        req = KnowledgeWrite(source_event="user:edge_end", change_summary=f"ended {s['canonical_name']} {relation} "
                             f"{t['canonical_name']}: {reason}",
                             ops=[EndEdge(source_id=s["id"], relation_type=relation, target_id=t["id"],
                                          end_date=_iso(end), reason=reason)])
        res = _writer(vault, as_of).write(req)
    _report(res, as_json, "edge ended")


def _iso(value: str | None) -> str | None:
    if value is None:
        return None
    from kenning.sources.timestamps import normalize_to_utc

    ts = normalize_to_utc(value)
    if ts is None:
        fail(f"{value!r} is not a date/time; use ISO-8601 like 2024-05-01 or 2024-05-01T12:00:00Z", code=2)
    return ts


def rollback_command(
    commit: Annotated[str, typer.Argument(help="The commit id (or its first 8+ characters) to undo.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the rollback commit).")] = "undone by the user",
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Undo a commit with a compensating commit (history is never rewritten; roll the rollback back to redo)."""
    with open_vault(db, config) as vault, knowledge_errors():
        res = _writer(vault, as_of).rollback(commit, reason=reason)
    _report(res, as_json, f"rolled back {commit}")


def graph_rebuild(
    from_log: Annotated[bool, typer.Option("--from-log", help="Replay graph_events.jsonl (required).")] = False,
    log: Annotated[Optional[Path], typer.Option("--log", help="The log file (default: beside the vault).")] = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Rebuild the DOC72 node store from its event log: empties nodes/edges/commits and replays every commit in
    one transaction (the same content, deterministically). The log must be complete: export it first."""
    from kenning.knowledge.eventlog import export_pending, log_path, rebuild

    if not from_log:
        fail("say where to rebuild from: --from-log", code=2)
    with open_vault(db, config) as vault, knowledge_errors():
        export_pending(vault.conn, vault.config)
        path = log or log_path(vault.conn, vault.config)
        if path is None:
            fail("this vault has no event log (knowledge.store.event_log is off); pass --log FILE", code=2)
        counts = rebuild(vault.conn, path)
    if as_json:
        print_json({"log": str(path), **counts})
    else:
        out.print(f"rebuilt the knowledge store from {path}: {counts['commits']} commits, "
                  f"{counts['mutations']} mutations")


def graph_export_log(db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Append the commits not yet in graph_events.jsonl (normally automatic after every write)."""
    from kenning.knowledge.eventlog import export_to, log_path

    with open_vault(db, config) as vault, knowledge_errors():
        path = log_path(vault.conn, vault.config)
        if path is None:
            fail("this vault has no event log (knowledge.store.event_log is off)", code=2)
        try:
            n = export_to(vault.conn, path)
        except OSError as e:
            fail(f"cannot write {path}: {e.strerror}")
    if as_json:
        print_json({"log": str(path), "exported": n})
    else:
        out.print(f"{path}: {n} commit(s) appended")


def register(app: typer.Typer) -> None:
    from kenning.cli.temporal import graph_app

    app.command("nodes")(nodes_command)
    app.add_typer(node_app, name="node")
    app.add_typer(edge_app, name="edge")
    app.command("commits")(commits_command)
    app.command("rollback")(rollback_command)
    graph_app.command("rebuild")(graph_rebuild)
    graph_app.command("export-log")(graph_export_log)
