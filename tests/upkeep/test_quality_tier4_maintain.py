"""`kenning maintain` resolves the Tier 4 queue as its "tier4" step when a model is configured (seed 003
§42A.2.19 resolve_tier4_queue; decision H7): skipped, saying why, without one; with the OpenAI-compatible test
server, queued mentions resolve and every call is logged."""

from __future__ import annotations

import json
import shutil

import apsw

from kenning.llm.testserver import Answer
from tests.conftest import TEST_KEY, run_cli


def _queued(db) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM backlink_tier4_queue WHERE status='queued'").fetchall()[0][0]
    finally:
        conn.close()


def test_maintain_runs_the_tier4_batch_only_with_a_model(backlinks_db, tmp_path, llm_server):
    db = tmp_path / "v.db"
    shutil.copy(backlinks_db, db)
    queued = _queued(db)
    assert queued > 0
    plain = tmp_path / "plain.yaml"
    plain.write_text("embeddings: {backend: hash}\n")
    r = run_cli("maintain", "--json", "--as-of", "2024-06-02T00:00:00Z", "--config", str(plain), db=db)
    step = json.loads(r.stdout)["steps"]["tier4"]
    assert "no model configured" in step["tier4_skipped"] and _queued(db) == queued

    llm_server.default_chat = Answer.json({"matched_candidate_id": "c1", "confidence": 0.8})
    model = tmp_path / "model.yaml"
    model.write_text(f"embeddings: {{backend: hash}}\nllm: {{base_url: '{llm_server.base_url}', "
                     "model: kenning-test-model, backoff_initial_s: 0.001, backoff_max_s: 0.01}\n"
                     "maintain_tier4: {limit: 1}\n")
    r = run_cli("maintain", "--json", "--as-of", "2024-06-03T00:00:00Z", "--config", str(model), db=db,
                env={"KENNING_LLM_API_KEY": TEST_KEY})
    step = json.loads(r.stdout)["steps"]["tier4"]
    assert step["tier4_resolved"] == 1 and step.get("llm_run_id")
    assert _queued(db) == queued - 1   # at most `limit` a night
    assert len(llm_server.chat_requests) == 1
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    logged = conn.execute("SELECT count(*) FROM llm_extraction_calls WHERE run_id=? AND prompt_version LIKE "
                          "'tier4_resolution@v1#%'", (step["llm_run_id"],)).fetchall()
    conn.close()
    assert logged[0][0] == 1
