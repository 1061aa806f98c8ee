"""``kenning demo``: the main job on the bundled sample, end to end, every landed capability shown."""

from __future__ import annotations

import tempfile
from collections import Counter
from importlib import resources
from pathlib import Path

from rich.table import Table

from kenning.cli.common import console, ingest_progress, open_vault, out, user_errors

SAMPLE = "sample-chatgpt-export.zip"
DAMAGED = "sample-damaged-export.json"
AS_OF = "2024-12-31T00:00:00Z"
SAMPLE_WIKI = "wiki"
WHY_QUERY = "Acme OAuth refresh endpoint"


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
        _bad_input()
        st = vault.status()
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        if n:
            t.add_row(name, f"{n:,}")
    out.print(t)
    _show_entities(db, config)
    with open_vault(db, config) as vault, user_errors():
        demo_why(vault)


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
