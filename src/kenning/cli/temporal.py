"""``kenning history``, ``kenning conflicts``, ``kenning timeline`` and ``kenning graph export`` (stages 5–6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Callable, Optional

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json

graph_app = typer.Typer(help="The materialized graph (stage 6): export it for Gephi, yEd or a notebook.",
                        no_args_is_help=True)

SELF_WORDS = {"me", "i", "self", "myself", "you"}


def _need_stage5(conn) -> None:
    from kenning.store import temporal as tsql

    if not tsql.has_stage5(conn):
        fail("no temporal reasoning yet (stage 5): run `kenning ingest` on your export")


def _why_text(conn, t: dict, views: dict[str, dict]) -> str:
    from kenning.cli.facts import statement
    from kenning.store import temporal as tsql

    s = t["status"]
    if s == "superseded" and t["temporal_superseded_by_assertion_id"]:
        n = views.get(t["temporal_superseded_by_assertion_id"])
        how = "corrected by" if t["valid_to_utc"] is None else "superseded by"
        if _overridden(t):
            how = "out of date: overridden by"

        return f"{how} “{statement(n) if n else t['temporal_superseded_by_assertion_id'][:8]}”"
    if s == "negated":
        ended = (f"ended by “{views[t['negated_by_assertion_id']]['quote']}”"
                 if t["negated_by_assertion_id"] and t["negated_by_assertion_id"] in views else "ended")
        n = views.get(t["temporal_superseded_by_assertion_id"] or "")
        if n is not None:    # T35: a newer state closed it before the negation's date
            return f"superseded by “{statement(n)}”; also {ended}"
        return ended
    if s == "retracted" and t["retracted_by_retraction_id"]:
        r = tsql.retraction(conn, t["retracted_by_retraction_id"])
        if r:
            return f"retracted by “{r['surface_text']}” ({(r['created_at_utc'] or '?')[:10]})"
    if s == "conflicted":
        return "in conflict (see `kenning conflicts`)"
    if s == "ineligible":
        raw = orjson.loads(t["raw_temporalize_json"] or "{}")
        reasons = raw.get("eligibility_reasons") or []
        if "NONEXPLICIT_TIME_SOURCE" in reasons and len(reasons) == 1:
            return "undated: never closes or is closed by other states"
        return "not used for time reasoning: " + ", ".join(r.lower().replace("_", " ") for r in reasons)
    return ""


def _overridden(t: dict) -> bool:
    """T45: a stale undated mention a later statement overrode."""
    raw = orjson.loads(t["raw_temporalize_json"] or "{}")
    return any(e.get("code") == "OVERRIDDEN_BY_LATER_STATEMENT" for e in raw.get("events") or [])


def _said_by_conversation(t: dict) -> str | None:
    """T41: the custom-instructions profile has no time of its own; it was said when its conversation began."""
    raw = orjson.loads(t["raw_temporalize_json"] or "{}")
    return t["asserted_at_utc"] if raw.get("transaction_time_source") == "CONVERSATION_TIME" else None


def _span(t: dict) -> str:
    if t["valid_from_utc"]:
        return f"{t['valid_from_utc'][:10]} → {(t['valid_to_utc'] or 'now')[:10]}"
    if t["valid_until_hint_utc"]:
        return f"? → {t['valid_until_hint_utc'][:10]} (until)"
    return "?"


def history_command(
    target: Annotated[str, typer.Argument(help="An entity (name, alias, 'me') or a predicate/category "
                                          "(lives_in, work).", show_default=False)],
    all_: Annotated[bool, typer.Option("--all", help="Every mention, not one row per state.")] = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """The succession of states for an entity or a predicate (Acme → Globex, Berlin → Paris): valid time, how often
    each was said, and why each state ended — superseded by what, retracted by which message, negated, or in
    conflict. --all lists every mention with what Kenning believed when."""
    from kenning.cli.entities import find_entities
    from kenning.detect.entities import self_entity_id
    from kenning.extract.registry import normalize_label
    from kenning.sources.ids import IdFactory
    from kenning.store import assertions as asql
    from kenning.store import temporal as tsql

    with open_vault(db, config, readonly=True) as vault:
        conn = vault.conn
        _need_stage5(conn)
        subject_ids = preds = None
        what = target
        norm = normalize_label(target)[1]
        if conn.execute("SELECT 1 FROM predicates WHERE canonical_label_norm=? OR category=? LIMIT 1",
                        (norm, norm)).fetchone():
            preds = [norm]
            what = f"predicate {norm}"
        elif target.strip().lower() in SELF_WORDS:
            subject_ids = [self_entity_id(IdFactory())]
            what = "you"
        else:
            found = find_entities(conn, target)
            if not found:
                fail(f"no entity or predicate called {target!r} (try `kenning entities` or `kenning facts`)")
            subject_ids = [found[0]["entity_id"]]
            what = found[0]["canonical_name"]
        from kenning.cli.facts import fact_view, statement

        views = {r["assertion_id"]: fact_view(r) for r in asql.facts(conn, subject_ids=subject_ids,
                                                                      predicate_norms=preds, limit=None)}
        temporal = tsql.temporal_of(conn, list(views))
        hist = tsql.history_rows(conn, list(views))
        cited = {x for t in temporal.values() for x in (t["temporal_superseded_by_assertion_id"],
                                                         t["negated_by_assertion_id"]) if x}
        all_views = {**views, **{r["assertion_id"]: fact_view(r) for r in asql.facts_by_ids(conn, cited - set(views))}}
        items = []
        for aid, v in views.items():
            t = temporal.get(aid)
            if t is None:
                continue
            items.append({"assertion_id": aid, "statement": statement(v), "subject": v["subject"],
                          "predicate": v["predicate"], "object": v["object"], "polarity": v["polarity"],
                          "quote": v["quote"], "said_at": v["message_date"] or _said_by_conversation(t),
                          "status": t["status"],
                          "valid_time_type": t["valid_time_type"], "valid_from_utc": t["valid_from_utc"],
                          "valid_to_utc": t["valid_to_utc"], "valid_until_hint_utc": t["valid_until_hint_utc"],
                          "believed_from_utc": t["asserted_at_utc"], "stopped_believing_utc": t["superseded_at_utc"],
                          "superseded_by": t["temporal_superseded_by_assertion_id"],
                          "retracted_by": t["retracted_by_retraction_id"], "negated_by": t["negated_by_assertion_id"],
                          "why": _why_text(conn, t, all_views), "overridden": _overridden(t),
                          "versions": [{k: h[k] for k in ("version", "tx_from_utc", "tx_to_utc", "status",
                                                          "valid_from_utc", "valid_to_utc", "reason", "cause_id")}
                                       for h in hist.get(aid, [])]})
        functional = tsql.functional_predicate_labels(conn)
    from kenning.temporal.succession import succession

    items.sort(key=lambda i: (i["subject"], i["predicate"], i["valid_from_utc"] or i["said_at"] or "",
                              i["said_at"] or "", i["assertion_id"]))
    states = succession(items, functional)
    if json_out:   # T46: both forms; "states" stays every mention, as before
        print_json({"target": what, "succession": states, "states": items})
        return
    if not items:
        out.print(f"no history for {what}")
        return
    if not all_:
        _print_succession(states, len(items))
        return
    _print_by_fact(items, ("valid", "state", "status", "why", "said", "quote"),
                   lambda i: (i["why"], (i["said_at"] or "?")[:10], f"“{(i['quote'] or '')[:60]}”"))


def _print_by_fact(items: list[dict], columns: tuple[str, ...], rest: Callable[[dict], tuple]) -> None:
    """One table per (subject, predicate): each row the span, the state ("not " + object for a negative one) and
    status, then ``rest(item)``'s cells."""
    groups: dict[tuple, list] = {}
    for i in items:
        groups.setdefault((i["subject"], i["predicate"]), []).append(i)
    for (subj, pred), rows in groups.items():
        t = Table(title=f"{subj} · {pred}", show_edge=False, title_justify="left")
        for col in columns:
            t.add_column(col)
        for i in rows:
            obj = i["object"] if i["object"] is not None else "(yes)"
            state = ("not " if i["polarity"] == "negative" else "") + str(obj)
            t.add_row(*(escape(x) for x in (_span(i), state, i["status"], *rest(i))))
        out.print(t)


