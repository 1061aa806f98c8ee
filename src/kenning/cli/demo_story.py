"""``kenning demo`` as a short story (issue 23 §4): what was imported, who and what matters, one belief with its
quote, one change of mind, one contradiction, one search, the picture it drew, what an assistant gets, and what to
try next — about a screen and a half. ``kenning demo --verbose`` is the full tour (``cli/demo.py``), every table."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from kenning.cli.common import console, ingest_progress, open_vault, out, user_errors
from kenning.cli.demo import (AS_OF, CHAT_WHY, DAMAGED, DEMO_QUERIES, SAMPLE, SAMPLE_TRANSCRIPT, assistant_packet,
                              sample_path, sample_wiki_path)

# One line each for capabilities that live in other packages; each returns None when its part is not installed
# or has nothing to say on the sample, so the story never shows an empty heading.
HEADLINES: list[Callable[[Any], str | None]] = []
# Modules whose import registers a headline (``@headline``), in the order the story tells them.
HEADLINE_MODULES = ("kenning.cli.demo_intake", "kenning.cli.demo_corpus", "kenning.cli.demo_forget")


def headline(fn: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    HEADLINES.append(fn)
    return fn


def say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _imported(vault) -> float:
    t0 = time.perf_counter()
    with ingest_progress(True) as progress:
        results = vault.ingest([sample_path()], as_of=AS_OF, progress=progress)
    took = time.perf_counter() - t0
    c = next(r for r in results if r.stage == "1").counts
    again = vault.ingest([sample_path()], as_of=AS_OF, stages="1")[0].counts
    say(f"Imported {c.get('conversations_new', 0)} conversations and {c.get('messages_new', 0)} messages from "
        f"{SAMPLE} (one person's chats over 18 months) in {took:.0f} s; importing it again changed nothing "
        f"({again.get('conversations_unchanged', 0)} unchanged).")
    with tempfile.TemporaryDirectory() as tmp:
        from kenning.api import Vault

        with Vault.open(Path(tmp) / "damaged.db") as v:
            d = v.ingest([sample_path(DAMAGED)], stages="1")[0].counts
    say(f"A damaged export: {d.get('conversations_new', 0)} good conversations imported, {d.get('rejected', 0)} "
        f"rejected with the record and the reason (`kenning rejects`), {d.get('repaired', 0)} repaired.")
    # the other bundled sources, quietly: a transcript between people (Sam, the owner's partner, and Anna; not the
    # owner's own voice, so no self_name) and a wiki with cited sources
    vault.ingest([sample_path(SAMPLE_TRANSCRIPT)], as_of=AS_OF)
    vault.ingest([sample_wiki_path()], as_of="2026-04-20T00:00:00Z", workspace="demo-wiki")
    return took


def _who_matters(vault) -> None:
    from kenning.store import entities as esql
    from kenning.store import knowledge_query as kq

    people = [p["canonical_name"] for p in kq.important_people(vault.conn, limit=4)]
    salient = esql.list_entities(vault.conn, limit=40)
    places = [e["canonical_name"] for e in salient if e["entity_type"] == "LOCATION"][:4]
    orgs = [e["canonical_name"] for e in salient if e["entity_type"] == "ORG"][:3]
    console.rule("[bold]Who and what matters")
    say(f"People: {', '.join(people) or '—'}.  Places: {', '.join(places) or '—'}.  "
        f"Organisations: {', '.join(orgs) or '—'}.")


def _quote_of(answer: dict) -> tuple[str, dict | None]:
    src = next((s for s in answer.get("supporting_sources") or [] if s.get("speaker_role") == "user"),
               next(iter(answer.get("supporting_sources") or []), None))
    return (src or {}).get("quote") or "", src


def _belief(vault) -> None:
    ans = vault.why(CHAT_WHY)["answers"]
    current = next((a for a in ans if a["status"] == "current" and a["matched"]), None)
    console.rule("[bold]What you believe, and why")
    if current:
        quote, src = _quote_of(current)
        mark = "✓ verified against the message" if src and src.get("verified_against_source") else "not verified"
        where = f"“{src.get('conversation_title')}”, {(src.get('message_date') or '')[:10]}" if src else ""
        say(f'$ kenning why "{CHAT_WHY}" → {current["statement"]} (said {current["occurrences"]} times)')
        if quote:
            say(f"  because you wrote “{quote}” in {where}  {mark}")


def _change_of_mind(tl: dict[str, Any]) -> None:
    """The first time a state you told Kenning about was replaced by another (stage 5's supersession, by month)."""
    for w in tl.get("windows") or []:
        for c in w["changes"]:
            if c["kind"] == "superseded":
                say(f"A change of mind: in {w['label']} “{c['from']}” gave way to “{c['to']}” — the old state is "
                    "kept as history, ended with its reason (`kenning history`).")
                return


def _contradiction(vault) -> None:
    from kenning.store import selfbeliefs as sql

    edges = [e for e in sql.list_edges(vault.conn, ["active"]) if e["conflict_type"] == "contradiction"]
    if not edges:
        return
    e = edges[0]
    names = {n["belief_id"]: n["statement"] for n in sql.nodes_by_ids(vault.conn, [e["node_a_id"],
                                                                                e["node_b_id"]]).values()}
    say(f"A contradiction in what you say about yourself: “{names.get(e['node_a_id'])}” vs "
        f"“{names.get(e['node_b_id'])}” (`kenning self conflicts`).")


def _search(vault) -> None:
    query = DEMO_QUERIES[0][0]
    console.rule("[bold]Search")
    say(f'$ kenning search "{query}"')
    for h in vault.search(query, k=2, now="2024-12-31").hits:
        say(f"  {h['rank']}. {(h['date'] or '')[:10]} {h['speaker'] or h['kind']}: {h['text'][:110]}")


def _picture(tl: dict[str, Any], db: Path) -> None:
    from kenning.graph.timeline import render_png

    if not tl.get("windows"):
        return
    png = db.parent / "timeline.png"
    try:
        render_png(tl, png)
    except ImportError:
        return
    changes = [(f"{c['from']} → {c['to']}" if c["kind"] == "superseded" else f"{c['from']} ended")
               for w in tl["windows"] for c in w["changes"]][:4]
    say(f"The picture it drew of you, month by month: {png}" + (f" (changes: {'; '.join(changes)})" if changes
                                                                 else ""))


def _assistant(vault) -> None:
    got = assistant_packet(vault)
    if got is None:
        return
    _person, request, packet = got
    console.rule("[bold]What an assistant gets")
    say(f'$ kenning context "{request}"  ({packet.telemetry["packet_tokens"]} tokens, no model)')
    # the person part (H4) says more than the gate's names: what is open with them, facts with their quotes
    person = [i["line"] for i in packet.sections.get("person", [])]
    for line in (packet.lines[:1] + person[:5] if person else packet.lines[:6]):
        say(f"  {line[:110]}")


def _more(vault) -> None:
    import importlib

    for name in HEADLINE_MODULES:
        importlib.import_module(name)
    lines = [text for fn in HEADLINES if (text := _safe(fn, vault))]
    if lines:
        console.rule("[bold]Also in your vault")
        for text in lines:
            say(f"• {text}")


def _safe(fn: Callable[[Any], str | None], vault) -> str | None:
    try:
        return fn(vault)
    except Exception as exc:  # a headline must never break the story; say what failed instead of hiding it
        return f"({fn.__name__}: {exc})"


@headline
def review_queue(vault) -> str | None:
    """Issue 20: mentions became evidence bundles; what was promoted, and what waits for a person's verdict."""
    page = vault.review_queue(page=1, page_size=1)
    total = page.get("total_items") or 0
    top = next(iter(page.get("items") or []), None)
    if not total:
        return None
    first = f"; first: {top.get('title') or top.get('summary') or top.get('primary_ref')}" if top else ""
    return f"Review queue: {total} item(s) await your verdict (`kenning review`){first}"


@headline
def graph_health(vault) -> str | None:
    """Issue 20: the graph's knowledge debt and what nightly upkeep would do (`kenning maintain --dry-run`)."""
    h = vault.health()
    d = h["graph_density"]
    return (f"Graph health: knowledge debt {h['knowledge_debt_score']:.0f}/100, {d['total_nodes']} nodes, "
            f"{d['total_edges']} edges (`kenning health`; `kenning maintain` folds duplicates, archives stale "
            "candidates and finds recurring patterns)")


@headline
def mined_knowledge(vault) -> str | None:
    """Issue 18: what the miners found — goals, obligations, procedures, standing rules, directives."""
    from kenning.intake.mining import views

    found = {cls: views.items(vault.conn, cls, AS_OF) for cls in views.CLASSES}
    if not any(found.values()):
        return None
    parts = [f"{len(v)} {cls if len(v) != 1 else cls.rstrip('s')}" for cls, v in found.items() if v]
    goal = next(iter(found["goals"]), None)
    example = f"; e.g. the goal “{goal['name']}”" if goal else ""
    return (f"From your chats: {', '.join(parts)}{example} (`kenning goals`, `kenning obligations --ics FILE`, "
            "`kenning directives`)")


def _try_next(db: Path) -> None:
    console.rule("[bold]Try next")
    for cmd, what in [
        (f'kenning why "where do I work?" --db {db}', "a belief, its quotes and what it replaced"),
        (f'kenning search "running" --db {db}', "hybrid search with the evidence chain"),
        (f"kenning self list --db {db}", "what you say about yourself"),
        (f"kenning nodes --db {db}", "the knowledge graph: people, goals, obligations, preferences"),
        (f"kenning serve mcp --db {db}", "hand it to an assistant over MCP, read-only"),
        (f"kenning demo --verbose --db {db.with_name(db.stem + '-full.db')}", "the full tour, every table"),
    ]:
        say(f"  {cmd:<58} {what}")


def run_story(db: Path | None, config: Path | None) -> None:
    console.rule("[bold]Kenning demo")
    with open_vault(db, config) as vault, user_errors():
        path = Path(vault.path)
        _imported(vault)
        _who_matters(vault)
        from kenning.graph.timeline import load_timeline

        timeline = load_timeline(vault.conn, None)   # your month-by-month profile: one read for two steps
        _belief(vault)
        _change_of_mind(timeline)
        _contradiction(vault)
        _search(vault)
        _picture(timeline, path)
        _assistant(vault)
        _more(vault)
    _try_next(path)
    from kenning.cli.demo_ui import demo_ui   # the last line: the one command that opens it in the browser

    demo_ui(path, config)

