"""SQL of the vector index: ``vector_items`` (what is indexed), ``vector_tables`` (which sqlite-vec table holds
which model's vectors) and the vec0 tables themselves (DOC72 §3.3, §3.7).

A vec0 table is ``vec0(space TEXT PARTITION KEY, kind TEXT, embedding float[D] distance_metric=cosine)``
whose rowid is ``vector_items.vid``. ``kind`` NULL is stored as '' (vec0 metadata columns refuse NULL).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

import apsw

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, digest_key, marks

TABLE_PREFIX = "vec_items_g"
_TABLE_NAME = re.compile(r"^vec_items_g[0-9]+$")


class VectorStoreError(RuntimeError):
    pass


def table_name(generation: int) -> str:
    return f"{TABLE_PREFIX}{int(generation)}"


def _checked(name: str) -> str:
    if not _TABLE_NAME.match(name):
        raise VectorStoreError(f"not a vector table name: {name!r}")
    return name


# -- the registry ---------------------------------------------------------------------------------------------
def table_with_status(conn: apsw.Connection, status: str) -> dict | None:
    return row(conn, "SELECT * FROM vector_tables WHERE status=?", (status,))


def active_table(conn: apsw.Connection) -> dict | None:
    return table_with_status(conn, "active")


def building_table(conn: apsw.Connection) -> dict | None:
    return table_with_status(conn, "building")


def all_tables(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT * FROM vector_tables ORDER BY generation")


def next_generation(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COALESCE(MAX(generation), 0) + 1 FROM vector_tables"))


ELEMENTS = {"float32": "float", "int8": "int8"}  # vector_tables.element → vec0's column type (X3)


def _element(element: str) -> str:
    if element not in ELEMENTS:
        raise VectorStoreError(f"not a vector element type: {element!r}")
    return element


def _param(element: str) -> str:
    """The SQL that reads a vector parameter of ``element``: vec0 takes an int8 vector only through vec_int8()."""
    return "vec_int8(?)" if _element(element) == "int8" else "?"


def create_table(conn: apsw.Connection, *, generation: int, model_id: str, dimension: int, status: str,
                 created_at_utc: str, version: str, element: str = "float32") -> str:
    """Create the vec0 table of one model generation (vectors stored as ``element``) and register it."""
    name = _checked(table_name(generation))
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING vec0(space TEXT PARTITION KEY, kind TEXT, "
                 f"embedding {ELEMENTS[_element(element)]}[{int(dimension)}] distance_metric=cosine)")
    conn.execute(
        "INSERT INTO vector_tables(table_name, generation, model_id, dimension, status, created_at_utc, "
        "activated_at_utc, built_through_rev, version, element) VALUES (?,?,?,?,?,?,?,0,?,?)",
        (name, generation, model_id, dimension, status, created_at_utc,
         created_at_utc if status == "active" else None, version, element),
    )
    return name


def drop_table(conn: apsw.Connection, name: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {_checked(name)}")


def forget_table(conn: apsw.Connection, name: str) -> None:
    """Drop a (building) table and its registry row."""
    drop_table(conn, name)
    conn.execute("DELETE FROM vector_tables WHERE table_name=?", (name,))


def set_version(conn: apsw.Connection, name: str, version: str) -> None:
    conn.execute("UPDATE vector_tables SET version=? WHERE table_name=?", (version, name))


def table_version(conn: apsw.Connection, name: str) -> str | None:
    return scalar(conn, "SELECT version FROM vector_tables WHERE table_name=?", (name,))


def set_built_through(conn: apsw.Connection, name: str, rev: int) -> None:
    conn.execute("UPDATE vector_tables SET built_through_rev=? WHERE table_name=?", (rev, name))


def swap_active(conn: apsw.Connection, old: str | None, new: str, now_utc: str) -> None:
    """Retire and drop ``old``, activate ``new``. The caller holds the write transaction (DOC72 §3.7 step 2)."""
    if old is not None:
        conn.execute("UPDATE vector_tables SET status='retired', retired_at_utc=? WHERE table_name=?", (now_utc, old))
        drop_table(conn, old)
    conn.execute("UPDATE vector_tables SET status='active', activated_at_utc=? WHERE table_name=?", (now_utc, new))


# -- items ------------------------------------------------------------------------------------------------
def reserve_revs(conn: apsw.Connection, n: int) -> int:
    """Reserve ``n`` change numbers; returns the first."""
    (last,) = conn.execute("UPDATE vector_state SET last_rev = last_rev + ? WHERE id = 1 RETURNING last_rev",
                           (n,)).fetchone()
    return int(last) - n + 1


def last_rev(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT last_rev FROM vector_state WHERE id = 1"))


# What ``vector_items`` and ``embedding_cache`` store of a text's sha256 hex digest (Z3); also takes the 32-hex form
# :func:`shas_of_vids` answers with.
text_key = digest_key


def upsert_items(conn: apsw.Connection, items: Sequence[dict[str, Any]]) -> list[int]:
    """Insert or update items (space, item_id, kind, text, text_sha256 as a hex digest, rev); returns their vids.
    ``text`` None: the item's text is derived from its source when needed (X2)."""
    vids = []
    for it in items:
        (vid,) = conn.execute(
            "INSERT INTO vector_items(space, item_id, kind, text, text_sha256, rev) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(space, item_id) DO UPDATE SET kind=excluded.kind, text=excluded.text, "
            "text_sha256=excluded.text_sha256, rev=excluded.rev "
            "RETURNING vid", (it["space"], it["item_id"], it["kind"], it["text"], text_key(it["text_sha256"]),
                              it["rev"])).fetchone()
        vids.append(int(vid))
    return vids


