"""SQL of the search index: search_docs, the contentless FTS5 table, and sqlite-vec tables per vector space."""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

import apsw
import numpy as np

from kenning.store.connection import rows, scalar

_SPACE = re.compile(r"^[a-z0-9_]{1,64}$")


# -- what needs indexing -----------------------------------------------------------------------------

def messages_to_index(conn: apsw.Connection, limit: int, after: tuple[str, int] | None = None) -> list[dict]:
    """Visible messages whose index entry is missing or older than their last change (keyset-paged)."""
    sql = (
        "SELECT m.message_id, m.conversation_id, m.role, m.author_name, m.created_at_utc, m.order_index, "
        "m.text_raw, m.last_changed_run_id, d.doc_rowid, d.content_sha256 "
        "FROM messages m LEFT JOIN search_docs d ON d.doc_kind='message' AND d.doc_id=m.message_id "
        "WHERE m.is_hidden=0 AND (d.doc_rowid IS NULL OR d.source_changed_run_id IS NOT m.last_changed_run_id) "
    )
    params: list[Any] = []
    if after is not None:
        sql += "AND (m.conversation_id, m.order_index) > (?, ?) "
        params += list(after)
    sql += "ORDER BY m.conversation_id, m.order_index LIMIT ?"
    params.append(limit)
    return rows(conn, sql, params)


