"""Shared test fixtures: real vault files in tmp_path, the CLI as a real subprocess, small transcripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

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
HASH = {"embeddings": {"backend": "hash"}}


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
def hash_config_file(tmp_path: Path) -> Path:
    """A config *file* choosing the hash embedder for search (CLI tests)."""
    p = tmp_path / "hash.yaml"
    p.write_text("embeddings:\n  backend: hash\n", encoding="utf-8")
    return p


# ---- model layer (issue 3) ---------------------------------------------------------------------------------
# Real things only: the real openai client against a real HTTP server on 127.0.0.1.
# - ``llm_server``      a started :class:`kenning.llm.testserver.OpenAITestServer` (random port), stopped after
# - ``llm_config(server, extra=None, **llm)`` a Config pointed at it (millisecond backoff, hash embeddings)
# - ``hash_config``     a Config with the dependency-free hash embedder
# - ``minilm_embedder`` all-MiniLM-L6-v2 loaded once per session (mark such tests ``@pytest.mark.model``)
# - ``chat_export``     a tiny ChatGPT ``conversations.json`` (3 user + 2 assistant messages)
# - ``ingested_vault``  a Vault with ``chat_export`` imported (stages 0–1)
# - ``kenning_cli(*args, env=…)`` the CLI as a subprocess, no raise on failure, no KENNING_* leaking in

TEST_KEY = "sk-kenning-test-SECRET-0123456789"


def _deep(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _deep(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide their own endpoints: a developer's KENNING_LLM_* must not leak in."""
    for var in ("KENNING_LLM_BASE_URL", "KENNING_LLM_MODEL", "KENNING_LLM_API_KEY", "KENNING_LLM_MODE",
                "KENNING_EMBEDDINGS_BASE_URL", "KENNING_EMBEDDINGS_API_KEY", "KENNING_CONFIG", "KENNING_DB"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def llm_server():
    from kenning.llm.testserver import OpenAITestServer

    srv = OpenAITestServer(api_key=TEST_KEY).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def hash_config():
    from kenning.config import load_config

    return load_config(overrides={"embeddings": {"backend": "hash"}})


@pytest.fixture
def llm_config() -> Callable[..., Any]:
    """``llm_config(server, **overrides)`` → Config aimed at the test server, with millisecond backoff."""
    from kenning.config import load_config

    def make(server, extra: dict | None = None, **llm: Any):
        over = {"llm": {"base_url": server.base_url, "model": "kenning-test-model", "api_key": TEST_KEY,
                        "backoff_initial_s": 0.001, "backoff_max_s": 0.01, "timeout_s": 5, **llm},
                "embeddings": {"backend": "hash"}}
        return load_config(overrides=_deep(over, extra or {}))

    return make


@pytest.fixture(scope="session")
def minilm_embedder():
    from kenning.llm.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.embed(["warm up"])
    return emb


def _node(nid: str, role: str | None, text: str | None, parent: str | None, children: list[str], t: float) -> dict:
    msg = None
    if role is not None:
        msg = {"id": nid, "author": {"role": role}, "create_time": t,
               "content": {"content_type": "text", "parts": [text]}, "metadata": {}, "recipient": "all"}
    return {"id": nid, "message": msg, "parent": parent, "children": children}


def write_export(path: Path, turns: list[tuple[str, str]], conv_id: str = "conv-1", title: str = "Beliefs") -> Path:
    mapping = {"root": _node("root", None, None, None, ["m0"], 0)}
    for i, (role, text) in enumerate(turns):
        nid = f"m{i}"
        mapping[nid] = _node(nid, role, text, "root" if i == 0 else f"m{i - 1}",
                             [f"m{i + 1}"] if i + 1 < len(turns) else [], 1700000000 + i * 60)
    conv = {"id": conv_id, "conversation_id": conv_id, "title": title, "create_time": 1700000000,
            "update_time": 1700000000 + len(turns) * 60, "current_node": f"m{len(turns) - 1}", "mapping": mapping}
    path.write_text(json.dumps([conv]), encoding="utf-8")
    return path


CHAT_TURNS = [
    ("user", "I am patient with people, but I hate mornings."),
    ("assistant", "Thanks for sharing. What makes mornings hard?"),
    ("user", "I'm a night owl and I value quiet evenings."),
    ("assistant", "That makes sense."),
    ("user", "Also, I love hiking in the mountains."),
]


@pytest.fixture
def chat_export(tmp_path: Path) -> Path:
    return write_export(tmp_path / "conversations.json", CHAT_TURNS)


@pytest.fixture
def ingested_vault(tmp_path: Path, chat_export: Path):
    from kenning.api import Vault

    path = tmp_path / "vault.db"
    vault = Vault.open(path)
    vault.ingest([chat_export], as_of="2024-01-01T00:00:00Z")
    try:
        yield vault
    finally:
        vault.close()


@pytest.fixture
def kenning_cli() -> Callable[..., subprocess.CompletedProcess]:
    """``kenning_cli(*args, env=…)``: like ``run_cli`` but never raises on a non-zero exit, and no KENNING_*
    variable of the developer's shell leaks in (tests name every endpoint they use)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 180,
            input: str | None = None) -> subprocess.CompletedProcess:
        e = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
        e["PYTHONPATH"] = str(SRC) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
        e.setdefault("HF_HUB_OFFLINE", "1")
        e["COLUMNS"] = "200"
        e.update(env or {})
        return subprocess.run([sys.executable, "-m", "kenning", *args], capture_output=True, text=True, env=e,
                              timeout=timeout, input=input)

    return run