def items_by_ids(conn: apsw.Connection, space: str, item_ids: Sequence[str]) -> dict[str, dict]:
    """item id → its row; ``text_sha256`` is the stored key (:func:`text_key` of the text's digest)."""
    found: dict[str, dict] = {}
    for chunk in chunks(list(item_ids)):
        q = marks(len(chunk))
        for r in rows(conn, f"SELECT vid, space, item_id, kind, text_sha256, rev FROM vector_items "
                            f"WHERE space=? AND item_id IN ({q})", (space, *chunk)):
            found[r["item_id"]] = r
    return found


def items_by_vids(conn: apsw.Connection, vids: Sequence[int]) -> dict[int, dict]:
    found: dict[int, dict] = {}
    for chunk in chunks(list(vids)):
        q = marks(len(chunk))
        for r in rows(conn, f"SELECT vid, space, item_id, kind FROM vector_items WHERE vid IN ({q})", tuple(chunk)):
            found[int(r["vid"])] = r
    return found


def vids_by_sha(conn: apsw.Connection, hashes: Sequence[str], max_rev: int | None = None) -> dict[str, list[int]]:
    """text sha256 (hex) → the vids of the items embedding that text (``max_rev``: only items with rev <= it),
    each list ascending, keyed by the strings asked about: where the embedding cache finds a text's vector in vec0
    (X1)."""
    asked: dict[bytes, list[str]] = {}
    for h in dict.fromkeys(hashes):
        asked.setdefault(text_key(h), []).append(h)
    found: dict[str, list[int]] = {}
    for chunk in chunks(list(asked)):
        sql = f"SELECT text_sha256, vid FROM vector_items WHERE text_sha256 IN ({marks(len(chunk))})"
        params: list[Any] = list(chunk)
        if max_rev is not None:
            sql += " AND rev <= ?"
            params.append(int(max_rev))
        for key, vid in conn.execute(sql + " ORDER BY vid", params):
            for h in asked[bytes(key)]:
                found.setdefault(h, []).append(int(vid))
    return found


def shas_of_vids(conn: apsw.Connection, vids: Sequence[int]) -> dict[int, str]:
    """vid → the stored key of its text as 32 hex digits (the first half of the sha256 hex digest, Z3)."""
    found: dict[int, str] = {}
    for chunk in chunks(list(vids)):
        found.update((int(vid), bytes(key).hex()) for vid, key in conn.execute(
            f"SELECT vid, text_sha256 FROM vector_items WHERE vid IN ({marks(len(chunk))})", tuple(chunk)))
    return found


def delete_items(conn: apsw.Connection, vids: Sequence[int]) -> None:
    for chunk in chunks(list(vids)):
        conn.execute(f"DELETE FROM vector_items WHERE vid IN ({marks(len(chunk))})", tuple(chunk))


def items_after_rev(conn: apsw.Connection, rev: int, limit: int) -> list[dict]:
    return rows(conn, "SELECT vid, space, item_id, kind, text, text_sha256, rev FROM vector_items WHERE rev > ? "
                      "ORDER BY rev LIMIT ?", (rev, limit))


