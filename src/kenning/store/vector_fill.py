"""SQL of the deferred vector lane (issue 24 §1): which search documents still need a vector, which are skipped."""

from __future__ import annotations

from typing import Sequence

import apsw

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import chunks, marks

# a document that still needs a vector: none in the space, and not skipped for its current content
_PENDING = ("FROM search_docs d LEFT JOIN vector_items v ON v.space = ? AND v.item_id = CAST(d.doc_rowid AS TEXT) "
            "LEFT JOIN search_vector_skips s ON s.doc_rowid = d.doc_rowid AND s.content_sha256 = d.content_sha256 "
            "WHERE v.vid IS NULL AND s.doc_rowid IS NULL")


def pending_docs(conn: apsw.Connection, space: str, after: int, limit: int, assistant: bool | None = None
                 ) -> list[dict]:
    """Up to ``limit`` documents needing a vector, by doc_rowid after ``after``; ``assistant`` True / False: only
    assistant answers / only the others (None: all)."""
    who = "" if assistant is None else (" AND d.role IS 'assistant'" if assistant else " AND d.role IS NOT 'assistant'")
    return rows(conn, "SELECT d.doc_rowid, d.doc_kind, d.doc_id, d.speaker, d.role, d.content_sha256 "
                      f"{_PENDING}{who} AND d.doc_rowid > ? ORDER BY d.doc_rowid LIMIT ?", (space, after, limit))


def pending_count(conn: apsw.Connection, space: str) -> int:
    return int(scalar(conn, f"SELECT COUNT(*) {_PENDING}", (space,)) or 0)


def lane_counts(conn: apsw.Connection, space: str) -> tuple[int, int]:
    """(documents with a vector, documents that should have one) — three counts, no join (cheap enough for every
    search: ~ms at 100k documents)."""
    docs = int(scalar(conn, "SELECT COUNT(*) FROM search_docs") or 0)
    skipped = int(scalar(conn, "SELECT COUNT(*) FROM search_vector_skips") or 0)
    have = int(scalar(conn, "SELECT COUNT(*) FROM vector_items WHERE space = ?", (space,)) or 0)
    return have, max(have, docs - skipped)


def docs_for_fill(conn: apsw.Connection, doc_rowids: Sequence[int]) -> list[dict]:
    out: list[dict] = []
    for chunk in chunks(list(doc_rowids)):
        out += rows(conn, "SELECT doc_rowid, doc_kind, doc_id, speaker, role, content_sha256 FROM search_docs "
                          f"WHERE doc_rowid IN ({marks(len(chunk))}) ORDER BY doc_rowid", chunk)
    return out


def content_shas(conn: apsw.Connection, doc_rowids: Sequence[int]) -> dict[int, str]:
    """doc_rowid → content_sha256 of the documents that still exist."""
    out: dict[int, str] = {}
    for chunk in chunks(list(doc_rowids)):
        out.update(conn.execute(f"SELECT doc_rowid, content_sha256 FROM search_docs WHERE doc_rowid IN "
                                f"({marks(len(chunk))})", chunk).fetchall())
    return out


def with_vectors(conn: apsw.Connection, space: str, doc_rowids: Sequence[int]) -> list[int]:
    """Those of ``doc_rowids`` that have a vector item in ``space``."""
    out: list[int] = []
    for chunk in chunks([str(r) for r in doc_rowids]):
        out += [int(i) for (i,) in conn.execute(f"SELECT item_id FROM vector_items WHERE space = ? AND item_id IN "
                                                 f"({marks(len(chunk))})", (space, *chunk))]
    return sorted(out)


def put_skips(conn: apsw.Connection, skips: Sequence[tuple[int, str, str]]) -> None:
    """(doc_rowid, content_sha256, reason) rows."""
    conn.executemany("INSERT OR REPLACE INTO search_vector_skips(doc_rowid, content_sha256, reason) VALUES (?,?,?)",
                     skips)


def drop_skips(conn: apsw.Connection, doc_rowids: Sequence[int]) -> None:
    for chunk in chunks(list(doc_rowids)):
        conn.execute(f"DELETE FROM search_vector_skips WHERE doc_rowid IN ({marks(len(chunk))})", chunk)


def prune_skips(conn: apsw.Connection) -> int:
    """Skip rows of documents that are gone or changed (decided again when they are next pending)."""
    conn.execute("DELETE FROM search_vector_skips WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE "
                 "d.doc_rowid = search_vector_skips.doc_rowid AND d.content_sha256 = search_vector_skips.content_sha256)")
    return conn.changes()


def skip_counts(conn: apsw.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT reason, COUNT(*) FROM search_vector_skips GROUP BY reason ORDER BY reason"))
