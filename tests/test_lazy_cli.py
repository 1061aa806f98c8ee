"""The lazy ``kenning`` command group (issue 24 §4): every command reachable, the static table in sync with the
real commands, ``--help`` without the heavy imports, and the same output as the eager app it replaced."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli.commands import COMMANDS
from kenning.cli.help_groups import DEFAULT_PANEL, summary

from conftest import HASH, SRC, transcript_doc

CLI_DIR = SRC / "kenning" / "cli"
HEAVY = ["torch", "sentence_transformers", "transformers", "numpy", "onnxruntime", "pydantic", "typer", "rich",
         "kenning.api", "kenning.pipeline"]


def _discovered_registrars() -> list[str]:
    """Every ``register`` function a module of cli/ defines (a new command module is found without the table)."""
    found = []
    for path in sorted(CLI_DIR.glob("*.py")):
        if re.search(r"^def register\(", path.read_text(encoding="utf-8"), re.M):
            found.append(f"kenning.cli.{path.stem}:register")
    return found


def _real_commands() -> dict[str, object]:
    import typer

    from kenning.cli.lazy import eager_app

    return dict(typer.main.get_group(eager_app(extra=_discovered_registrars())).commands)


def test_the_static_table_names_every_registered_command_and_nothing_else():
    real = _real_commands()
    missing = sorted(set(real) - set(COMMANDS))
    assert not missing, ("registered but missing from kenning/cli/commands.py COMMANDS (so `kenning --help` hides "
                         "them and `kenning NAME` fails): " + ", ".join(missing))
    stale = sorted(set(COMMANDS) - set(real))
    assert not stale, "COMMANDS names commands nothing registers: " + ", ".join(stale)
    assert DEFAULT_PANEL != "" and all(name in real for name in COMMANDS)


def test_each_one_line_help_is_the_commands_own():
    drift = {}
    for name, cmd in _real_commands().items():
        own = cmd.short_help or summary(cmd.help)
        if COMMANDS[name][1] != own:
            drift[name] = own
    assert not drift, "update these one-line helps in kenning/cli/commands.py: " + json.dumps(drift, ensure_ascii=False)


def test_each_command_comes_from_its_own_registrars_alone():
    from kenning.cli.lazy import registered

    for name, (spec, _) in COMMANDS.items():
        assert name in registered(spec).commands, f"{spec} does not register {name!r}"


def _help_of_every_path(group) -> dict[str, str]:
    import typer

    ctx = typer._click.Context(group, info_name="kenning")
    out: dict[str, str] = {}

    def walk(cmd, path):
        if path:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
                group.main(args=path + ["--help"], prog_name="kenning", standalone_mode=False)
            out[" ".join(path)] = buf.getvalue()
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])

    walk(group, [])
    return out


def test_every_command_and_subcommand_help_reads_as_the_eager_apps(monkeypatch):
    """The eager app is the pre-lazy arrangement: one Typer app with every module registered."""
    from kenning.cli.help_groups import grouped
    from kenning.cli.lazy import eager_app, root_group

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERMINAL_WIDTH", "80")
    lazy = _help_of_every_path(root_group())
    eager = _help_of_every_path(grouped(eager_app()))
    assert len(lazy) > 100 and set(lazy) == set(eager)
    assert [p for p in lazy if lazy[p] != eager[p]] == []
    assert "Usage: kenning search [OPTIONS]" in lazy["search"] and "graph rebuild" in lazy


def test_root_help_is_the_eager_apps_help_without_importing_them(cli):
    lazy = cli("--help", env={"COLUMNS": "80"}).stdout
    proc = subprocess.run([sys.executable, "-c", "from kenning.cli.help_groups import grouped\n"
                           "from kenning.cli.lazy import eager_app\n"
                           "grouped(eager_app())(['--help'], prog_name='kenning')"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "80"})
    eager = proc.stdout
    strip = lambda t: "\n".join(line.rstrip() for line in t.splitlines()).strip("\n")  # noqa: E731
    assert strip(lazy) == strip(eager) and "╭─ Maintenance" in lazy


@pytest.mark.parametrize("args", [["--help"], [], ["--version"]])
def test_help_and_version_import_nothing_heavy(args):
    code = ("import sys\nfrom kenning.cli.entry import main\nsys.argv = ['kenning', *%r]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr(sorted(m for m in %r if m in sys.modules)))") % (args, HEAVY)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.stderr.strip() == "[]", proc.stderr
    assert ("Usage: kenning" in proc.stdout) if args != ["--version"] else proc.stdout.startswith("kenning 0.")


def test_a_command_loads_only_its_own_modules():
    code = ("import sys\nfrom kenning.cli.entry import main\nsys.argv = ['kenning', 'status', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('kenning.cli.'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    loaded = eval(proc.stderr.strip())  # noqa: S307 (our own repr of a list of names)
    assert "kenning.cli.main" in loaded and "Row counts per table" in proc.stdout
    assert not {"kenning.cli.mining", "kenning.cli.search", "kenning.cli.beliefs"} & set(loaded), loaded


def test_no_args_prints_help_and_exits_2_and_a_typo_is_suggested(cli):
    bare = cli(check=False)
    assert bare.returncode == 2 and "Usage: kenning" in bare.stdout
    typo = cli("serch", check=False)
    assert typo.returncode == 2 and "No such command 'serch'" in typo.stderr and "'search'" in typo.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_runs_its_help_in_a_fresh_process(cli, name):
    proc = cli(name, "--help")
    assert f"Usage: kenning {name}" in proc.stdout


@pytest.fixture(scope="module")
def small_vault(tmp_path_factory):
    """Three sessions of two people, ingested by the CLI with the hash embedder: (db, config file)."""
    from conftest import run_cli

    tmp = tmp_path_factory.mktemp("lazy")
    chat = tmp / "chat.json"
    chat.write_text(json.dumps(transcript_doc()), encoding="utf-8")
    cfg = tmp / "hash.yaml"
    cfg.write_text("embeddings:\n  backend: " + HASH["embeddings"]["backend"] + "\n", encoding="utf-8")
    db = tmp / "v.db"
    run_cli("ingest", str(chat), "--as-of", "2023-10-01T00:00:00Z", "--self", "Ana", "-q", "--config", str(cfg), db=db)
    return db, cfg


def test_search_json_is_byte_identical_through_the_lazy_and_the_eager_app(small_vault, cli):
    """The same vault and question through `python -m kenning` (lazy) and the eager app: the same bytes."""
    db, cfg = small_vault
    args = ["search", "who went camping by the lake?", "--now", "2023-10-01", "--json", "--config", str(cfg),
            "--db", str(db)]
    lazy = cli(*args).stdout
    eager = subprocess.run([sys.executable, "-c", "import sys\nfrom kenning.cli.help_groups import grouped\n"
                            "from kenning.cli.lazy import eager_app\n"
                            "grouped(eager_app())(sys.argv[1:], prog_name='kenning')", *args],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC),
                                                                "HF_HUB_OFFLINE": "1"})
    assert eager.returncode == 0, eager.stderr
    assert lazy == eager.stdout
    hits = json.loads(lazy)["hits"]
    assert any("camping" in h["text"] for h in hits)


READS = ("kenning.pipeline.stages", "kenning.pipeline.stage4", "torch", "sentence_transformers", "transformers",
         "kenning.cli.mining", "dateparser")


@pytest.mark.parametrize("command,absent", [
    (["status", "--json"], READS + ("numpy", "sqlite3", "sqlite_vec", "onnxruntime")),  # F6, F10
    (["search", "camping by the lake", "--json"], READS)])                              # F6, F9
def test_reads_import_only_what_they_use(small_vault, command, absent):
    """A search or status never runs a stage (kenning.api imports them on first use, F6); opening a vault no longer
    imports sqlite_vec's package (numpy, sqlite3; F10); a status needs no vectors at all."""
    db, cfg = small_vault
    code = ("import sys\nfrom kenning.cli.entry import main\nsys.argv = ['kenning', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"sys.stderr.write('MODULES ' + repr(sorted(m for m in {absent!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code, *command, "--config", str(cfg), "--db", str(db)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC),
                                                               "HF_HUB_OFFLINE": "1"})
    assert proc.stderr.strip().endswith("MODULES []"), proc.stderr[-2000:]
    assert json.loads(proc.stdout)


def test_the_vec0_path_is_sqlite_vecs_own():
    import sqlite_vec

    from kenning.store.connection import _sqlite_vec_path

    assert _sqlite_vec_path() == sqlite_vec.loadable_path()


def test_a_date_without_digits_is_not_sent_to_dateparser():
    """F9: without a digit there is no year, so dateparser could only answer relative to the real clock."""
    from kenning.retrieve.when import parse_date, resolve_all

    parse_date.cache_clear()
    assert parse_date("yesterday", 2023) is None and parse_date("a week ago", 2023) is None
    assert parse_date("8 May, 2023") is not None and parse_date("05/08/2023") is not None  # digits: as before
    import datetime as dt

    anchor = dt.date(2023, 5, 20)
    assert [i.text for i in resolve_all("the week before yesterday we met", anchor)] == \
        [i.text for i in resolve_all("the week before yesterday we met", anchor)]  # same answer every time
    assert all("2026" not in str(i.start) for i in resolve_all("the week before yesterday we met", anchor))


def test_the_old_entry_point_still_works(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.argv=['kenning','--version']\n"
                           "from kenning.cli.main import main; main()"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.stdout.startswith("kenning ") and Path(SRC / "kenning" / "cli" / "entry.py").is_file()


def test_the_coloured_help_is_the_plain_help_plus_colour_and_narrow_terminals_wrap():
    from kenning.cli.entry import root_help

    coloured, plain = root_help(80, colour=True), root_help(80, colour=False)
    assert "\x1b[" in coloured and re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    narrow = root_help(50)
    assert max(len(line) for line in narrow.splitlines()) <= 50 and "constellation" in narrow