def count_items(conn: apsw.Connection, space: str | None = None) -> int:
    if space is None:
        return int(scalar(conn, "SELECT COUNT(*) FROM vector_items"))
    return int(scalar(conn, "SELECT COUNT(*) FROM vector_items WHERE space=?", (space,)))


def count_items_after_rev(conn: apsw.Connection, rev: int) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM vector_items WHERE rev > ?", (rev,)))


def spaces(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT space, COUNT(*) AS items FROM vector_items GROUP BY space ORDER BY space")


# -- vectors in one vec0 table ------------------------------------------------------------------------------
def write_vectors(conn: apsw.Connection, name: str, vectors: Sequence[tuple[int, str, str | None, bytes]],
                  element: str = "float32") -> None:
    """Upsert (vid, space, kind, blob) rows; the blob holds ``element`` values (the table's). vec0 has no INSERT OR
    REPLACE: delete, then insert."""
    name = _checked(name)
    vids = [v[0] for v in vectors]
    delete_vectors(conn, name, vids)
    conn.executemany(f"INSERT INTO {name}(rowid, space, kind, embedding) VALUES (?,?,?,{_param(element)})",
                     [(vid, space, kind or "", blob) for vid, space, kind, blob in vectors])


def delete_vectors(conn: apsw.Connection, name: str, vids: Sequence[int]) -> None:
    name = _checked(name)
    for chunk in chunks(list(vids)):
        conn.execute(f"DELETE FROM {name} WHERE rowid IN ({marks(len(chunk))})", tuple(chunk))


def count_vectors(conn: apsw.Connection, name: str) -> int:
    return int(scalar(conn, f"SELECT COUNT(*) FROM {_checked(name)}"))


def vids_in_table(conn: apsw.Connection, name: str) -> set[int]:
    return {int(r[0]) for r in conn.execute(f"SELECT rowid FROM {_checked(name)}")}


def vids_of_items(conn: apsw.Connection) -> set[int]:
    return {int(r[0]) for r in conn.execute("SELECT vid FROM vector_items")}


def all_vectors(conn: apsw.Connection, name: str) -> Iterable[tuple[int, str, str, str, bytes]]:
    """(vid, space, item_id, kind, blob) of every vector: what an in-memory mirror loads."""
    return conn.execute(f"SELECT v.rowid, i.space, i.item_id, i.kind, v.embedding FROM {_checked(name)} v "
                        f"JOIN vector_items i ON i.vid = v.rowid")


def vector_blobs(conn: apsw.Connection, name: str) -> Iterable[tuple[int, bytes]]:
    """(vid, blob) of every vector, in the order of vec0's full scan (the order :func:`all_vectors` gives)."""
    return conn.execute(f"SELECT rowid, embedding FROM {_checked(name)}")


def item_columns(conn: apsw.Connection) -> list[tuple[int, str, str, str | None]]:
    """(vid, space, item_id, kind) of every item, by vid."""
    return conn.execute("SELECT vid, space, item_id, kind FROM vector_items ORDER BY vid").fetchall()


def item_columns_joined(conn: apsw.Connection) -> tuple[int, str, str, str, str]:
    """:func:`item_columns` as one row: (how many, the vids joined by ',', then item_id, space and kind (NULL as '')
    each joined by :data:`UNIT_SEP`), in the table's order — a million rows cost ~0.4 s this way against ~1 s as
    row tuples (R60). The caller checks the pieces add up (a value holding the separator makes one more)."""
    n, vids, ids, spaces, kinds = conn.execute(
        "SELECT COUNT(*), group_concat(vid, ','), group_concat(item_id, char(31)), group_concat(space, char(31)), "
        "group_concat(coalesce(kind, ''), char(31)) FROM vector_items").fetchone()
    return int(n), vids or "", ids or "", spaces or "", kinds or ""


UNIT_SEP = "\x1f"  # char(31): what the *_joined reads put between values


# sqlite-vec versions whose vec0 storage :func:`vec0_chunks` reads directly (R60): a ``{name}_chunks`` row per chunk
# (size, a validity bitmap, the slots' rowids as int64) and its vectors in ``{name}_vector_chunks00`` (size x D
# float32, or int8 for an int8 table: X3); the full scan returns the valid slots chunk by chunk (chunk_id ascending, then slot). Another version:
# the mirror reads through the virtual table (:func:`vector_blobs`), ~10x slower at 1M vectors.
VEC0_READ_VERSIONS = ("v0.1.9",)


def vec0_versions(conn: apsw.Connection, name: str) -> tuple[str | None, str | None]:
    """(the loaded sqlite-vec's version, the version that created table ``name``)."""
    name = _checked(name)
    try:
        loaded = scalar(conn, "SELECT vec_version()")
        created = scalar(conn, f"SELECT value FROM {name}_info WHERE key='CREATE_VERSION'")
    except apsw.SQLError:
        return None, None
    return loaded, created


def vec0_chunks(conn: apsw.Connection, name: str) -> list[tuple[int, int, bytes, bytes]]:
    """(chunk_id, size, validity, rowids) of every chunk of vec0 table ``name``, from its shadow table (the storage
    of :data:`VEC0_READ_VERSIONS`), chunk_id ascending: vec0's full-scan order. The vectors: :class:`Vec0Vectors`."""
    return conn.execute(f"SELECT chunk_id, size, validity, rowids FROM {_checked(name)}_chunks "
                        f"ORDER BY chunk_id").fetchall()


class Vec0Vectors:
    """A chunk's vectors (``{name}_vector_chunks00.vectors``, size x D float32 or int8) read straight into a caller's buffer
    through SQLite's incremental blob I/O — no 1.5 MB bytes object per chunk (their allocations cost more than the
    reading, R60). Use inside the caller's read transaction; ``close()`` after."""

    def __init__(self, conn: apsw.Connection, name: str):
        self.conn, self.table, self.blob = conn, f"{_checked(name)}_vector_chunks00", None

    def read_into(self, chunk_id: int, buf) -> bool:
        """Fill ``buf`` (a writable buffer of the blob's exact length) with chunk ``chunk_id``'s vectors; False
        when the blob is missing or of another length."""
        try:
            if self.blob is None:
                self.blob = self.conn.blob_open("main", self.table, "vectors", int(chunk_id), False)
            else:
                self.blob.reopen(int(chunk_id))
        except apsw.Error:
            return False
        view = memoryview(buf).cast("B")
        if self.blob.length() != len(view):
            return False
        self.blob.readinto(view)
        return True

    def close(self) -> None:
        if self.blob is not None:
            self.blob.close()
            self.blob = None


def vec0_row_count(conn: apsw.Connection, name: str) -> int:
    """How many vectors vec0 table ``name`` holds, from its rowid shadow table (one row per vector)."""
    return int(scalar(conn, f"SELECT COUNT(*) FROM {_checked(name)}_rowids"))


def get_vectors(conn: apsw.Connection, name: str, vids: Sequence[int]) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    for chunk in chunks(list(vids)):
        q = marks(len(chunk))
        for vid, blob in conn.execute(f"SELECT rowid, embedding FROM {_checked(name)} WHERE rowid IN ({q})",
                                      tuple(chunk)):
            found[int(vid)] = blob
    return found


def knn(conn: apsw.Connection, name: str, query: bytes, k: int, *, space: str | None = None,
        kinds: Sequence[str] | None = None, vids: Sequence[int] | None = None,
        element: str = "float32") -> list[tuple[int, float]]:
    """Exact top-k by cosine distance with sqlite-vec; returns (vid, distance) nearest first. ``query`` holds
    ``element`` values (the table's)."""
    name = _checked(name)
    qp = _param(element)
    if vids is not None:
        # An allow-list: score exactly those rows (a small set, typically) instead of a KNN scan.
        out: list[tuple[int, float]] = []
        for chunk in chunks(list(vids)):
            sql = (f"SELECT rowid, vec_distance_cosine(embedding, {qp}) FROM {name} "
                   f"WHERE rowid IN ({marks(len(chunk))})")
            params: list[Any] = [query, *chunk]
            if space is not None:
                sql += " AND space = ?"
                params.append(space)
            if kinds is not None:
                sql += f" AND kind IN ({marks(len(kinds))})"
                params.extend(kinds)
            out.extend((int(v), float(d)) for v, d in conn.execute(sql, params))
        out.sort(key=lambda t: (t[1], t[0]))
        return out[:k]
    sql = f"SELECT rowid, distance FROM {name} WHERE embedding MATCH {qp} AND k = ?"
    params = [query, int(k)]
    if space is not None:
        sql += " AND space = ?"
        params.append(space)
    if kinds is not None:
        sql += f" AND kind IN ({marks(len(kinds))})"
        params.extend(kinds)
    return [(int(v), float(d)) for v, d in conn.execute(sql, params)]
