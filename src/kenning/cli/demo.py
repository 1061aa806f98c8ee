"""``kenning demo``: the main job on the bundled sample, end to end, every landed capability shown."""

from __future__ import annotations

import tempfile
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from rich.table import Table

from kenning.cli.common import console, ingest_progress, open_vault, out, user_errors

SAMPLE = "sample-chatgpt-export.zip"
DAMAGED = "sample-damaged-export.json"
AS_OF = "2024-12-31T00:00:00Z"
SAMPLE_WIKI = "wiki"
WHY_QUERY = "Acme OAuth refresh endpoint"
SAMPLE_TRANSCRIPT = "sample-transcript.json"
DEMO_QUERIES = [("When did Anna move to Lisbon?", None), ("what did my sister say about Leo", None),
                ("anything about running last winter", "2024-09-01")]


def sample_path(name: str = SAMPLE) -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(name)))


def _raw_layer(vault, results) -> None:
    from kenning.store import demo_queries as q

    raw = next(r for r in results if r.stage == "1")
    c = raw.counts
    console.print(f"[green]imported[/] {c.get('conversations_new', 0)} conversations, {c.get('messages_new', 0)} "
                  f"messages (every branch kept), {c.get('parts_new', 0)} content parts")
    months = q.conversations_per_month(vault.conn)
    if months:
        peak = max(n for _, n in months)
        t = Table(title="conversations per month", show_edge=False, show_header=False)
        for month, n in months:
            t.add_row(month, "█" * max(1, round(24 * n / peak)), str(n))
        out.print(t)
    kinds = q.content_kinds(vault.conn)
    out.print("content kinds: " + ", ".join(f"{k} {n}" for k, n in kinds))
    quality = dict(q.timestamp_quality(vault.conn))
    out.print("message times: " + ", ".join(f"{k} {v}" for k, v in quality.items()))
    branches = q.branchy_conversations(vault.conn, 3)
    for title, total, shown in branches:
        out.print(f"  [dim]'{title or '(untitled)'}': {total} messages, {shown} on the branch the export shows[/]")
    warn = Counter(e[3] for e in raw.events if e[2] == "WARN")
    if warn:
        out.print("import warnings: " + ", ".join(f"{k} ×{v}" for k, v in sorted(warn.items())))


def _bad_input() -> None:
    from kenning.api import Vault

    with tempfile.TemporaryDirectory() as tmp, Vault.open(Path(tmp) / "damaged.db") as v:
        raw = v.ingest([sample_path(DAMAGED)], stages="1")[0]
        rejects = v.rejects()
    c = raw.counts
    console.print(f"[green]a damaged export[/]: {c.get('conversations_new', 0)} good conversations imported, "
                  f"{c.get('rejected', 0)} rejected, {c.get('repaired', 0)} repaired — nothing else touched")
    for r in sorted(rejects, key=lambda r: r['record_index'] or 0):
        out.print(f"  {r['action']} record {r['record_index']}: {r['reason_code']} — {r['message'][:90]}")


def sample_wiki_path() -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(SAMPLE_WIKI)))


def demo_why(vault) -> None:
    """Ingest the bundled wiki workspace (seed 002's worked example) and answer one `why`."""
    from kenning.cli.beliefs import render_why

    console.rule("[bold]Why do I believe this? (seed 002)")
    wiki = sample_wiki_path()
    [r] = vault.ingest([wiki], as_of="2026-04-20T00:00:00Z", workspace="demo-wiki")
    c = r.counts
    console.print(f"sample wiki: {c['pages']} pages, {c['footnotes']} footnotes, {c['quote_anchors']} verbatim quote "
                  f"anchors, {c['beliefs']} beliefs ({c['beliefs_superseded']} superseded); verifier: no model, so "
                  f"{c.get('statement_support_not_checked', 0)} statement-support votes recorded as not_checked")
    console.print(f'$ kenning why "{WHY_QUERY}" --workspace demo-wiki', highlight=False)
    for line in render_why(vault.why(WHY_QUERY, workspace="demo-wiki")):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    demo_why_chats(vault)


