"""``kenning demo``: the main job on the bundled sample, end to end, every landed capability shown."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kenning.cli.common import console, open_vault, out, user_errors

SAMPLE = "sample-chatgpt-export.zip"
SAMPLE_WIKI = "wiki"
WHY_QUERY = "Acme OAuth refresh endpoint"


def sample_path() -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(SAMPLE)))


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
    from rich.table import Table

    from kenning.cli.common import ingest_progress

    sample = sample_path()
    console.rule("[bold]Kenning demo")
    console.print(f"sample export: {sample.name}")
    with open_vault(db, config) as vault, user_errors():
        with ingest_progress(True) as progress:
            results = vault.ingest([sample], as_of="2024-12-31T00:00:00Z", progress=progress)
        for r in results:
            counts = {k: v for k, v in r.counts.items() if isinstance(v, int) and v}
            console.print(f"[green]stage {r.stage}[/]: {counts}")
        again = vault.ingest([sample], as_of="2024-12-31T00:00:00Z", stages="1")[0]
        console.print(f"re-import of the same export: {again.counts.get('conversations_unchanged', 0)} unchanged, "
                      f"{again.counts.get('conversations_new', 0)} new")
        demo_why(vault)
        st = vault.status()
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        if n:
            t.add_row(name, f"{n:,}")
    out.print(t)
