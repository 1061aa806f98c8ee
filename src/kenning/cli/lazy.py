"""The ``kenning`` click group that imports a command's module only when that command runs (issue 24 §4; F1).

Names and one-line help come from the static table in cli/commands.py; ``get_command`` imports the module(s)
that register the asked-for command, lets them register on a scratch Typer app and hands back the real click
command — so ``kenning search …`` imports cli/search.py and what it needs, not the 25 other command modules.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from kenning.cli.commands import COMMANDS, ROOT_HELP
from kenning.cli.help_groups import PANELS, panel_of

_GROUPS: dict[str, Any] = {}  # registrar spec → the click group its modules registered (one load per process)


class TableMismatch(RuntimeError):
    """cli/commands.py names a command its registrar does not register (a merge that forgot a line)."""


def registered(spec: str) -> Any:
    """The click group holding what the registrars of ``spec`` ("module:function …") register."""
    group = _GROUPS.get(spec)
    if group is None:
        # The same settings the one eager root app had, so every command's help reads as before (F3).
        app = typer.Typer(add_completion=False, rich_markup_mode="rich")
        for one in spec.split():
            module, _, function = one.partition(":")
            getattr(importlib.import_module(module), function)(app)
        group = _GROUPS[spec] = typer.main.get_group(app)
    return group


def ordered_names() -> list[str]:
    """Every command, in help order: by task panel (help_groups.PANELS), the rest as listed in the table."""
    rank = {name: (p, i) for p, (_, names) in enumerate(PANELS) for i, name in enumerate(names)}
    return sorted(COMMANDS, key=lambda n: rank.get(n, (len(PANELS), list(COMMANDS).index(n))))


class LazyGroup(TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return ordered_names()

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        cmd = registered(entry[0]).commands.get(cmd_name)
        if cmd is None:
            raise TableMismatch(f"kenning.cli.commands.COMMANDS says {entry[0]!r} registers {cmd_name!r}, "
                                "but it does not: fix that line")
        cmd.rich_help_panel = panel_of(cmd_name)
        if not cmd.short_help:
            cmd.short_help = entry[1]
        return cmd

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The same text as the fast path in cli/entry.py (no command module imported to list the commands).
        from kenning.cli.entry import root_help

        formatter.write(root_help())

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except typer._click.exceptions.UsageError as e:  # TyperGroup suggests from self.commands, empty here
            from difflib import get_close_matches

            matches = get_close_matches(args[0], list(COMMANDS)) if args else []
            if matches and "Did you mean" not in e.message:
                e.message = e.message.rstrip(".") + ". Did you mean " + ", ".join(repr(m) for m in matches) + "?"
            raise


def _version(value: bool) -> None:
    if value:
        from kenning import __version__

        typer.echo(f"kenning {__version__}")
        raise typer.Exit()


def _root_app(**kw: Any) -> Any:
    app = typer.Typer(name="kenning", help=ROOT_HELP, no_args_is_help=True, add_completion=False,
                      rich_markup_mode="rich", **kw)

    @app.callback()
    def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                    help="Print Kenning's version and exit.")] = False) -> None:
        pass

    return app


def root_group() -> Any:
    """The ``kenning`` click group (lazy)."""
    return typer.main.get_group(_root_app(cls=LazyGroup))


def all_commands() -> dict[str, Any]:
    """Every command loaded (tests, docs): name → click command, in help order."""
    group = root_group()
    return {name: group.get_command(None, name) for name in ordered_names()}


def registrars() -> list[str]:
    """Every registrar the table names, once each, in table order."""
    return list(dict.fromkeys(one for spec, _ in COMMANDS.values() for one in spec.split()))


def eager_app(extra: list[str] = ()) -> Any:
    """One Typer app with every command registered, as cli/main.py built it before the lazy group (tests compare
    the two; ``extra`` adds registrars the table does not name)."""
    app = _root_app()
    for one in registrars() + [e for e in extra if e not in registrars()]:
        module, _, function = one.partition(":")
        getattr(importlib.import_module(module), function)(app)
    return app
