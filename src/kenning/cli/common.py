"""Options every command shares, output helpers, and turning errors into messages a person can act on."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Iterator, Optional

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text

if TYPE_CHECKING:
    from kenning.api import Vault

console = Console(stderr=True)
out = Console()

DbOpt = Annotated[
    Optional[Path],
    typer.Option("--db", envvar="KENNING_DB", help="Vault file (default ~/.kenning/kenning.db; env KENNING_DB).",
                 show_default=False),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", envvar="KENNING_CONFIG", help="A YAML file overriding defaults (env KENNING_CONFIG).",
                 show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]
# Every command that can call a model takes --llm (resolve it with `llm_mode(config, value)`).
LlmOpt = Annotated[
    Optional[str],
    typer.Option("--llm", metavar="none|live|replay", envvar="KENNING_LLM_MODE",
                 help="Model use: none (rules only), live (call the configured endpoint, log every call), replay "
                      "(answer only from logged calls, no network). Default: live when KENNING_LLM_BASE_URL and "
                      "KENNING_LLM_MODEL are set, else none. On `ingest`, an explicit live/replay also has stage 4 "
                      "read facts with the model; for wiki workspaces it names the verifier's judge.",
                 show_default=False),
]


def llm_mode(config: Any, value: str | None) -> str:
    """--llm → none | live | replay (``auto`` resolved against the config); a bad value is a user error."""
    from kenning.llm.client import resolve_mode

    with user_errors():
        return resolve_mode(config, value)


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS, default=str).decode())
    sys.stdout.write("\n")


def showing(shown: int, total: int | None, more: str) -> str:
    """The line under a capped list, so a cap is never mistaken for everything (issue 23 part 4; P37). With
    ``total`` None the list only knows it hit its cap."""
    if total is not None and total <= shown:
        return ""
    if total is None:
        return f"showing the first {shown:,}; {more} for more"
    return f"showing {shown:,} of {total:,}; {more} for more"


def fail(message: str, code: int = 1) -> None:
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def user_error_types() -> tuple[type[BaseException], ...]:
    """The failures a person can act on. Imported when first needed: `kenning --help` must not load the pipeline."""
    from kenning.config.loader import ConfigError
    from kenning.llm.errors import ModelLayerError
    from kenning.pipeline.clock import ClockError
    from kenning.pipeline.stages import UnknownStage
    from kenning.store.connection import StoreError

    return (StoreError, ConfigError, ClockError, UnknownStage, FileNotFoundError, ModelLayerError)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Known failures become one clear line and exit code 1, not a traceback."""
    import apsw

    from kenning.pipeline.runner import StageFailed

    try:
        yield
    except user_error_types() as e:
        fail(str(e))
    except StageFailed as e:
        cause = e.__cause__
        if isinstance(cause, (apsw.ReadOnlyError, apsw.BusyError)):
            fail(_store_message(cause))
        fail(f"{e}\n(the vault is unchanged by this stage; details: `kenning runs --failed`)")
    except (apsw.ReadOnlyError, apsw.BusyError) as e:
        fail(_store_message(e))


def _store_message(e: Exception) -> str:
    """Two SQLite errors a person can act on (issue 23 parts 4 and 5)."""
    import apsw

    if isinstance(e, apsw.ReadOnlyError):
        return ("the vault is read-only (read-only storage, a read-only file, or opened for reading): it can be "
                "read but not changed; nothing was written")
    return ("the vault is busy: another Kenning process is writing to it (an import?) and did not finish within "
            "vault.busy_timeout_ms; nothing was written, try again when it is done")


@contextlib.contextmanager
def open_vault(db: Path | None, config: Path | None, readonly: bool = False) -> Iterator[Vault]:
    from kenning.api import Vault

    with user_errors():
        vault = Vault.open(db, config_path=config, readonly=readonly)
    try:
        yield vault
    finally:
        vault.close()


class RateColumn(ProgressColumn):
    """Records per second: the figure people compare imports by."""

    def render(self, task) -> Text:
        elapsed = task.elapsed or 0
        n = task.fields.get("records", 0)
        rate = n / elapsed if elapsed > 0 else 0
        return Text(f"{n:,} conv · {rate:,.0f}/s", style="progress.data.speed")


class AmountColumn(ProgressColumn):
    """Bytes for an import's file; otherwise the stage's own unit, done of total, and its rate (issue 23 part 4:
    later stages count what they work on, with a total, so the ETA means something)."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = DownloadColumn()
        self.rate = RateColumn()

    def render(self, task) -> Text:
        unit = task.fields.get("unit")
        if unit is None:
            return Text.assemble(self.bytes.render(task), " ", self.rate.render(task))
        done = int(task.completed)
        total = f"/{int(task.total):,}" if task.total is not None else ""
        elapsed = (getattr(task, "finished_time", None) if getattr(task, "finished", False) else task.elapsed) or 0
        rate = f" · {done / elapsed:,.0f}/s" if elapsed > 0 and done else ""
        return Text(f"{done:,}{total} {unit}{rate}", style="progress.data.speed")


@contextlib.contextmanager
def ingest_progress(enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), AmountColumn(), TimeRemainingColumn(),
        console=console, transient=True,
    )
    tasks: dict[str, int] = {}
    last = [0.0]

    def update(advance_bytes: int = 0, total_bytes: int | None = None, records: int = 0, file: str = "",
               total: int | None = None, unit: str | None = None, **_: Any):
        """A file import reports bytes (``advance_bytes`` of ``total_bytes``); a later stage reports ``records``
        done of ``total`` in its ``unit`` (messages, conversations, turns…)."""
        now = time.monotonic()
        counted = total_bytes is None
        if file not in tasks:
            tasks[file] = progress.add_task(Path(file).name if not counted else file or "import",
                                            total=total if counted else total_bytes, records=0,
                                            unit=(unit or "items") if counted else None)
        elif now - last[0] < 0.1 and not (counted and total is not None and records >= total):
            return
        last[0] = now
        if counted:
            progress.update(tasks[file], completed=records, total=total, records=records)
        else:
            progress.update(tasks[file], completed=advance_bytes, records=records)

    with progress:
        yield update
