"""``kenning demo``: the main job on the bundled sample, end to end, every landed capability shown."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kenning.cli.common import console, open_vault, out, user_errors

SAMPLE = "sample-chatgpt-export.zip"
SAMPLE_TRANSCRIPT = "sample-transcript.json"
DEMO_QUERIES = [("When did Anna move to Lisbon?", None), ("what did my sister say about Leo", None),
                ("anything about running last winter", "2024-09-01")]


def sample_path(name: str = SAMPLE) -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(name)))


def search_step(vault) -> None:
    """Import the bundled transcript as Sam and ask a few questions (issue 9)."""
    from rich.table import Table

    transcript = sample_path(SAMPLE_TRANSCRIPT)
    console.rule("[bold]Search")
    r = vault.ingest([transcript], as_of="2024-12-31T00:00:00Z", self_name="Sam")
    imported = next((x.counts for x in r if x.stage == "1"), {})
    console.print(f"sample transcript: {transcript.name} (Sam is the vault owner): "
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


def run_demo(db: Path | None, config: Path | None) -> None:
    from rich.table import Table

    from kenning.cli.common import ingest_progress

    sample = sample_path()
    console.rule("[bold]Kenning demo")
    console.print(f"sample export: {sample.name}")
    with open_vault(db, config) as vault, user_errors():
        if sample.is_file():
            with ingest_progress(True) as progress:
                results = vault.ingest([sample], as_of="2024-12-31T00:00:00Z", progress=progress)
            for r in results:
                counts = {k: v for k, v in r.counts.items() if isinstance(v, int) and v}
                console.print(f"[green]stage {r.stage}[/]: {counts}")
            again = vault.ingest([sample], as_of="2024-12-31T00:00:00Z", stages="1")[0]
            console.print(f"re-import of the same export: {again.counts.get('conversations_unchanged', 0)} "
                          f"unchanged, {again.counts.get('conversations_new', 0)} new")
        else:
            console.print(f"[yellow]the sample export {sample.name} is not bundled in this build; skipped[/]")
        search_step(vault)
        st = vault.status()
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        if n:
            t.add_row(name, f"{n:,}")
    out.print(t)
