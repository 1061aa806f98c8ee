"""Stage 2A's per-message state (docs/decisions.md N12): keyed by the message's rowid, 16 bytes of a hash that
covers the message id; a state that is missing or points at another message causes a recompute, never a skip or a
duplicate row; migration 0114 turns an older vault's state and rules-NER log into the small form."""

from __future__ import annotations

import json

import apsw
import pytest

from entity_corpus import corpus
from exportkit import dump_tables, ingest, query, write_export



@pytest.fixture
def built(tmp_path):
    export = write_export(tmp_path / "c.json", corpus())
    db = tmp_path / "k.db"
    ingest(db, export)
    return db, export


def _stage_rows(db) -> dict:
    """What stage 2A itself writes (2B's lexicon build numbers and entity ids move with any recompute, as before)."""
    return {"time_mentions": dump_tables(db)["time_mentions"],
            "candidates": [tuple(r.values()) for r in query(
                db, "SELECT candidate_id, message_id, detector, detector_version, char_start, char_end, surface_text, "
                    "surface_hash, confidence, raw_candidate_json FROM entity_mention_candidates "
                    "WHERE detector NOT LIKE 'LEXICON:%' ORDER BY candidate_id")]}


def _raw(db) -> apsw.Connection:
    return apsw.Connection(str(db))


def test_state_is_a_rowid_and_sixteen_bytes(built):
    db, _ = built
    rows = query(db, "SELECT s.message_rowid, s.input_hash, m.message_id FROM detect_message_state s "
                     "JOIN messages m ON m.rowid = s.message_rowid")
    n_text = query(db, "SELECT COUNT(*) n FROM messages WHERE text_raw IS NOT NULL")[0]["n"]
    assert len(rows) == n_text > 10
    assert all(isinstance(r["input_hash"], bytes) and len(r["input_hash"]) == 16 for r in rows)
    cols = [r["name"] for r in query(db, "SELECT name FROM pragma_table_info('detect_message_state')")]
    assert cols == ["message_rowid", "input_hash"]


def test_swapped_or_missing_states_recompute_the_same_rows(built):
    db, export = built
    before = _stage_rows(db)
    conn = _raw(db)
    ids = [r[0] for r in conn.execute("SELECT message_rowid FROM detect_message_state ORDER BY message_rowid")]
    a, b = ids[0], ids[1]
    ha, hb = (conn.execute("SELECT input_hash FROM detect_message_state WHERE message_rowid=?", (r,)).fetchone()[0]
              for r in (a, b))
    with conn:  # two states swapped (as if rowids had moved) and two lost
        conn.execute("UPDATE detect_message_state SET input_hash=? WHERE message_rowid=?", (hb, a))
        conn.execute("UPDATE detect_message_state SET input_hash=? WHERE message_rowid=?", (ha, b))
        conn.execute("DELETE FROM detect_message_state WHERE message_rowid IN (?, ?)", (ids[2], ids[3]))
        conn.execute("INSERT INTO detect_message_state VALUES (?, x'00')", (10**9,))  # no such message
    conn.close()
    results = ingest(db, export, as_of="2025-03-01T00:00:00Z", stages="2A,2B,3")
    counts = next(r.counts for r in results if r.stage == "2A")
    assert counts["messages_processed"] == 4  # never a skip on a foreign hash, never a UNIQUE clash
    assert counts["detect_states_pruned"] == 1
    assert _stage_rows(db) == before
    assert query(db, "SELECT COUNT(*) n FROM detect_message_state WHERE message_rowid = ?", (10**9,))[0]["n"] == 0


def test_migration_0114_shrinks_an_older_vault_and_the_next_run_rebuilds_the_same(built, tmp_path):
    db, export = built
    before = _stage_rows(db)
    conn = _raw(db)
    run_id = conn.execute("SELECT run_id FROM ner_model_runs WHERE model_name='kenning-rules'").fetchone()[0]
    with conn:  # the vault as 0113 left it: the old state table and the rules run's per-message log
        conn.execute("DROP TABLE detect_message_state")
        conn.execute("CREATE TABLE detect_message_state (message_id TEXT PRIMARY KEY REFERENCES messages(message_id),"
                     " input_hash TEXT NOT NULL, run_id TEXT NOT NULL)")
        conn.execute("INSERT INTO detect_message_state SELECT message_id, 'x', 'r' FROM messages")
        conn.execute("INSERT INTO ner_model_run_io SELECT ?, message_id, 'h', '[[0,1]]', '[]' FROM messages",
                     (run_id,))
        conn.execute("UPDATE ner_model_runs SET raw_io_json = '{\"io_table\":\"ner_model_run_io\",\"messages\":3}'")
        conn.execute("DELETE FROM schema_migrations WHERE version = 114")   # later ones (0118–0119) stay applied
    conn.close()
    results = ingest(db, export, as_of="2025-03-01T00:00:00Z")  # opening upgrades; the run recomputes every message
    counts = {r.stage: r.counts for r in results}
    assert counts["2A"]["messages_processed"] == counts["2A"]["messages_seen"] > 10
    assert _stage_rows(db) == before
    assert query(db, "SELECT COUNT(*) n FROM ner_model_run_io")[0]["n"] == 0
    old = query(db, "SELECT raw_io_json FROM ner_model_runs WHERE run_id=?", (run_id,))[0]["raw_io_json"]
    assert json.loads(old) == {"io_table": None, "messages": 3, "replay": "rerun"}
    again = {r.stage: r.counts for r in ingest(db, export, as_of="2025-04-01T00:00:00Z")}
    assert again["2A"]["messages_unchanged"] == again["2A"]["messages_seen"]
