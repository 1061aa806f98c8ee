"""Fixtures for the belief-ledger tests (seed 002): real vault files, real wiki folders, the CLI as a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
SAMPLE_WIKI = SRC / "kenning" / "samples" / "wiki"


def run_kenning(*args: str, db: Path | None = None, check: bool = True, env: dict | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m kenning ARGS`` as a user runs it, with this checkout's sources."""
    full_env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    full_env.pop("KENNING_DB", None)
    full_env.pop("KENNING_CONFIG", None)
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "kenning", *args]
    if db is not None:
        cmd += ["--db", str(db)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"kenning {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                             f"stderr:\n{proc.stderr}")
    return proc


@pytest.fixture
def kenning():
    return run_kenning


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "vault" / "kenning.db"


@pytest.fixture
def acme(tmp_path: Path) -> Path:
    """A private copy of the bundled sample wiki (tests edit it)."""
    dst = tmp_path / "acme-wiki"
    shutil.copytree(SAMPLE_WIKI, dst)
    return dst


@pytest.fixture
def vault(db: Path):
    from kenning.api import Vault

    v = Vault.open(db)
    yield v
    v.close()