def _said(s: dict) -> str:
    first, last = (s["first_said"] or "?")[:10], (s["last_said"] or "?")[:10]
    said = f"{s['mentions']}× {first}" + (f" … {last}" if last != first else "")
    if s["overridden_mentions"]:
        said += f" (+{s['overridden_mentions']} out of date)"
    return said


def _print_succession(states: list[dict], n_mentions: int) -> None:
    _print_by_fact(states, ("valid", "state", "status", "said", "why", "quote"),
                   lambda s: (_said(s), s["why"], f"“{(s['quote'] or '')[:50]}”"))
    if n_mentions > len(states):
        out.print(f"[dim]{n_mentions} mentions in {len(states)} states; --all lists every mention[/]", highlight=False)


def conflicts_command(
    conflict_type: Annotated[Optional[str], typer.Option("--type", help="Only this conflict type, e.g. "
                                                         "OBJECT_DISAGREEMENT.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Open contradictions: two cities on one date, a negation or retraction that could mean several things, states
    too close to tell apart. Each with its members and their exact words."""
    from kenning.cli.facts import statement
    from kenning.store import temporal as tsql

    with open_vault(db, config, readonly=True) as vault:
        _need_stage5(vault.conn)
        groups = tsql.conflicts(vault.conn, [conflict_type] if conflict_type else None)
        ids = sorted({m for g in groups for m in g["member_ids"]})
        views = _views(vault.conn, ids)
        temporal = tsql.temporal_of(vault.conn, ids)
    result = []
    for g in groups:
        members = []
        for m in g["member_ids"]:
            v, t = views.get(m), temporal.get(m, {})
            members.append({"assertion_id": m, "statement": statement(v) if v else m, "quote": v and v["quote"],
                            "said_at": v and v["message_date"], "status": t.get("status"),
                            "valid_from_utc": t.get("valid_from_utc"), "valid_to_utc": t.get("valid_to_utc"),
                            "confidence": v and v["confidence"], "conversation_title": v and v["conversation_title"]})
        result.append({"conflict_group_id": g["conflict_group_id"], "conflict_type": g["conflict_type"],
                       "detected_at_utc": g["detected_at_utc"], "details": orjson.loads(g["raw_conflict_json"] or "{}"),
                       "members": members})
    if json_out:
        print_json(result)
        return
    if not result:
        out.print("no conflicts")
        return
    for g in result:
        out.print(f"[bold]{g['conflict_type']}[/] {g['conflict_group_id'][:8]}", highlight=False)
        for m in g["members"]:
            when = f"{(m['valid_from_utc'] or '?')[:10]}" if m["valid_from_utc"] else "undated"
            out.print(f"  • {escape(m['statement'])}  [dim]({m['status']}, valid {when}, said "
                      f"{(m['said_at'] or '?')[:10]}, conf {m['confidence'] or 0:.2f})[/]", highlight=False)
            if m["quote"]:
                out.print(f"    “{escape(m['quote'][:90])}”", highlight=False)


def _views(conn, ids: list[str]) -> dict[str, dict]:
    from kenning.cli.facts import fact_view
    from kenning.store import assertions as asql

    return {r["assertion_id"]: fact_view(r) for r in asql.facts_by_ids(conn, ids)}


def timeline_command(
    entity: Annotated[Optional[str], typer.Argument(help="Whose timeline (default: you).", show_default=False)] = None,
    self_: Annotated[bool, typer.Option("--self", help="Your own timeline (the default).")] = False,
    png: Annotated[Optional[Path], typer.Option("--png", help="Draw it to this PNG file.")] = None,
    html: Annotated[Optional[Path], typer.Option("--html", help="Write a self-contained HTML page.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Month by month: what mattered (top people, places, interests, plans), and what changed — drawn as a picture
    with --png or --html."""
    from kenning.graph.timeline import load_timeline, render_html, render_png

    if entity and self_:
        fail("give an entity or --self, not both")
    with open_vault(db, config, readonly=True) as vault:
        _need_stage5(vault.conn)
        try:
            tl = load_timeline(vault.conn, None if (self_ or not entity or entity.lower() in SELF_WORDS) else entity,
                               vault.config)
        except LookupError as e:
            fail(str(e))
    if png:
        try:
            render_png(tl, png)
        except ImportError:
            fail("drawing needs matplotlib: pip install 'kenning[plots]'")
    if html:
        try:
            render_html(tl, html)
        except ImportError:
            fail("drawing needs matplotlib: pip install 'kenning[plots]'")
    if json_out:
        print_json(tl)
        return
    if not tl["windows"]:
        out.print(f"no timeline for {tl['name']} yet")
        return
    t = Table(title=f"{tl['name']}: what mattered, month by month", show_edge=False, title_justify="left")
    for col in ("month", "claims", "top", "changes"):
        t.add_column(col)
    for w in tl["windows"]:
        top = ", ".join(f"{m['label']} ({m['category_key']})" for m in w["top_members"][:5])
        ch = "; ".join(_change_text(c) for c in w["changes"])
        t.add_row(w["label"], str(w["assertion_count"]), escape(top), escape(ch))
    out.print(t)
    for path in (png, html):
        if path:
            out.print(f"wrote {path}", highlight=False)


def _change_text(c: dict) -> str:
    if c["kind"] == "superseded":
        return f"{c['predicate']}: {c['from']} → {c['to']}"
    return f"{c['predicate']}: {c['from']} ended"


@graph_app.command("export")
def graph_export(
    fmt: Annotated[str, typer.Option("--format", "-f", help="json | graphml | csv")] = "json",
    output: Annotated[Optional[Path], typer.Option("--out", "-o", help="File (json, graphml) or folder (csv); "
                                                   "default: stdout for json/graphml, ./graph-csv for csv.")] = None,
    node_types: Annotated[Optional[str], typer.Option("--nodes", help="Only these node types, comma-separated.")]
    = None,
    db: DbOpt = None, config: ConfigOpt = None,
) -> None:
    """Export graph_nodes and graph_edges: JSON (one document), GraphML (Gephi, yEd), or CSV (nodes.csv and
    edges.csv for a notebook)."""
    from kenning.graph.export import export_csv, export_graphml, export_json
    from kenning.store import graph as gsql

    if fmt not in ("json", "graphml", "csv"):
        fail("--format must be json, graphml or csv")
    types = [t.strip() for t in node_types.split(",")] if node_types else None
    with open_vault(db, config, readonly=True) as vault:
        nodes = gsql.all_nodes(vault.conn, types)
        if not nodes:
            fail("the graph is empty: run `kenning ingest` (stage 6 builds it)")
        keep = {n["node_id"] for n in nodes}
        edges = [e for e in gsql.all_edges(vault.conn) if e["src_node_id"] in keep and e["dst_node_id"] in keep]
    if fmt == "csv":
        folder = output or Path("graph-csv")
        paths = export_csv(nodes, edges, folder)
        out.print(f"wrote {len(nodes)} nodes and {len(edges)} edges to {', '.join(str(p) for p in paths)}",
                  highlight=False)
        return
    text = export_json(nodes, edges) if fmt == "json" else export_graphml(nodes, edges)
    if output:
        from kenning.privatefs import write_private_text

        write_private_text(output, text)
        out.print(f"wrote {len(nodes)} nodes and {len(edges)} edges to {output}", highlight=False)
    else:
        import sys

        sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    app.command("history")(history_command)
    app.command("conflicts")(conflicts_command)
    app.command("timeline")(timeline_command)
    app.add_typer(graph_app, name="graph")

