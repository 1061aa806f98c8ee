"""SQL of the embedding cache: vectors keyed by (model, dimension, the first 16 bytes of the text's sha256, Z3) —
only those no vec0 table holds (queries, texts of removed items): a text an item embeds is found through
``vector_items.text_sha256`` (X1)."""

from __future__ import annotations

from typing import Iterable, Sequence

import apsw

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import chunks, marks
from kenning.store.vectors import text_key


def get_many(conn: apsw.Connection, model_id: str, dimension: int, hashes: Sequence[str]) -> dict[str, bytes]:
    """text sha256 (hex) → its cached vector, keyed by the strings asked about (the rows keep 16 bytes, Z3)."""
    asked: dict[bytes, list[str]] = {}
    for h in dict.fromkeys(hashes):
        asked.setdefault(text_key(h), []).append(h)
    found: dict[str, bytes] = {}
    for chunk in chunks(list(asked)):
        q = marks(len(chunk))
        for key, blob in conn.execute(
                f"SELECT text_sha256, vector FROM embedding_cache WHERE model_id=? AND dimension=? "
                f"AND text_sha256 IN ({q})", (model_id, dimension, *chunk)):
            for h in asked[bytes(key)]:
                found[h] = blob
    return found


def put_many(conn: apsw.Connection, model_id: str, dimension: int, items: Iterable[tuple[str, bytes]],
             created_at_utc: str) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache(model_id, dimension, text_sha256, vector, created_at_utc) "
        "VALUES (?,?,?,?,?)",
        [(model_id, dimension, text_key(h), blob, created_at_utc) for h, blob in items],
    )


def delete_many(conn: apsw.Connection, model_id: str, dimension: int, hashes: Sequence[str]) -> None:
    """Drop the rows of ``hashes``: their vectors are in a vec0 table now (X1)."""
    for chunk in chunks(list(dict.fromkeys(text_key(h) for h in hashes))):
        conn.execute(f"DELETE FROM embedding_cache WHERE model_id=? AND dimension=? AND text_sha256 IN "
                     f"({marks(len(chunk))})", (model_id, dimension, *chunk))


def stats(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT model_id, dimension, COUNT(*) AS vectors FROM embedding_cache "
                      "GROUP BY model_id, dimension ORDER BY model_id, dimension")


def count(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM embedding_cache"))
