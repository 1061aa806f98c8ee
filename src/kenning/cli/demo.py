"""``kenning demo``: the main job on the bundled sample, end to end, every landed capability shown."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kenning.cli.common import console, open_vault, out, user_errors

SAMPLE = "sample-chatgpt-export.zip"


def sample_path() -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(SAMPLE)))


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
        st = vault.status()
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        if n:
            t.add_row(name, f"{n:,}")
    out.print(t)
    _show_entities(db, config)


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
