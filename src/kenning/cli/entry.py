"""The ``kenning`` executable. ``kenning``, ``kenning --help`` and ``--version`` answer from static text without
importing typer, rich or any command module (issue 24 §4: ``--help`` ≤ 0.3 s; F1, F2); everything else goes
through the lazy click group of cli/lazy.py, which imports only the command that runs.
"""

from __future__ import annotations

import os
import sys

from kenning.cli.commands import COMMANDS, ROOT_HELP

WIDTH = 80  # the help's width at most (the one-line summaries are cut to fit 80 columns; F2)
OPTIONS = [("--version", "<bool>", "Print Kenning's version and exit."),
           ("--help", "<bool>", "Show this message and exit.")]


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


def _panel(title: str, rows: list[tuple[str, str]], width: int, colour: bool, left: int) -> list[str]:
    """A rounded box like typer's help panels; ``rows`` = (left column, text), the text from column ``left``."""
    inner = width - 4
    if len(title) > width - 5:  # a narrow terminal: the title shortened, as rich does
        title = title[:max(1, width - 6)] + "…"
    lines = ["╭─ " + title + " " + "─" * max(0, width - len(title) - 5) + "╮"]
    for name, text in rows:
        for i, part in enumerate(_wrap(text, max(10, inner - left))):
            label = (name if i == 0 else "").ljust(left)
            if colour and i == 0:
                label = "\x1b[1;36m" + name + "\x1b[0m" + " " * (left - len(name))
            lines.append("│ " + label + part + " " * max(0, inner - left - len(part)) + " │")
    lines.append("╰" + "─" * (width - 2) + "╯")
    return lines


def root_help(width: int | None = None, colour: bool = False) -> str:
    """``kenning --help``: usage, what Kenning is, the options, then every command by task panel."""
    from kenning.cli.help_groups import DEFAULT_PANEL, PANELS

    if width is None:
        import shutil

        width = max(40, min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns))
    usage = "Usage: kenning [OPTIONS] COMMAND [ARGS]..."
    if colour:
        usage = "\x1b[33mUsage:\x1b[0m \x1b[1mkenning\x1b[0m [OPTIONS] COMMAND [ARGS]..."
    lines = ["", " " + usage, ""] + [" " + line for line in _wrap(ROOT_HELP, width - 2)] + [""]
    lines += _panel("Options", [(o.ljust(17) + kind, text) for o, kind, text in OPTIONS], width, False, 25)
    left = max(len(name) for name in COMMANDS) + 2  # one command column for all panels, as typer aligns them
    placed = {name for _, names in PANELS for name in names}
    for title, names in PANELS + [(DEFAULT_PANEL, [n for n in COMMANDS if n not in placed])]:
        rows = [(name, COMMANDS[name][1]) for name in names if name in COMMANDS]
        if rows:
            lines += _panel(title, rows, width, colour, left)
    return "\n".join(lines + [""]) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in ([], ["--help"]):
        colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        sys.stdout.write(root_help(colour=colour))
        if not args:  # as click's no_args_is_help: the help, and the exit status of a usage error
            sys.exit(2)
        return
    if args == ["--version"]:
        from kenning import __version__

        sys.stdout.write(f"kenning {__version__}\n")
        return
    from kenning.cli.lazy import root_group

    root_group()(args=args, prog_name="kenning")
