"""The search FTS table as it was before migration 0120 (detail=full), as a test's reference (decisions C1, C2)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from kenning.store import search as search_sql


def _rebuild(conn, detail: str, extra: Sequence[tuple]) -> None:
    with conn:
        search_sql.fts_rebuild(conn, detail)
        if extra:  # documents a test indexed by hand, with no message behind them
            conn.executemany("INSERT INTO search_fts(rowid, speaker, body, extra, context) VALUES (?,?,?,?,?)",
                             list(extra))


@contextmanager
def full_table(v, extra: Sequence[tuple] = ()) -> Iterator[None]:
    """Inside: the FTS table with positions (FTS5's bm25() and kenning_hits count the hits — the reference the
    forward index's counts are held to); afterwards the table is made with detail=column again. ``extra``:
    (rowid, speaker, body, extra, context) of hand-indexed documents, put back in both tables."""
    _rebuild(v.conn, "full", extra)
    try:
        yield
    finally:
        _rebuild(v.conn, "column", extra)