def previous_texts(conn: apsw.Connection, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """Text of the message just before each (conversation, order_index)."""
    out: dict[tuple[str, int], str] = {}
    for cid, pos in keys:
        r = conn.execute("SELECT text_raw FROM messages WHERE conversation_id=? AND order_index<? AND is_hidden=0 "
                         "ORDER BY order_index DESC LIMIT 1", (cid, pos)).fetchone()
        if r and r[0]:
            out[(cid, pos)] = r[0]
    return out


def attachment_texts(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, list[str]]:
    """Captions of image/file parts, per message."""
    out: dict[str, list[str]] = {}
    for i in range(0, len(message_ids), 500):
        chunk = list(message_ids[i:i + 500])
        for mid, text in conn.execute(
                f"SELECT message_id, text_content FROM message_parts WHERE part_type IN ('image','file') "
                f"AND message_id IN ({','.join('?' * len(chunk))}) ORDER BY message_id, part_index", chunk):
            bits = out.setdefault(mid, [])
            if text:
                bits.append(text)
    return out


def insert_doc(conn: apsw.Connection, doc: dict) -> int:
    conn.execute(
        "INSERT INTO search_docs(doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, position, "
        "event_start, event_end, content_sha256, source_changed_run_id, indexed_run_id) VALUES (:doc_kind, :doc_id, "
        ":conversation_id, :speaker, :role, :occurred_at_utc, :position, :event_start, :event_end, :content_sha256, "
        ":source_changed_run_id, :indexed_run_id)",
        doc)
    return int(conn.last_insert_rowid())


def update_doc(conn: apsw.Connection, doc_rowid: int, doc: dict) -> None:
    conn.execute(
        "UPDATE search_docs SET conversation_id=:conversation_id, speaker=:speaker, role=:role, "
        "occurred_at_utc=:occurred_at_utc, position=:position, event_start=:event_start, event_end=:event_end, "
        "content_sha256=:content_sha256, "
        "source_changed_run_id=:source_changed_run_id, indexed_run_id=:indexed_run_id WHERE doc_rowid=:doc_rowid",
        {**doc, "doc_rowid": doc_rowid})


def invalidate_next(conn: apsw.Connection, conversation_id: str, position: int) -> None:
    """The document after a changed one indexes its text as context: mark it for re-indexing."""
    conn.execute("UPDATE search_docs SET source_changed_run_id=NULL WHERE doc_rowid=(SELECT doc_rowid FROM "
                 "search_docs WHERE conversation_id=? AND position>? AND doc_kind='message' ORDER BY position "
                 "LIMIT 1)", (conversation_id, position))


def touch_doc(conn: apsw.Connection, doc_rowid: int, source_changed_run_id: str) -> None:
    conn.execute("UPDATE search_docs SET source_changed_run_id=? WHERE doc_rowid=?", (source_changed_run_id, doc_rowid))


def fts_insert(conn: apsw.Connection, items: Iterable[tuple[int, str, str, str, str]]) -> None:
    conn.executemany("INSERT INTO search_fts(rowid, speaker, body, extra, context) VALUES (?,?,?,?,?)", items)


def fts_delete(conn: apsw.Connection, doc_rowids: Iterable[int]) -> None:
    conn.executemany("DELETE FROM search_fts WHERE rowid=?", [(r,) for r in doc_rowids])


def orphan_message_docs(conn: apsw.Connection) -> list[int]:
    return [r for (r,) in conn.execute(
        "SELECT d.doc_rowid FROM search_docs d LEFT JOIN messages m ON m.message_id=d.doc_id "
        "WHERE d.doc_kind='message' AND (m.message_id IS NULL OR m.is_hidden=1)")]


def delete_docs(conn: apsw.Connection, doc_rowids: Sequence[int]) -> None:
    fts_delete(conn, doc_rowids)
    for space in vector_spaces(conn):
        conn.executemany(f"DELETE FROM {space['table_name']} WHERE rowid=?", [(r,) for r in doc_rowids])
        conn.executemany("DELETE FROM search_vector_state WHERE space=? AND doc_rowid=?",
                         [(space["space"], r) for r in doc_rowids])
    conn.executemany("DELETE FROM search_docs WHERE doc_rowid=?", [(r,) for r in doc_rowids])


def clear_index(conn: apsw.Connection) -> None:
    """Everything derived, gone: the next index run rebuilds it from the raw layer."""
    conn.execute("INSERT INTO search_fts(search_fts) VALUES('delete-all')")
    for space in vector_spaces(conn):
        conn.execute(f"DROP TABLE IF EXISTS {space['table_name']}")
    conn.execute("DELETE FROM search_vector_state")
    conn.execute("DELETE FROM search_vector_spaces")
    conn.execute("DELETE FROM search_docs")


def doc_count(conn: apsw.Connection, kind: str | None = None) -> int:
    if kind is None:
        return int(scalar(conn, "SELECT COUNT(*) FROM search_docs"))
    return int(scalar(conn, "SELECT COUNT(*) FROM search_docs WHERE doc_kind=?", (kind,)))


# -- vector spaces ---------------------------------------------------------------------------------------

def vector_spaces(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT * FROM search_vector_spaces ORDER BY space")


def vector_space(conn: apsw.Connection, space: str) -> dict | None:
    found = rows(conn, "SELECT * FROM search_vector_spaces WHERE space=?", (space,))
    return found[0] if found else None


def ensure_vector_space(conn: apsw.Connection, space: str, backend: str, model: str, dim: int, run_id: str) -> str:
    if not _SPACE.match(space):
        raise ValueError(f"bad vector space name {space!r}")
    found = vector_space(conn, space)
    if found is not None:
        if int(found["dim"]) != dim:
            raise ValueError(f"vector space {space} has dimension {found['dim']}, not {dim}")
        return found["table_name"]
    table = f"search_vec_{space}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(embedding float[{int(dim)}] "
                 f"distance_metric=cosine, occurred_at_utc text, speaker text)")
    conn.execute("INSERT INTO search_vector_spaces(space, backend, model, dim, table_name, created_run_id) "
                 "VALUES (?,?,?,?,?,?)", (space, backend, model, dim, table, run_id))
    return table


def docs_to_embed(conn: apsw.Connection, space: str, limit: int) -> list[dict]:
    return rows(conn, "SELECT d.doc_rowid, d.doc_id, d.doc_kind, d.speaker, d.occurred_at_utc, d.content_sha256 "
                      "FROM search_docs d LEFT JOIN search_vector_state v ON v.space=? AND v.doc_rowid=d.doc_rowid "
                      "WHERE v.doc_rowid IS NULL OR v.content_sha256 != d.content_sha256 "
                      "ORDER BY d.doc_rowid LIMIT ?", (space, limit))


def put_vectors(conn: apsw.Connection, space: str, table: str, docs: Sequence[dict], vectors: np.ndarray) -> None:
    ids = [(d["doc_rowid"],) for d in docs]
    conn.executemany(f"DELETE FROM {table} WHERE rowid=?", ids)
    conn.executemany(f"INSERT INTO {table}(rowid, embedding, occurred_at_utc, speaker) VALUES (?,?,?,?)",
                     [(d["doc_rowid"], np.asarray(v, dtype=np.float32).tobytes(), d["occurred_at_utc"] or "",
                       d["speaker"] or "") for d, v in zip(docs, vectors)])
    conn.executemany("INSERT INTO search_vector_state(space, doc_rowid, content_sha256) VALUES (?,?,?) "
                     "ON CONFLICT(space, doc_rowid) DO UPDATE SET content_sha256=excluded.content_sha256",
                     [(space, d["doc_rowid"], d["content_sha256"]) for d in docs])


def vector_count(conn: apsw.Connection, space: str) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM search_vector_state WHERE space=?", (space,)))


# -- queries ------------------------------------------------------------------------------------------------

def _filters(alias: str, as_of: str | None, speakers: Sequence[str] | None, start: str | None, end: str | None,
             kinds: Sequence[str] | None) -> tuple[str, list]:
    sql, params = "", []
    if as_of:
        sql += f" AND {alias}.occurred_at_utc <= ?"
        params.append(as_of)
    if speakers:
        sql += f" AND {alias}.speaker COLLATE NOCASE IN ({','.join('?' * len(speakers))})"
        params += list(speakers)
    if start and end:
        # said inside the interval, or telling of an event inside it
        sql += (f" AND (({alias}.occurred_at_utc >= ? AND {alias}.occurred_at_utc < ?) OR "
                f"({alias}.event_start < ? AND {alias}.event_end >= ?))")
        params += [start, end, end[:10], start[:10]]
    elif start:
        sql += f" AND {alias}.occurred_at_utc >= ?"
        params.append(start)
    elif end:
        sql += f" AND {alias}.occurred_at_utc < ?"
        params.append(end)
    if kinds:
        sql += f" AND {alias}.doc_kind IN ({','.join('?' * len(kinds))})"
        params += list(kinds)
    return sql, params


def fts_search(conn: apsw.Connection, match: str, weights: Sequence[float], limit: int, *, as_of: str | None = None,
               speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
               kinds: Sequence[str] | None = None) -> list[tuple[int, float]]:
    """(doc_rowid, bm25) best first. ``match`` is an FTS5 query built by retrieve.query (never user text)."""
    w = ", ".join(f"{float(x):.6g}" for x in weights)
    where, params = _filters("d", as_of, speakers, start, end, kinds)
    if not where:
        sql = (f"SELECT rowid, bm25(search_fts, {w}) AS s FROM search_fts WHERE search_fts MATCH ? "
               f"ORDER BY s, rowid LIMIT ?")
        return [(int(r), float(s)) for r, s in conn.execute(sql, (match, limit))]
    sql = (f"SELECT f.rowid, bm25(search_fts, {w}) AS s FROM search_fts f JOIN search_docs d ON d.doc_rowid=f.rowid "
           f"WHERE search_fts MATCH ?{where} ORDER BY s, f.rowid LIMIT ?")
    return [(int(r), float(s)) for r, s in conn.execute(sql, [match, *params, limit])]


def vector_search(conn: apsw.Connection, table: str, query: np.ndarray, limit: int, *, as_of: str | None = None,
                  speakers: Sequence[str] | None = None, start: str | None = None,
                  end: str | None = None) -> list[tuple[int, float]]:
    """(doc_rowid, cosine distance) nearest first, filtered inside the KNN by vec0 metadata columns."""
    sql = f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ?"
    params: list[Any] = [np.asarray(query, dtype=np.float32).tobytes(), limit]
    if as_of:
        sql += " AND occurred_at_utc <= ?"
        params.append(as_of)
    if start:
        sql += " AND occurred_at_utc >= ?"
        params.append(start)
    if end:
        sql += " AND occurred_at_utc < ?"
        params.append(end)
    if speakers and len(speakers) == 1:
        sql += " AND speaker = ?"
        params.append(speakers[0])
    sql += " ORDER BY distance"
    return [(int(r), float(d)) for r, d in conn.execute(sql, params)]


def vector_pool(conn: apsw.Connection, table: str, query: np.ndarray, limit: int, *,
                as_of: str | None = None) -> list[tuple[int, float, str, str]]:
    """(doc_rowid, cosine distance, occurred_at_utc, speaker) of the ``limit`` nearest documents: one exact
    KNN from which the plain and the speaker-/time-restricted vector lanes are all cut."""
    sql = f"SELECT rowid, distance, occurred_at_utc, speaker FROM {table} WHERE embedding MATCH ? AND k = ?"
    params: list[Any] = [np.asarray(query, dtype=np.float32).tobytes(), limit]
    if as_of:
        sql += " AND occurred_at_utc <= ?"
        params.append(as_of)
    return [(int(r), float(d), o, sp) for r, d, o, sp in conn.execute(sql + " ORDER BY distance", params)]


def docs_by_rowid(conn: apsw.Connection, doc_rowids: Sequence[int]) -> dict[int, dict]:
    """Documents with what a hit shows: text, speaker, time, conversation title, turn reference."""
    out: dict[int, dict] = {}
    for i in range(0, len(doc_rowids), 500):
        chunk = list(doc_rowids[i:i + 500])
        for r in rows(conn,
                      "SELECT d.doc_rowid, d.doc_kind, d.doc_id, d.conversation_id, d.speaker, d.role, "
                      "d.occurred_at_utc, d.position, m.text_raw, m.export_message_id, m.timestamp_quality, "
                      "c.title AS conversation_title, c.source_kind, c.created_at_utc AS conversation_started_at_utc "
                      "FROM search_docs d LEFT JOIN messages m ON d.doc_kind='message' AND m.message_id=d.doc_id "
                      "LEFT JOIN conversations c ON c.conversation_id=d.conversation_id "
                      f"WHERE d.doc_rowid IN ({','.join('?' * len(chunk))})", chunk):
            out[int(r["doc_rowid"])] = r
    return out


def neighbours(conn: apsw.Connection, conversation_id: str, position: int, window: int,
               as_of: str | None = None) -> list[tuple[int, int]]:
    """(doc_rowid, position) of the documents within ``window`` positions in the same conversation."""
    sql = ("SELECT doc_rowid, position FROM search_docs WHERE conversation_id=? AND position BETWEEN ? AND ? "
           "AND position != ? AND doc_kind='message'")
    params: list[Any] = [conversation_id, position - window, position + window, position]
    if as_of:
        sql += " AND occurred_at_utc <= ?"
        params.append(as_of)
    return [(int(r), int(p)) for r, p in conn.execute(sql + " ORDER BY position", params)]


def speakers(conn: apsw.Connection) -> list[tuple[str, int]]:
    """Every speaker in the index with how many documents they have."""
    return [(s, int(n)) for s, n in conn.execute(
        "SELECT speaker, COUNT(*) FROM search_docs WHERE speaker IS NOT NULL GROUP BY speaker ORDER BY speaker")]


def participant_aliases(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(name, aliases_json) of every declared transcript participant."""
    return [(n, a) for n, a in conn.execute(
        "SELECT DISTINCT name, aliases_json FROM transcript_participants ORDER BY name, aliases_json")]


def bare_fts_count(conn: apsw.Connection, match: str, limit: int) -> list[int]:
    """The plainest FTS5 query (benchmark baseline): rowids by FTS5's default rank."""
    return [int(r) for (r,) in conn.execute("SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rank "
                                            "LIMIT ?", (match, limit))]
