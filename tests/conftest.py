"""Shared test fixtures: real vault files in tmp_path, the CLI as a real subprocess, small transcripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.api import Vault

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


REPO = Path(__file__).resolve().parents[1]
# shared/ sits beside the clone (CI, /work/main) or beside the worktrees' folder (/work/wt/NAME)
LOCOMO_DIRS = [REPO.parent / "shared" / "data" / "locomo", REPO.parent.parent / "shared" / "data" / "locomo"]
HASH = {"retrieval": {"vector": {"backend": "hash"}}}


def locomo_dir() -> Path:
    env = os.environ.get("KENNING_LOCOMO")
    for cand in ([Path(env)] if env else []) + LOCOMO_DIRS:
        if (cand / "26.json").is_file():
            return cand
    pytest.skip("LoCoMo data not available")


def transcript_doc() -> dict:
    """Two people over three sessions; Ana is the vault owner in most tests."""
    return {
        "format": "kenning.transcript/1",
        "transcript_id": "family-chat",
        "title": "Ana and Ben",
        "participants": [{"id": "ana", "name": "Ana", "aliases": ["Annie"]}, {"id": "ben", "name": "Ben"}],
        "sessions": [
            {"id": "s1", "started_at": "2023-05-08T13:56:00Z", "turns": [
                {"id": "t1", "speaker": "Ana", "text": "I went to a pottery class yesterday and made a bowl."},
                {"id": "t2", "speaker": "ben", "text": "Nice! I adopted a turtle named Shelly last week."},
                {"id": "t3", "speaker": "Ana", "text": "Look at this.", "attachments": [
                    {"kind": "image", "url": "https://example.org/bowl.jpg", "caption": "a photo of a blue ceramic bowl"}]},
            ]},
            {"id": "s2", "started_at": "2023-07-14T09:00:00Z", "turns": [
                {"id": "t1", "speaker": "Ben", "text": "We went camping by the lake last weekend with the kids."},
                {"id": "t2", "speaker": "Annie", "text": "My sister is moving to Lisbon next month."},
            ]},
            {"id": "s3", "started_at": "2023-09-02T18:30:00Z", "turns": [
                {"id": "t1", "speaker": "Ben", "text": "I started learning the violin in August."},
                {"id": "t2", "speaker": "Ana", "text": "Our car broke down on the way to the lake."},
            ]},
        ],
    }


@pytest.fixture
def transcript_file(tmp_path: Path) -> Path:
    p = tmp_path / "chat.json"
    p.write_text(json.dumps(transcript_doc()), encoding="utf-8")
    return p


@pytest.fixture
def vault(tmp_path: Path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    yield v
    v.close()


def run_kenning(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m kenning ARGS`` without checking the exit code (callers assert on it)."""
    e = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "kenning", *args], capture_output=True, text=True, cwd=cwd, env=e,
                          timeout=300)


@pytest.fixture
def hash_config(tmp_path: Path) -> Path:
    p = tmp_path / "hash.yaml"
    p.write_text("retrieval:\n  vector:\n    backend: hash\n", encoding="utf-8")
    return p
