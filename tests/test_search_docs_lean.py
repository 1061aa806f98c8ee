"""Y22 (issue 24 §2): search_docs no longer keeps indexed_run_id, which nothing read; an older vault's documents
keep every other column, and the store's writes work on the upgraded table."""

from __future__ import annotations

from kenning.store import search as ssql
from tests.old_vaults import migration_sql, vault_upto

COLS = ("doc_rowid, doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, position, event_start, "
        "event_end, content_sha256, source_changed_run_id")



def _doc(i: int) -> dict:
    return {"doc_kind": "message", "doc_id": f"m{i}", "conversation_id": "c1", "speaker": "Ada", "role": "user",
            "occurred_at_utc": f"2024-06-0{i + 1}T00:00:00Z", "position": i, "event_start": None, "event_end": None,
            "content_sha256": f"h{i}", "source_changed_run_id": "r1"}


def test_old_documents_keep_every_other_column_and_the_store_writes_the_new_table():
    old = vault_upto(118)
    with old:
        for i in range(3):
            old.execute("INSERT INTO search_docs(doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, "
                        "position, event_start, event_end, content_sha256, source_changed_run_id, indexed_run_id) "
                        "VALUES (:doc_kind, :doc_id, :conversation_id, :speaker, :role, :occurred_at_utc, :position, "
                        ":event_start, :event_end, :content_sha256, :source_changed_run_id, 'r1')", _doc(i))
    want = old.execute(f"SELECT {COLS} FROM search_docs ORDER BY doc_rowid").fetchall()
    sql = migration_sql(119)
    with old:
        old.execute(sql)
    assert old.execute(f"SELECT {COLS} FROM search_docs ORDER BY doc_rowid").fetchall() == want
    assert "indexed_run_id" not in {r[1] for r in old.execute("PRAGMA table_info(search_docs)")}
    with old:
        rowid = ssql.insert_doc(old, _doc(3))
        ssql.update_doc(old, 1, {**_doc(0), "content_sha256": "h0b", "source_changed_run_id": "r2"})
    assert rowid == 4
    assert old.execute("SELECT content_sha256, source_changed_run_id FROM search_docs WHERE doc_rowid=1").fetchone() \
        == ("h0b", "r2")
    assert old.execute("SELECT doc_id FROM search_docs WHERE doc_rowid=4").fetchone() == ("m3",)


def test_backlink_input_hashes_are_16_bytes_and_old_hex_ones_are_converted():
    """Y24: back-link Stage 1's record of scanned texts keeps 16 bytes of each sha256; an older vault's hex digests
    are converted, and the store still answers with the digests it is asked about."""
    import hashlib

    from kenning.store import upkeep as usql

    old = vault_upto(118)
    a, b, c = (hashlib.sha256(t.encode()).hexdigest() for t in ("one", "two", "three"))
    with old:
        old.executemany("INSERT INTO backlink_observations(observation_id, input_hash, degraded) VALUES (?,?,0)",
                        [("m1", a), ("m2", b)])
    sql = migration_sql(119)
    with old:
        old.execute(sql)
    assert old.execute("SELECT observation_id, input_hash FROM backlink_observations ORDER BY 1").fetchall() == \
        [("m1", bytes.fromhex(a)[:16]), ("m2", bytes.fromhex(b)[:16])]
    assert usql.scanned_hashes(old, [a, c]) == {a}
    with old:
        usql.mark_observations(old, [("m3", c, 1), ("m1", a, 0)])
    assert usql.scanned_hashes(old, [a, b, c]) == {a, b, c}
    assert old.execute("SELECT count(*), sum(length(input_hash) = 16) FROM backlink_observations").fetchone() == (3, 3)
    plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN SELECT input_hash FROM backlink_observations "
                                              "WHERE input_hash IN (?, ?)", (b"x", b"y")))
    assert "idx_backlink_observations_hash" in plan


def test_the_dropped_changed_messages_index_served_no_query():
    """Y26: with idx_messages_changed still there, the index stage's walk over messages does not use it (it walks
    in conversation order), and no other statement reads messages by last_changed_run_id (the source says so:
    this test greps the package's SQL for a WHERE on it)."""
    import re
    from pathlib import Path

    import kenning

    old = vault_upto(118)
    assert old.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='idx_messages_changed'").fetchone()[0] == 1
    for after in (None, ("c1", 3)):
        q = ("SELECT m.message_id, d.doc_rowid FROM messages m LEFT JOIN search_docs d ON d.doc_kind='message' "
             "AND d.doc_id=m.message_id WHERE m.is_hidden=0 AND (d.doc_rowid IS NULL OR d.source_changed_run_id IS "
             "NOT m.last_changed_run_id) " + ("AND (m.conversation_id, m.order_index) > ('c1', 3) " if after else "")
             + "ORDER BY m.conversation_id, m.order_index LIMIT 10")
        plan = " ".join(r[3] for r in old.execute("EXPLAIN QUERY PLAN " + q))
        assert "idx_messages_changed" not in plan, plan
    src = Path(kenning.__file__).parent
    # a WHERE on the same line as the column: only the index stage's comparison of two columns (above)
    readers = [(p.name, line.strip()) for p in src.rglob("*.py") for line in p.read_text(encoding="utf-8").splitlines()
               if re.search(r"WHERE.*last_changed_run_id", line) and "IS NOT m.last_changed_run_id" not in line]
    assert readers == []
    new = vault_upto(119)
    assert new.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='idx_messages_changed'").fetchone()[0] == 0


def test_document_content_hashes_are_16_bytes_and_old_ones_convert_in_both_tables():
    """Y27: a document's content hash is 16 bytes of the sha256 of its fields' JCS text; an older vault's hex
    hashes convert in search_docs and in search_vector_skips alike, so the skip join still matches; the empty
    "index again" mark stays."""
    from kenning.retrieve.docs import content_hash
    from kenning.sources.jcs import jcs_hash

    fields = {"speaker": "Ada", "body": "hello", "extra": "", "context": ""}
    assert content_hash(fields) == bytes.fromhex(jcs_hash(fields))[:16]
    old = vault_upto(118)
    hexes = [jcs_hash({**fields, "body": f"t{i}"}) for i in range(3)]
    with old:
        for i, h in enumerate(hexes):
            old.execute("INSERT INTO search_docs(doc_kind, doc_id, content_sha256, indexed_run_id) VALUES "
                        "('message', ?, ?, 'r')", (f"m{i}", h if i < 2 else ""))
        old.execute("INSERT INTO search_vector_skips(doc_rowid, content_sha256, reason) VALUES (1, ?, 'code')",
                    (hexes[0],))
    sql = migration_sql(119)
    with old:
        old.execute(sql)
    got = old.execute("SELECT content_sha256 FROM search_docs ORDER BY doc_rowid").fetchall()
    assert got == [(bytes.fromhex(hexes[0])[:16],), (bytes.fromhex(hexes[1])[:16],), ("",)]
    assert old.execute("SELECT COUNT(*) FROM search_docs d JOIN search_vector_skips s ON s.doc_rowid = d.doc_rowid "
                       "AND s.content_sha256 = d.content_sha256").fetchone()[0] == 1
