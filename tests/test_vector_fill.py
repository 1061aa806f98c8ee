"""Issue 24 §1: the vector lane off the import's critical path — deferred fill, skip rules, cache reuse, resumption,
determinism, the import lock, the background fill. Real vaults, the real CLI as a subprocess, the hash embedder
(a real backend without a model download) unless a test says otherwise."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.bench.synth import write_export
from kenning.config import load_config
from kenning.retrieve import vector_fill
from kenning.store import vector_fill as vf_sql

from conftest import SRC, run_kenning

AS_OF = "2025-01-01T00:00:00Z"
DEFER = {"embeddings": {"backend": "hash"}, "vector_fill": {"mode": "manual", "inline_max": 0}}


def _yaml(path: Path, mode: str = "manual", batch: int | None = None) -> Path:
    extra = f"  batch_size: {batch}\n" if batch else ""
    path.write_text(f"embeddings:\n  backend: hash\nvector_fill:\n  mode: {mode}\n  inline_max: 0\n{extra}",
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("vf") / "synth.json"
    write_export(p, 12, seed=5)
    return p


def _json(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def _vectors(db: Path) -> list[tuple]:
    """Every search vector item with its stored vector bytes (vid, item id, text hash, vector)."""
    with Vault.open(db, overrides=DEFER, readonly=True) as v:
        t = v.conn.execute("SELECT table_name FROM vector_tables WHERE status='active'").fetchone()[0]
        items = v.conn.execute("SELECT vid, item_id, text_sha256 FROM vector_items "
                               "WHERE space='search' ORDER BY vid").fetchall()
        vecs = dict(v.conn.execute(f"SELECT rowid, embedding FROM {t}").fetchall())
    return [(*it, vecs.get(it[0])) for it in items]


# -- what a turn embeds ---------------------------------------------------------------------------------------
def test_skip_rules_cut_code_tool_output_and_long_answers():
    cfg = load_config(overrides={"vector_fill": {"assistant_max_words": 5}})
    assert vector_fill.message_text("tool", "python", "7.25", [], cfg) == (None, "skip_role")
    assert vector_fill.message_text("assistant", "assistant", "```py\nprint(1)\n```", [], cfg) == (None, "code_only")
    text, why = vector_fill.message_text("user", "user", "Why does this fail?\n\n```\nx = 1/0\n```\nThanks", [], cfg)
    assert why is None and text == "user: Why does this fail?\n\nThanks"
    long = "one two three four five six seven eight"
    assert vector_fill.message_text("assistant", "assistant", long, [], cfg)[0] == "assistant: one two three four five"
    assert vector_fill.message_text("user", "Ann", long, [], cfg)[0] == f"Ann: {long}"  # people's words are not cut
    assert vector_fill.message_text("user", "user", "", [], cfg) == (None, "empty")
    # an unclosed fence (a truncated answer) is code to the end
    assert vector_fill.message_text("assistant", "a", "Try this:\n```\nrm -rf", [], cfg)[0] == "a: Try this:"
    keep = load_config(overrides={"vector_fill": {"strip_code": False, "skip_roles": []}})
    assert vector_fill.message_text("tool", "python", "7.25", [], keep) == ("python: 7.25", None)


# -- the deferred lane end to end, on the command line ----------------------------------------------------------
def test_ingest_defers_vectors_search_says_so_and_reindex_vectors_completes(tmp_path, export):
    db, cfg = tmp_path / "v.db", _yaml(tmp_path / "c.yaml")
    ing = _json(run_kenning("ingest", str(export), "--db", str(db), "--config", str(cfg), "--as-of", AS_OF, "--json"))
    assert ing["vectors"]["missing"] > 0 and ing["vectors"]["pid"] is None  # manual: nothing started
    index = next(r for r in ing["runs"] if r["stage"] == "index")
    assert index["counts"]["vectors_deferred"] == ing["vectors"]["missing"]

    found = _json(run_kenning("search", "budget per day", "--db", str(db), "--config", str(cfg), "--json"))
    lane = found["vector_lane"]
    assert lane["complete"] is False and lane["embedded"] == 0 and lane["total"] == ing["vectors"]["total"]
    assert found["hits"], "search works without the vector lane"
    assert any("vector lane is incomplete" in n and "reindex --vectors" in n for n in found["notes"])
    assert "vector" not in {x["lane"] for x in found["lanes"]}
    text = run_kenning("search", "budget per day", "--db", str(db), "--config", str(cfg))
    assert "vector lane is incomplete: 0 of" in " ".join((text.stderr + text.stdout).split())
    st = _json(run_kenning("status", "--db", str(db), "--config", str(cfg), "--json"))
    assert st["vector_lane"]["missing"] == ing["vectors"]["missing"]

    filled = _json(run_kenning("reindex", "--vectors", "--db", str(db), "--config", str(cfg), "--as-of", AS_OF,
                               "--json"))
    assert filled["vector_lane"]["complete"] and filled["counts"]["vectors_written"] > 0
    assert filled["counts"]["pending_after"] == 0
    found = _json(run_kenning("search", "budget per day", "--db", str(db), "--config", str(cfg), "--json"))
    assert found["vector_lane"]["complete"] and not any("incomplete" in n for n in found["notes"])
    assert "vector" in {x["lane"] for x in found["lanes"]}
    status = run_kenning("status", "--db", str(db), "--config", str(cfg))
    assert "vector lane complete" in status.stdout + status.stderr

    before = _vectors(db)
    again = _json(run_kenning("reindex", "--vectors", "--db", str(db), "--config", str(cfg), "--as-of", AS_OF,
                              "--json"))
    assert again["counts"].get("vectors_written", 0) == 0 and _vectors(db) == before  # idempotent


def test_small_import_embeds_inline_as_before(tmp_path, export):
    """At most vector_fill.inline_max turns to embed: the index stage makes them, nothing is left over."""
    with Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        runs = v.ingest([export], as_of=AS_OF, defer_vectors=True)
        index = next(r for r in runs if r.stage == "index")
        assert index.counts["vectors_written"] > 0 and "vectors_deferred" not in index.counts
        assert v.vector_lane()["complete"]
        assert vf_sql.skip_counts(v.conn).get("skip_role", 0) >= 0


# -- resumption, determinism, cache reuse ---------------------------------------------------------------------------
def test_a_fill_stopped_midway_resumes_and_ends_identical_to_one_run(tmp_path, export):
    over = {**DEFER, "vector_fill": {**DEFER["vector_fill"], "batch_size": 16}}
    dbs = []
    for name, stops in (("a", [1, 2, None]), ("b", [None])):
        db = tmp_path / f"{name}.db"
        with Vault.open(db, overrides=over) as v:
            v.ingest([export], as_of=AS_OF, defer_vectors=True)
            total = v.vector_lane()["total"]
            for n in stops:
                v.fill_vectors(as_of=AS_OF, max_batches=n)
                if n is not None:
                    left = v.vector_lane()["missing"]
                    assert 0 < left < total  # a partial fill kept its batches
            assert v.vector_lane()["complete"]
        dbs.append(db)
    a, b = _vectors(dbs[0]), _vectors(dbs[1])
    assert a and a == b  # same vids, texts, timestamps (frozen clock) and vector bytes


def test_killed_fill_process_resumes(tmp_path, export):
    db, cfg = tmp_path / "v.db", _yaml(tmp_path / "c.yaml", batch=2)
    _json(run_kenning("ingest", str(export), "--db", str(db), "--config", str(cfg), "--as-of", AS_OF, "--json"))
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    p = subprocess.Popen([sys.executable, "-m", "kenning", "reindex", "--vectors", "-q", "--db", str(db), "--config",
                          str(cfg), "--as-of", AS_OF], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    with Vault.open(db, overrides=DEFER, readonly=True) as v:
        while time.monotonic() < deadline and v.vector_lane()["embedded"] == 0 and p.poll() is None:
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait()
        partial = v.vector_lane()
    assert partial["embedded"] > 0  # batches written before the kill stay
    done = _json(run_kenning("reindex", "--vectors", "--db", str(db), "--config", str(cfg), "--as-of", AS_OF,
                             "--json"))
    assert done["vector_lane"]["complete"]
    assert done["counts"].get("vectors_written", 0) == partial["missing"] - sum(
        v for k, v in done["counts"].items() if k.startswith("vectors_skipped_"))


def test_identical_texts_are_embedded_once_across_conversations_and_runs(tmp_path, export, monkeypatch):
    from kenning.llm.embed import HashEmbedder

    encoded: list[str] = []  # every text the encoder itself sees
    orig = HashEmbedder._embed_batch
    monkeypatch.setattr(HashEmbedder, "_embed_batch", lambda self, texts: (encoded.extend(texts), orig(self, texts))[1])
    with Vault.open(tmp_path / "v.db", overrides=DEFER) as v:
        v.ingest([export], as_of=AS_OF, defer_vectors=True)
        v.fill_vectors(as_of=AS_OF)
        q = lambda sql: v.conn.execute(sql).fetchone()[0]  # noqa: E731
        docs = q("SELECT COUNT(*) FROM vector_items WHERE space='search'")
        distinct = q("SELECT COUNT(DISTINCT text_sha256) FROM vector_items WHERE space='search'")
        assert distinct < docs  # the synthetic export repeats user turns across conversations…
        ids = [r for (r,) in v.conn.execute("SELECT item_id FROM vector_items WHERE space='search'")]
        search_texts = set(vector_fill.texts_of_items(v.conn, v.config, ids).values())
        assert len(search_texts) == distinct
        assert all(encoded.count(t) == 1 for t in search_texts)  # …each text encoded once
        # …and its vector kept once: in vec0, none in the cache (X1); the search items keep no text (X2)
        assert q("SELECT COUNT(*) FROM embedding_cache") == 0
        assert q("SELECT COUNT(*) FROM vector_items WHERE space='search' AND text IS NOT NULL") == 0
        before = len(encoded)
        v.reindex(full=True, as_of=AS_OF, defer_vectors=True)  # clears the index: the removed vectors go to the cache
        assert not v.vector_lane()["complete"]
        assert 0 < q("SELECT COUNT(*) FROM embedding_cache") <= distinct
        v.fill_vectors(as_of=AS_OF)  # every vector again, from the cache: nothing encoded
        assert v.vector_lane()["complete"] and not search_texts & set(encoded[before:])
        assert q("SELECT COUNT(*) FROM embedding_cache") == 0  # back in vec0, once


def test_fill_leaves_a_document_changed_meanwhile_to_the_next_pass(tmp_path, export):
    from kenning.llm.index import VectorIndex
    from collections import Counter

    with Vault.open(tmp_path / "v.db", overrides=DEFER) as v:
        v.ingest([export], as_of=AS_OF, defer_vectors=True)
        docs = vf_sql.pending_docs(v.conn, "search", 0, 5)
        victim = docs[0]["doc_rowid"]

        @contextlib.contextmanager
        def an_import_changes_it():  # what a re-import does between the embedding and the write
            v.conn.execute("UPDATE search_docs SET content_sha256='changed' WHERE doc_rowid=?", (victim,))
            yield

        counts: Counter = Counter()
        vector_fill.embed_batch(v.conn, v.config, VectorIndex(v.conn, v.config), docs, counts, own_transaction=True,
                                before_write=an_import_changes_it)
        skipped = sum(n for k, n in counts.items() if k.startswith("vectors_skipped_"))
        assert counts["vectors_stale_left"] == 1
        assert counts["vectors_written"] + skipped == len(docs) - 1 and counts["vectors_written"] > 0
        assert victim in [d["doc_rowid"] for d in vf_sql.pending_docs(v.conn, "search", 0, 100)]


def test_fill_waits_for_an_import_holding_the_lock(tmp_path, export):
    db = tmp_path / "v.db"
    with Vault.open(db, overrides=DEFER) as v:
        v.ingest([export], as_of=AS_OF, defer_vectors=True)
    fd = os.open(db.with_name(db.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # an import is running
    result: dict = {}

    def fill() -> None:
        with Vault.open(db, overrides={**DEFER, "vector_fill": {**DEFER["vector_fill"], "lock_poll_s": 0.05}}) as w:
            result.update(w.fill_vectors(as_of=AS_OF))

    t = threading.Thread(target=fill)
    t.start()
    time.sleep(1.0)
    with Vault.open(db, overrides=DEFER, readonly=True) as r:
        assert r.vector_lane()["embedded"] == 0  # nothing written while the import holds the lock
        assert vector_fill.running_fill(db) == os.getpid()  # the fill says it is running
        with pytest.raises(vector_fill.FillBusy):
            r.fill_vectors(as_of=AS_OF)  # one fill per vault
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    t.join(60)
    assert result["vectors_written"] > 0 and result["pending_after"] == 0


@pytest.mark.slow
def test_background_fill_after_ingest(tmp_path, export):
    """The default mode: ingest returns with the other lanes ready and a detached fill running; `reindex --vectors`
    waits for it; the fill process ends by itself."""
    db, cfg = tmp_path / "v.db", _yaml(tmp_path / "c.yaml", mode="background", batch=8)
    ing = _json(run_kenning("ingest", str(export), "--db", str(db), "--config", str(cfg), "--as-of", AS_OF, "--json"))
    pid = ing["vectors"]["pid"]
    assert isinstance(pid, int) and pid > 0 and Path(ing["vectors"]["log"]).name == "v.db.vectors.log"
    done = _json(run_kenning("reindex", "--vectors", "--db", str(db), "--config", str(cfg), "--as-of", AS_OF,
                             "--json"))
    assert done["vector_lane"]["complete"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    else:
        pytest.fail(f"the background fill {pid} is still running")
    assert oct(db.with_name("v.db.vectors.log").stat().st_mode & 0o777) == "0o600"


def test_fill_reports_progress_against_a_known_total(tmp_path, export):
    """The progress bar's ETA needs a total from the start and counts that only grow."""
    calls: list[dict] = []
    over = {**DEFER, "vector_fill": {**DEFER["vector_fill"], "batch_size": 32}}
    with Vault.open(tmp_path / "v.db", overrides=over) as v:
        v.ingest([export], as_of=AS_OF, defer_vectors=True)
        missing = v.vector_lane()["missing"]
        v.fill_vectors(as_of=AS_OF, progress=lambda **kw: calls.append(kw))
    assert calls[0] == {"records": 0, "total": missing, "file": "embeddings", "unit": "turns embedded"}
    done = [c["records"] for c in calls]
    assert done == sorted(done) and done[-1] == missing and len(calls) > 2
    assert all(c["total"] == missing for c in calls)


def test_library_ingest_embeds_inline_unless_asked_to_defer(tmp_path, export):
    """`Vault.ingest` (benchmarks, the LoCoMo eval, other callers) keeps every vector inline; only `kenning ingest`
    and `kenning reindex` defer (Q15)."""
    with Vault.open(tmp_path / "v.db", overrides=DEFER) as v:
        runs = v.ingest([export], as_of=AS_OF)
        assert "vectors_deferred" not in next(r for r in runs if r.stage == "index").counts
        assert v.vector_lane()["complete"]
