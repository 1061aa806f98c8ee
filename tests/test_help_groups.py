"""`kenning --help` grouped by task (issue 23 part 4)."""

import typer

from kenning.cli.help_groups import DEFAULT_PANEL, PANELS, grouped, summary


def test_help_is_grouped_by_task_in_order_and_fits_80_columns(cli):
    proc = cli("--help", env={"COLUMNS": "80"})
    text = proc.stdout
    titles = [t for t, _ in PANELS]
    positions = [text.index(t) for t in titles]
    assert positions == sorted(positions)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.index("ingest") < text.index("search") < text.index("facts") < text.index("status")
    assert "Usage: kenning" in text and "§" not in text
    assert DEFAULT_PANEL not in text, "every shipped command belongs to a task panel (help_groups.PANELS)"
    version = cli("--version")
    assert version.stdout.startswith("kenning ")


def test_a_command_nobody_placed_lands_in_more():
    app = typer.Typer()

    @app.command("ingest")
    def _ingest() -> None:
        """Import things."""

    @app.command("frobnicate")
    def _frob() -> None:
        """Something new from another helper. More text here."""

    group = grouped(app)
    assert list(group.commands) == ["ingest", "frobnicate"]
    assert group.commands["frobnicate"].rich_help_panel == DEFAULT_PANEL
    assert group.commands["frobnicate"].short_help == "Something new from another helper."


def test_summary_drops_spec_references_and_stays_short():
    assert summary("Run SQL (§41.6): writes are refused.\n\nMore.") == "Run SQL: writes are refused."
    long = summary("Word " * 40)
    assert len(long) <= 61 and long.endswith("…")
