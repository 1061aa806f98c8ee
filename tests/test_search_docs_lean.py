"""Y22 (issue 24 §2): search_docs no longer keeps indexed_run_id, which nothing read; an older vault's documents
keep every other column, and the store's writes work on the upgraded table."""

from __future__ import annotations

import apsw

from kenning.store import rawpack, search_recode
from kenning.store import search as ssql
from kenning.store.migrate import available_migrations

COLS = ("doc_rowid, doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, position, event_start, "
        "event_end, content_sha256, source_changed_run_id")


def _vault(upto: int) -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    rawpack.register(conn)
    search_recode.register(conn)
    for version, _name, sql in available_migrations():
        if version <= upto:
            with conn:
                conn.execute(sql)
    return conn


def _doc(i: int) -> dict:
    return {"doc_kind": "message", "doc_id": f"m{i}", "conversation_id": "c1", "speaker": "Ada", "role": "user",
            "occurred_at_utc": f"2024-06-0{i + 1}T00:00:00Z", "position": i, "event_start": None, "event_end": None,
            "content_sha256": f"h{i}", "source_changed_run_id": "r1"}


def test_old_documents_keep_every_other_column_and_the_store_writes_the_new_table():
    old = _vault(118)
    with old:
        for i in range(3):
            old.execute("INSERT INTO search_docs(doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, "
                        "position, event_start, event_end, content_sha256, source_changed_run_id, indexed_run_id) "
                        "VALUES (:doc_kind, :doc_id, :conversation_id, :speaker, :role, :occurred_at_utc, :position, "
                        ":event_start, :event_end, :content_sha256, :source_changed_run_id, 'r1')", _doc(i))
    want = old.execute(f"SELECT {COLS} FROM search_docs ORDER BY doc_rowid").fetchall()
    sql = next(s for v, _n, s in available_migrations() if v == 119)
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