CHAT_WHY = "where do I live?"
CHAT_WHY_UNTIL = ("2022-12-31", "2023-03-31")


def _compact_answers(ans: dict, top: int = 5) -> list[str]:
    """One line per answer (status, statement, how often said): the shape of `why` without its quotes."""
    from kenning.cli.beliefs import _said

    shown = [a for a in ans["answers"] if a["matched"] or a["status"] == "contested"][:top]
    if not shown:
        return ["  (nothing matches)"]
    return [f"  {a['status']:<10} {a['statement']}{_said(a)}" for a in shown]


def demo_why_chats(vault) -> None:
    """`why` on the chats: a question in plain words, a contested answer, and the same question in a time window."""
    console.print(f'$ kenning why "{CHAT_WHY}"   (your chats; quotes and ids left out here)', highlight=False)
    for line in _compact_answers(vault.why(CHAT_WHY)):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    for until in CHAT_WHY_UNTIL:
        console.print(f'$ kenning why "{CHAT_WHY}" --until {until}', highlight=False)
        for line in _compact_answers(vault.why(CHAT_WHY, until=until), top=3):
            out.print(line, markup=False, highlight=False, soft_wrap=True)


def search_step(vault) -> None:
    """Import the bundled transcript (Sam, the owner's partner, and his sister Anna) and ask a few questions (issue 9)."""
    from rich.table import Table

    transcript = sample_path(SAMPLE_TRANSCRIPT)
    console.rule("[bold]Search")
    # Not imported as the owner: the ChatGPT export's author is the owner and Sam is their partner; claiming Sam as
    # "me" gave the owner node Sam's names and Anna's family ties.
    r = vault.ingest([transcript], as_of="2024-12-31T00:00:00Z")
    imported = next((x.counts for x in r if x.stage == "1"), {})
    console.print(f"sample transcript: {transcript.name} (a chat between Sam and Anna): "
                  f"{imported.get('turns_imported', 0)} turns in {imported.get('sessions', 0)} sessions")
    for query, now in DEMO_QUERIES:
        res = vault.search(query, k=3, now=now or "2024-12-31")
        t = Table(title=f"kenning search {query!r}", show_edge=False, title_justify="left")
        for col in ("#", "date", "speaker", "text", "lanes"):
            t.add_column(col, overflow="fold")
        for h in res.hits:
            t.add_row(str(h["rank"]), (h["date"] or "")[:10], h["speaker"] or "", h["text"],
                      " ".join(f"{k}#{v['rank']}" for k, v in h["lanes"].items()))
        out.print(t)


