"""Embedding-model migration (DOC72 §3.7): queries answer throughout, the swap is atomic, interruption is safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import SRC

from kenning.config import load_config
from kenning.llm.errors import VectorIndexError
from kenning.llm.index import VectorIndex, drop_mirrors
from kenning.store import open_store
from kenning.store import vectors as vsql
from kenning.store.connection import rows, scalar

WORDS = ["calm", "honest", "tired", "curious", "brave", "quiet", "loud", "kind", "late", "early", "patient",
         "mornings", "hiking", "music", "crowds", "coffee"]


def items(n: int, start: int = 0) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(start)
    return [(f"it{j}", "i am " + " ".join(rng.choice(WORDS, size=3)) + f" number {j}", f"k{j % 3}")
            for j in range(start, start + n)]


def write_config(tmp_path, **vector_index) -> str:
    path = tmp_path / "config.yaml"
    vi = {"migration_batch_pause_s": 0, **vector_index}
    path.write_text(json.dumps({"embeddings": {"backend": "hash", "dimension": 64, "vector_index": vi}}))
    return str(path)


@pytest.fixture
def vault(tmp_path):
    drop_mirrors()
    cfg_path = write_config(tmp_path, migration_batch_pause_s=0.05)
    cfg = load_config(cfg_path)
    conn = open_store(tmp_path / "v.db")
    VectorIndex(conn, cfg).upsert("s", items(300))
    yield tmp_path / "v.db", cfg_path, cfg, conn
    conn.close()


def snapshot(conn) -> dict:
    """One consistent read: what is active, how complete it is, whether a build is running."""
    conn.execute("BEGIN")
    try:
        active = vsql.active_table(conn)
        building = vsql.building_table(conn)
        return {"active": (active["model_id"], active["dimension"]), "table": active["table_name"],
                "vectors": vsql.count_vectors(conn, active["table_name"]), "items": vsql.count_items(conn),
                "building": building is not None}
    finally:
        conn.execute("COMMIT")


def test_queries_answer_throughout_a_migration_and_the_swap_is_atomic(vault):
    db, cfg_path, cfg, conn = vault
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "embeddings", "migrate", "hash", "--dimension", "32",
                             "--batch-size", "20", "--db", str(db), "--config", cfg_path, "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    readers = {"numpy": VectorIndex(conn, cfg, engine="numpy"),
               "sqlite": VectorIndex(open_store(db, readonly=True), cfg, engine="sqlite")}
    writer = VectorIndex(open_store(db), cfg)
    seen, answered_while_building, wrote, deleted = [], 0, False, False
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline:
        for name, r in readers.items():
            snap = snapshot(r.conn)
            assert snap["vectors"] == snap["items"], snap            # the active table is always complete
            hits = r.search("i am patient and calm", k=10, space="s")
            assert len(hits) == 10, (name, snap)                      # queries always answer
            seen.append(snap["active"])
            answered_while_building += snap["building"]
        if answered_while_building >= 4 and not wrote:
            writer.upsert("s", items(5, start=1000))                  # written during the build: caught up
            wrote = True
        if answered_while_building >= 8 and not deleted:
            writer.delete("s", ["it0", "it1"])                        # deleted during the build: dropped
            deleted = True
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "swapped" and result["previous"] == {"model_id": "hash:kenning-hash-v1",
                                                                    "dimension": 64}
    assert answered_while_building >= 8 and wrote and deleted        # the build overlapped real traffic
    # the readers saw the old model, then (maybe) the new one, never back and forth
    old_model, new_model = ("hash:kenning-hash-v1", 64), ("hash:kenning-hash-v1", 32)
    assert set(seen) <= {old_model, new_model} and seen[0] == old_model
    first_new = seen.index(new_model) if new_model in seen else len(seen)
    assert all(s == new_model for s in seen[first_new:])
    final = snapshot(conn)
    assert final["active"] == ("hash:kenning-hash-v1", 32) and not final["building"]
    assert final["items"] == final["vectors"] == 300 + 5 - 2
    ids = {h.item_id for h in readers["numpy"].search("i am patient", k=1000, space="s")}
    assert {"it1000", "it1004"} <= ids and not {"it0", "it1"} & ids
    old = [t for t in vsql.all_tables(conn) if t["status"] == "retired"]
    assert len(old) == 1 and scalar(conn, "SELECT COUNT(*) FROM sqlite_master WHERE name=?",
                                    (old[0]["table_name"],)) == 0       # dropped
    # the new vectors are exactly what a fresh 32-d embedding gives, stored as int8 (X3): sqlite-vec's cosine of
    # the int8 query and row
    from kenning.llm.index import dequantize_int8, quantize_int8

    e32 = readers["numpy"].embedder_for("hash:kenning-hash-v1", 32)
    top = readers["sqlite"].search("i am patient and calm", k=5, space="s")
    q, d = (dequantize_int8(quantize_int8(e32.embed([t])))[0] for t in (
        "i am patient and calm", dict((i, t) for i, t, _ in items(300) + items(5, start=1000))[top[0].item_id]))
    assert top[0].score == pytest.approx(float(q @ d), abs=1e-5)


def test_interrupted_migration_keeps_the_old_table_and_resumes(vault, kenning_cli):
    db, cfg_path, cfg, conn = vault
    idx = VectorIndex(conn, cfg)
    before = [h.item_id for h in idx.search("i am curious", k=5, space="s")]
    paused = idx.migrate("hash", dimension=32, batch_size=50, pause_s=0, stop_after_batches=2)
    assert paused["status"] == "paused" and paused["items_done"] == 100
    assert snapshot(conn)["active"] == ("hash:kenning-hash-v1", 64) and snapshot(conn)["building"]
    assert [h.item_id for h in idx.search("i am curious", k=5, space="s")] == before
    st = kenning_cli("embeddings", "status", "--db", str(db), "--config", cfg_path, "--json")
    status = json.loads(st.stdout)
    assert status["building"]["progress_pct"] == pytest.approx(33.3, abs=0.1)
    assert status["active"]["dimension"] == 64 and status["matches_config"] is True
    text = kenning_cli("embeddings", "status", "--db", str(db), "--config", cfg_path)
    assert "migration in progress" in text.stdout and "100/300" in text.stdout
    # another target while one is building is refused, with the way out named
    with pytest.raises(VectorIndexError, match="--cancel"):
        idx.migrate("hash", dimension=16)
    done = idx.migrate("hash", dimension=32, batch_size=50, pause_s=0)
    assert done["status"] == "swapped" and done["batches"] == 4        # resumed: 200 items left
    assert snapshot(conn)["active"] == ("hash:kenning-hash-v1", 32)
    assert idx.migrate("hash", dimension=32)["status"] == "already_active"


def test_a_failed_swap_changes_nothing(vault, monkeypatch):
    db, cfg_path, cfg, conn = vault
    idx = VectorIndex(conn, cfg)

    def boom(*a, **k):
        raise RuntimeError("power cut during the swap")

    monkeypatch.setattr(vsql, "swap_active", boom)
    with pytest.raises(RuntimeError, match="power cut"):
        idx.migrate("hash", dimension=32, pause_s=0)
    snap = snapshot(conn)
    assert snap["active"] == ("hash:kenning-hash-v1", 64) and snap["vectors"] == 300 and snap["building"]
    assert len(idx.search("i am brave", k=10, space="s")) == 10
    monkeypatch.undo()
    assert idx.migrate("hash", dimension=32, pause_s=0)["status"] == "swapped"


def test_cancel_and_cli_migrate(vault, kenning_cli):
    db, cfg_path, cfg, conn = vault
    VectorIndex(conn, cfg).migrate("hash", dimension=32, batch_size=10, pause_s=0, stop_after_batches=1)
    r = kenning_cli("embeddings", "migrate", "--cancel", "--db", str(db), "--config", cfg_path, "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"status": "cancelled"}
    assert vsql.building_table(conn) is None
    assert rows(conn, "SELECT COUNT(*) AS n FROM sqlite_master WHERE name LIKE 'vec_items_g%' "
                      "AND type='table' AND sql LIKE 'CREATE VIRTUAL%'")[0]["n"] == 1
    r = kenning_cli("embeddings", "migrate", "hash", "--dimension", "48", "--db", str(db), "--config", cfg_path)
    assert r.returncode == 0, r.stderr
    assert "swapped" in r.stderr and "300 items now use hash:kenning-hash-v1 (48-d)" in r.stderr
    st = json.loads(kenning_cli("embeddings", "status", "--db", str(db), "--config", cfg_path, "--json").stdout)
    assert st["active"]["dimension"] == 48 and st["matches_config"] is False   # config still says 64
    text = kenning_cli("embeddings", "status", "--db", str(db), "--config", cfg_path).stdout
    assert "config asks for hash:kenning-hash-v1 (64-d)" in text
    bad = kenning_cli("embeddings", "migrate", "word2vec", "--db", str(db), "--config", cfg_path)
    assert bad.returncode == 1 and "unknown embedding backend" in bad.stderr


def test_migrating_an_empty_vault_just_switches(tmp_path):
    drop_mirrors()
    cfg = load_config(overrides={"embeddings": {"backend": "hash", "dimension": 64}})
    conn = open_store(tmp_path / "v.db")
    idx = VectorIndex(conn, cfg)
    assert idx.migrate("hash", dimension=32)["status"] == "created"
    assert idx.active()["dimension"] == 32
    idx.upsert("s", [("a", "alpha beta")])
    assert idx.search("alpha", k=1)[0].item_id == "a"


@pytest.mark.model
def test_migration_to_minilm(vault, minilm_embedder):
    db, cfg_path, cfg, conn = vault
    cfg384 = load_config(overrides={"embeddings": {"backend": "hash", "dimension": 384}})
    idx = VectorIndex(conn, cfg384, embedder=minilm_embedder)
    res = idx.migrate("minilm", pause_s=0)
    assert res["status"] == "swapped" and res["model_id"] == "minilm:all-MiniLM-L6-v2" and res["items"] == 300
    assert idx.thresholds() == cfg.embeddings.thresholds["all-MiniLM-L6-v2"]
    assert idx.search("i am patient and calm", k=3, space="s")[0].score > 0.5
