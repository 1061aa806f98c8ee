"""SQL of the embedding cache: vectors keyed by (model, dimension, sha256 of the text) — only those no vec0 table
holds (queries, texts of removed items): a text an item embeds is found through ``vector_items.text_sha256`` (X1)."""

from __future__ import annotations

from typing import Iterable, Sequence

import apsw

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import chunks, marks


def get_many(conn: apsw.Connection, model_id: str, dimension: int, hashes: Sequence[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    unique = list(dict.fromkeys(hashes))
    for chunk in chunks(unique):
        q = marks(len(chunk))
        for h, blob in conn.execute(
                f"SELECT text_sha256, vector FROM embedding_cache WHERE model_id=? AND dimension=? "
                f"AND text_sha256 IN ({q})", (model_id, dimension, *chunk)):
            found[h] = blob
    return found


def put_many(conn: apsw.Connection, model_id: str, dimension: int, items: Iterable[tuple[str, bytes]],
             created_at_utc: str) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache(model_id, dimension, text_sha256, vector, created_at_utc) "
        "VALUES (?,?,?,?,?)",
        [(model_id, dimension, h, blob, created_at_utc) for h, blob in items],
    )


def delete_many(conn: apsw.Connection, model_id: str, dimension: int, hashes: Sequence[str]) -> None:
    """Drop the rows of ``hashes``: their vectors are in a vec0 table now (X1)."""
    for chunk in chunks(list(dict.fromkeys(hashes))):
        conn.execute(f"DELETE FROM embedding_cache WHERE model_id=? AND dimension=? AND text_sha256 IN "
                     f"({marks(len(chunk))})", (model_id, dimension, *chunk))


def stats(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT model_id, dimension, COUNT(*) AS vectors FROM embedding_cache "
                      "GROUP BY model_id, dimension ORDER BY model_id, dimension")


def count(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM embedding_cache"))
