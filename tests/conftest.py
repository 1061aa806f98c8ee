"""Shared test fixtures: real vault files in tmp_path, the CLI as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def run_cli(*args: str, db: Path | None = None, env: dict | None = None, check: bool = True,
            input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m kenning ARGS`` the way a user would, with this checkout's sources."""
    full_env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    full_env.pop("KENNING_DB", None)
    full_env.pop("KENNING_CONFIG", None)
    if env:
        full_env.update(env)
    cmd = [sys.executable, "-m", "kenning", *args]
    if db is not None:
        cmd += ["--db", str(db)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, input=input, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"kenning {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                             f"stderr:\n{proc.stderr}")
    return proc


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    return tmp_path / "vault" / "kenning.db"
