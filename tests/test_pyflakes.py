"""Code health: pyflakes over src/ finds no unused imports, undefined names or unused locals (L4). pyflakes is a dev
requirement (pyproject ``[dev]``, installed by ``make test``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kenning"


def test_pyflakes_finds_nothing_in_src():
    pytest.importorskip("pyflakes", reason="pyflakes is a dev requirement: pip install -e '.[dev]'")
    done = subprocess.run([sys.executable, "-m", "pyflakes", str(SRC)], capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.strip() == "" and done.returncode == 0, \
        "pyflakes found problems (remove the unused name, or use it):\n" + done.stdout + done.stderr


def test_pyflakes_catches_an_unused_import(tmp_path):
    """The check itself works: a module with an unused import and an undefined name is reported."""
    pytest.importorskip("pyflakes")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    unused = 1\n    return missing_name\n")
    done = subprocess.run([sys.executable, "-m", "pyflakes", str(bad)], capture_output=True, text=True, timeout=60)
    assert "'os' imported but unused" in done.stdout
    assert "undefined name 'missing_name'" in done.stdout
    assert "local variable 'unused' is assigned to but never used" in done.stdout
