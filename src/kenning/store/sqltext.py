"""SQL text shared by the store modules: placeholders, INSERT/UPDATE statements, chunked IN-lists, and the two
row operations every table with an id needs (update some columns; find a row by an id prefix), and the stored form
of a sha256 hex digest used only to recognise a text again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apsw

from kenning.store.connection import rows

# Parameters per IN-list: well under SQLite's variable limit, and long enough that chunking costs nothing.
CHUNK = 500


def chunks(items: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def marks(n: int) -> str:
    """``n`` comma-separated placeholders, for ``IN (…)`` and ``VALUES (…)``."""
    return ",".join("?" * n)


def insert_sql(table: str, cols: Sequence[str], verb: str = "INSERT") -> str:
    return f"{verb} INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"


def update_sql(table: str, key: str, cols: Iterable[str]) -> str:
    return f"UPDATE {table} SET {', '.join(f'{c}=?' for c in cols)} WHERE {key}=?"


def update_row(conn: apsw.Connection, table: str, key: str, key_value: Any, values: dict[str, Any]) -> None:
    """Set ``values`` (column → value) on the row whose ``key`` is ``key_value``; nothing to set is a no-op."""
    if values:
        cols = sorted(values)
        conn.execute(update_sql(table, key, cols), (*(values[c] for c in cols), key_value))


def unique_by_prefix(conn: apsw.Connection, table: str, key: str, prefix: str) -> dict | None:
    """The one row whose ``key`` starts with ``prefix`` (what a user types from a shortened id), or None when no
    row or more than one does."""
    found = rows(conn, f"SELECT * FROM {table} WHERE {key} LIKE ? || '%' LIMIT 2", (prefix,))
    return found[0] if len(found) == 1 else None


def digest_key(sha256_hex: str) -> bytes:
    """What a table stores of a text's sha256 hex digest when the digest only recognises the text again: its first 16
    bytes (N12's width; Y24, Z3). Also takes an already shortened 32-hex form."""
    return bytes.fromhex(sha256_hex[:32])
