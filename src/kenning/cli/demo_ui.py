"""The demo's last line: the one command that opens this vault in the browser (`kenning ui`)."""

from __future__ import annotations

import shlex
from pathlib import Path

from kenning.cli.common import out


def demo_ui(db: Path | None, config: Path | None) -> None:
    from kenning.api import default_db_path
    from kenning.config import load_config

    path = Path(db) if db else default_db_path(load_config(config, None))
    cmd = f"kenning ui --db {shlex.quote(str(path))}" + (f" --config {shlex.quote(str(config))}" if config else "")
    out.print(f"open it in your browser: {cmd}   (then http://127.0.0.1:8765/)", highlight=False, markup=False,
              soft_wrap=True)