def agent_search(db: Path | None, config: Path | None) -> None:
    """The same search an agent makes: the MCP `search` tool of `kenning serve mcp` (R61), served in-process."""
    import anyio
    from mcp import Client

    from kenning.serve.mcp_server import build_server

    with open_vault(db, config, readonly=True) as vault:
        path = vault.path
    query, now = DEMO_QUERIES[0][0], "2024-12-31"

    async def call() -> dict:
        async with Client(build_server(path, config)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            res = await client.call_tool("search", {"query": query, "k": 1, "now": now})
            return {"tools": tools, "hit": next(iter((res.structured_content or {}).get("hits") or []), None)}

    got = anyio.run(call)
    out.print(f"agents: `kenning serve mcp` offers {', '.join(got['tools'])}; "
              f'search {{"query": "{query}", "k": 1}} →', highlight=False, soft_wrap=True)
    h = got["hit"]
    if h:
        out.print(f"  {(h['date'] or '')[:10]} {h['speaker'] or h['kind']}: {h['text']}  "
                  f"(lanes {', '.join(h['lanes'])}; evidence steps {len(h['evidence'])})",
                  highlight=False, markup=False, soft_wrap=True)


def run_demo(db: Path | None, config: Path | None) -> None:
    console.rule("[bold]Kenning demo")
    console.print(f"sample export: {SAMPLE} (synthetic: one person's chats over 18 months)")
    with open_vault(db, config) as vault, user_errors():
        with ingest_progress(True) as progress:
            results = vault.ingest([sample_path()], as_of=AS_OF, progress=progress)
        _raw_layer(vault, results)
        again = vault.ingest([sample_path()], as_of=AS_OF, stages="1")[0]
        console.print(f"[green]re-import[/] of the same export: {again.counts.get('conversations_unchanged', 0)} "
                      f"unchanged, {again.counts.get('conversations_new', 0)} new — the vault did not change")
        show_knowledge(vault)
        _bad_input()
        search_step(vault)
        st = vault.status()
    agent_search(db, config)
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        if n:
            t.add_row(name, f"{n:,}")
    out.print(t)
    _show_entities(db, config)
    _show_facts(db, config)
    _show_time(db, config)
    _show_self_beliefs(db, config)
    with open_vault(db, config) as vault, user_errors():
        demo_why(vault)
    demo_delivery(db, config)
    from kenning.cli.demo_intake import demo_intake

    demo_intake(db, config)
    from kenning.cli.demo_review import demo_review

    demo_review(db, config)
    from kenning.cli.demo_corpus import demo_corpus

    demo_corpus(db, config)
    from kenning.cli.demo_forget import demo_forget

    demo_forget(db, config)
    from kenning.cli.demo_mining import demo_mining

    demo_mining(db, config)
    from kenning.cli.demo_maintain import demo_maintain

    demo_maintain(db, config)
    from kenning.cli.demo_ui import demo_ui

    demo_ui(db, config)


def assistant_packet(vault) -> tuple[dict, str, Any] | None:
    """The sample user's most important person, the question an assistant would ask before talking to them, and the
    context packet it gets (no model); None when the node store is empty. The short story and the tour both show it."""
    from kenning.retrieve.context import build_context
    from kenning.store import knowledge_query as kq

    top = kq.important_people(vault.conn, limit=1)
    if not top:
        return None
    person = top[0]
    request = f"What should I keep in mind before I talk to {person['canonical_name']}?"
    return person, request, build_context(vault.conn, vault.config, request, now=AS_OF, entity=person["id"],
                                          session="demo")


def demo_delivery(db: Path | None, config: Path | None) -> None:
    """Issue 19 in the demo: the context packet an assistant would get for the sample user's most important person,
    and that person's knowledge brief. Prints nothing when the node store is empty."""
    from kenning.retrieve.brief import knowledge_brief

    with open_vault(db, config) as vault:
        got = assistant_packet(vault)
        if got is None:
            return
        person, request, packet = got
        brief = knowledge_brief(vault.conn, vault.config, person["id"], now=AS_OF)
    console.rule("[bold]Knowledge for an assistant (issue 19)")
    console.print(f"your most important person: {person['canonical_name']} ({person['degree']} relations, "
                  f"{person['sources']} sources)", highlight=False)
    console.print(f'$ kenning context "{request}" --session demo', highlight=False, markup=False)
    for line in packet.lines:
        out.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    t = packet.telemetry
    out.print(f"  — {t['tokens_used']}/{packet.budget} gate tokens, {t['packet_tokens']} in all; candidates "
              f"{t['total_candidates_before_filter']} → {t['total_candidates_after_filter']}; "
              f"{t['latency_ms']:.1f} ms, no model", markup=False, highlight=False)
    console.print(f"$ kenning brief {person['canonical_name']!r}", highlight=False, markup=False)
    out.print(brief.text, markup=False, highlight=False, soft_wrap=True)
    out.print(f"  — {brief.tokens} tokens", markup=False, highlight=False)


def _quote(conn, node_id: str, width: int = 50) -> str:
    from kenning.store import knowledge as ksql

    q = next((p["verbatim_excerpt"] for p in ksql.get_provenance(conn, node_id) if p.get("verbatim_excerpt")), "")
    q = " ".join(q.split())
    return f"“{q[:width - 1]}…”" if len(q) > width else f"“{q}”"


def show_knowledge(vault, per_kind: int = 3) -> None:
    """Issue 17: what ingest published into the DOC72 node store — people, preferences, goals and obligations
    as nodes, each with its confidence (the evidence's Beta mean) and the quote it came from."""
    from kenning.store import knowledge as ksql

    conn = vault.conn
    counts = ksql.kind_counts(conn)
    console.print(f"[green]knowledge store[/] (kenning nodes): {sum(counts.values())} nodes — "
                  + ", ".join(f"{k} {n}" for k, n in counts.items())
                  + f"; {ksql.commit_count(conn)} commits; confidence = α/(α+β), `kenning node show` adds decay")

    def line(label: str, n: dict) -> None:
        conf = n["alpha"] / (n["alpha"] + n["beta"])
        out.print(f"  {label:<11} {n['canonical_name'][:40]} ({conf:.2f}) {_quote(conn, n['id'])}",
                  markup=False, highlight=False)

    def top(kind: str, keep=lambda n: True) -> list[dict]:
        found = [n for n in ksql.list_nodes(conn, kind=kind, limit=1000) if keep(n)]
        return sorted(found, key=lambda n: (-n["alpha"] / (n["alpha"] + n["beta"]), n["canonical_name"]))[:per_kind]

    for n in top("world_entity", lambda n: (n["payload"] or {}).get("entity_type") == "person"
                 and not (n["payload"] or {}).get("is_vault_owner")):
        line("person", n)
    for n in top("memory_directive"):
        line((n["payload"] or {}).get("memory_type", "preference"), n)
    recent = sorted(ksql.list_nodes(conn, kind="goal", limit=1000),
                    key=lambda n: (n["last_verified_at"] or "", n["id"]), reverse=True)
    for n in recent[:2]:
        line("goal", n)
    for n in top("obligation")[:1]:
        line("obligation", n)


def _show_entities(db: Path | None, config: Path | None, top: int = 10) -> None:
    """Stages 2A–3 in the demo: the most salient entities and the personal lexicon."""
    from rich.table import Table

    from kenning.store import entities as esql

    with open_vault(db, config, readonly=True) as vault:
        ents = esql.list_entities(vault.conn, limit=top)
        build = esql.latest_build(vault.conn)
        terms = esql.terms_of_build(vault.conn, build["build_id"]) if build else []
    if ents:
        t = Table(title=f"top {len(ents)} entities (kenning entities)", show_edge=False)
        for col in ("name", "type", "mentions", "conversations", "salience"):
            t.add_column(col)
        for e in ents:
            t.add_row(e["canonical_name"], e["entity_type"], str(e["mention_count"]), str(e["conversation_count"]),
                      f"{e['salience_score'] or 0:.2f}")
        out.print(t)
    if build:
        shown = ", ".join(f"{t['canonical_surface']} ({t['entity_type_hint']})" for t in terms[:15])
        out.print(f"personal lexicon (kenning lexicon): {len(terms)} terms of {build['candidates_total']} "
                  f"candidates{': ' + shown if shown else ''}", highlight=False, markup=False)


def _show_time(db: Path | None, config: Path | None) -> None:
    """Stages 5–6 in the demo: the succession of where you lived (valid time, and why each state ended), what
    Kenning believed on a given day, the open conflicts, and the month-by-month timeline drawn to a PNG."""
    from rich.markup import escape

    from kenning.cli.facts import bitemporal_filter, fact_view, statement
    from kenning.cli.temporal import _span, _why_text
    from kenning.detect.entities import self_entity_id
    from kenning.graph.timeline import load_timeline, render_png
    from kenning.sources.ids import IdFactory
    from kenning.store import assertions as asql
    from kenning.store import temporal as tsql

    console.rule("[bold]Time: what was true when, and what Kenning believed when")
    with open_vault(db, config, readonly=True) as vault:
        conn = vault.conn
        if not tsql.has_stage5(conn):
            return
        counts = tsql.status_counts(conn)
        console.print("[green]temporal reasoning[/] (stage 5): " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        me = [self_entity_id(IdFactory())]
        views = {r["assertion_id"]: fact_view(r) for r in asql.facts(conn, limit=None)}
        mine = [v for v in views.values() if v["subject_entity_id"] == me[0] and v["predicate"] == "lives_in"]
        temporal = tsql.temporal_of(conn, [v["assertion_id"] for v in mine])
        t = Table(title="$ kenning history lives_in — where you lived", show_edge=False, title_justify="left")
        for col in ("valid", "place", "status", "why", "said"):
            t.add_column(col)
        for v in sorted(mine, key=lambda v: (temporal[v["assertion_id"]]["valid_from_utc"] or "9", v["message_date"]
                                             or "")):
            tr = temporal[v["assertion_id"]]
            if tr["status"] == "ineligible" and (v["asserted_role"] != "user" or not tr["valid_from_utc"]):
                continue   # the full list: `kenning history lives_in`
            t.add_row(*(escape(str(x)) for x in (_span(tr), ("not " if v["polarity"] == "negative" else "")
                                                  + str(v["object"]), tr["status"], _why_text(conn, tr, views),
                                                  (v["message_date"] or "?")[:10])))
        out.print(t)
        for day in ("2023-01-15T00:00:00.000Z",):
            held = bitemporal_filter(conn, [dict(v) for v in mine], None, day)
            valid = bitemporal_filter(conn, [dict(v) for v in mine], day, None)
            out.print(f"$ kenning facts --about me --predicate lives_in --valid-at {day[:10]}: "
                      + (", ".join(sorted({str(v['object']) for v in valid})) or "nothing dated"), highlight=False)
            out.print(f"$ kenning facts --about me --predicate lives_in --believed-at {day[:10]}: "
                      + (", ".join(sorted(f"{v['object']} ({v['temporal']['status']})" for v in held))
                         or "nothing told yet"), highlight=False)
        groups = tsql.conflicts(conn)
        if groups:
            out.print(f"$ kenning conflicts: {len(groups)} open — " + "; ".join(
                f"{g['conflict_type']}: " + " vs ".join(statement(views[m]) for m in g["member_ids"][:3] if m in views)
                for g in groups[:3]), highlight=False, markup=False)
        tl = load_timeline(conn, None)
    png = (Path(db).parent if db else Path(".")) / "timeline.png"
    try:
        render_png(tl, png)
        drawn = f" — drawn to {png}"
    except ImportError:
        drawn = " (install kenning[plots] to draw it)"
    t = Table(title=f"$ kenning timeline --self --png {png.name}{drawn}", show_edge=False, title_justify="left")
    for col in ("month", "claims", "what mattered", "changes"):
        t.add_column(col)
    for w in tl["windows"]:
        top = ", ".join(str(m["label"]) for m in w["top_members"][:4])
        ch = "; ".join((f"{c['from']} → {c['to']}" if c["kind"] == "superseded" else f"{c['from']} ended")
                       for c in w["changes"])
        t.add_row(w["label"], str(w["assertion_count"]), escape(top), escape(ch))
    out.print(t)


def _show_facts(db: Path | None, config: Path | None, per_group: int = 4) -> None:
    """Stage 4 in the demo: what the author said about themselves — residence, work, family — with the quotes,
    plus a correction and an assistant claim with and without the author's word behind it."""
    from rich.markup import escape

    from kenning.cli.facts import fact_view, statement
    from kenning.detect.entities import self_entity_id
    from kenning.sources.ids import IdFactory
    from kenning.store import assertions as asql

    with open_vault(db, config, readonly=True) as vault:
        counts = asql.assertion_counts(vault.conn)
        me = [self_entity_id(IdFactory())]
        groups = [(title, [fact_view(r) for r in asql.facts(vault.conn, subject_ids=me, predicate_norms=cats,
                                                            role="user", include_questions=False)])
                  for title, cats in (("where you live", ["residence"]), ("work", ["work"]),
                                      ("family and friends", ["family", "partner", "friends", "colleagues"]),
                                      ("likes and habits", ["preference", "habit"]))]
        assistant = [fact_view(r) for r in asql.facts(vault.conn, subject_ids=me, role="assistant")]
        retractions = asql.retractions_in_order(vault.conn)
    console.print(f"[green]facts[/] (kenning facts): {counts['assertions']} claims, "
                  + ", ".join(f"{k} {v}" for k, v in counts["by_role"].items()) + "; "
                  + ", ".join(f"{k} {v}" for k, v in counts["by_modality"].items())
                  + f"; {counts['retractions']} retractions and corrections")
    for title, views in groups:
        if not views:
            continue
        t = Table(title=f"you — {title}", show_edge=False, show_header=False)
        for v in views[:per_group]:
            date = (v["message_date"] or "?")[:10]
            mark = " (corrected)" if v["supersession_type"] else (" (retracted)" if v["retracted_by"] else "")
            t.add_row(*(escape(x) for x in (date, statement(v) + mark, f"“{(v['quote'] or '')[:60]}”",
                                             f"{v['confidence']:.2f}")))
        out.print(t)
    for v in assistant[:3]:
        out.print(f"  assistant said: {statement(v)} — “{(v['quote'] or '')[:50]}” "
                  f"({'you confirmed it' if v['corroborated'] else 'never confirmed by you'}, "
                  f"confidence {v['confidence']:.2f})", highlight=False, markup=False)
    for r in retractions[:3]:
        target = "→ linked" if r["target_assertion_id"] else "→ ambiguous, left unlinked"
        out.print(f"  {r['retraction_type']}: “{r['surface_text']}” {target}", highlight=False, markup=False)


def _show_self_beliefs(db: Path | None, config: Path | None, top: int = 12) -> None:
    """Seed 000 in the demo: what the author says they are, value, like and feel (`kenning self list`), and where
    they contradict themselves (`kenning self conflicts`)."""
    from rich.markup import escape

    from kenning.store import selfbeliefs as sql

    with open_vault(db, config, readonly=True) as vault:
        counts = sql.table_counts(vault.conn)
        nodes = sql.surface(vault.conn, stream=None, status=None, limit=top, order="evidence")
        stats = sql.occurrence_stats(vault.conn, [n["belief_id"] for n in nodes])
        edges = sql.list_edges(vault.conn, ["active"])
        names = {n["belief_id"]: n["statement"] for n in sql.nodes_by_ids(
            vault.conn, [x for e in edges for x in (e["node_a_id"], e["node_b_id"])]).values()}
    console.rule("[bold]Self-beliefs (seed 000)")
    console.print(f"{counts['experiences']} self-statements found, {counts['belief_nodes']} beliefs about yourself "
                  f"from {counts['belief_occurrences']} occurrences, {counts['conflict_edges']} conflicts, "
                  f"{counts['tentative_links']} tentative links")
    if not nodes:
        return
    t = Table(title="$ kenning self list --sort evidence", show_edge=False, title_justify="left")
    for col in ("belief", "type", "stream", "said", "last said"):
        t.add_column(col)
    for n in nodes:
        st = stats.get(n["belief_id"]) or {}
        t.add_row(escape(n["statement"]), n["belief_type"].lower(), n["primary_stream"], f"{st.get('n', 0)}×",
                  (st.get("last_at") or "")[:10])
    out.print(t)
    for e in edges[:4]:
        out.print(f"  {e['conflict_type']}: “{names.get(e['node_a_id'])}” vs “{names.get(e['node_b_id'])}”",
                  markup=False, highlight=False)
