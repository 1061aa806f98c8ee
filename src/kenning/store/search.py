"""SQL of the search index: search_docs, the contentless FTS5 table, and sqlite-vec tables per vector space."""

from __future__ import annotations

import re
import weakref
from typing import Any, Iterable, Sequence

import apsw
import numpy as np

from kenning.store.connection import rows, scalar
from kenning.store.sqltext import chunks, marks

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
    for chunk in chunks(list(message_ids)):
        for mid, text in conn.execute(
                f"SELECT message_id, text_content FROM message_parts_raw WHERE part_type IN ('image','file') "
                f"AND message_id IN ({marks(len(chunk))}) ORDER BY message_id, part_index", chunk):
            bits = out.setdefault(mid, [])
            if text:
                bits.append(text)
    return out


def insert_doc(conn: apsw.Connection, doc: dict) -> int:
    conn.execute(
        "INSERT INTO search_docs(doc_kind, doc_id, conversation_id, speaker, role, occurred_at_utc, position, "
        "event_start, event_end, content_sha256, source_changed_run_id) VALUES (:doc_kind, :doc_id, "
        ":conversation_id, :speaker, :role, :occurred_at_utc, :position, :event_start, :event_end, :content_sha256, "
        ":source_changed_run_id)",
        doc)
    return int(conn.last_insert_rowid())


def update_doc(conn: apsw.Connection, doc_rowid: int, doc: dict) -> None:
    conn.execute(
        "UPDATE search_docs SET conversation_id=:conversation_id, speaker=:speaker, role=:role, "
        "occurred_at_utc=:occurred_at_utc, position=:position, event_start=:event_start, event_end=:event_end, "
        "content_sha256=:content_sha256, "
        "source_changed_run_id=:source_changed_run_id WHERE doc_rowid=:doc_rowid",
        {**doc, "doc_rowid": doc_rowid})


def invalidate_next(conn: apsw.Connection, conversation_id: str, position: int) -> None:
    """The document after a changed one indexes its text as context: mark it for re-indexing."""
    conn.execute("UPDATE search_docs SET source_changed_run_id=NULL WHERE doc_rowid=(SELECT doc_rowid FROM "
                 "search_docs WHERE conversation_id=? AND position>? AND doc_kind='message' ORDER BY position "
                 "LIMIT 1)", (conversation_id, position))


def touch_doc(conn: apsw.Connection, doc_rowid: int, source_changed_run_id: str) -> None:
    conn.execute("UPDATE search_docs SET source_changed_run_id=? WHERE doc_rowid=?", (source_changed_run_id, doc_rowid))


def fts_insert(conn: apsw.Connection, items: Iterable[tuple[int, str, str, str, str]]) -> None:
    """Documents into the FTS index, its forward index (``search_doc_terms``, R51) and the per-token document
    counts (``search_term_docs``, R54)."""
    items = list(items)
    conn.executemany("INSERT INTO search_fts(rowid, speaker, body, extra, context) VALUES (?,?,?,?,?)", items)
    doc_terms_insert(conn, items)


def fts_delete(conn: apsw.Connection, doc_rowids: Iterable[int]) -> None:
    doc_rowids = [(r,) for r in doc_rowids]
    if not doc_rowids:
        return
    term_docs_add(conn, forward_keys(conn, [r for (r,) in doc_rowids]), -1)
    conn.executemany("DELETE FROM search_fts WHERE rowid=?", doc_rowids)
    conn.executemany("DELETE FROM search_doc_terms WHERE doc_rowid=?", doc_rowids)
    conn.executemany("DELETE FROM search_doc_keys WHERE doc_rowid=?", doc_rowids)


# -- the FTS table's detail and its refill from the vault (C1–C4) ----------------------------------------------

# Each search document's four FTS columns, as the index stage makes them (retrieve/docs.py doc_fields /
# entity_fields, pipeline/stage_index.py): a turn's speaker, its text, its captions, the text of the visible turn
# before it; an entity's type, its name, its other names (aliases, the owner's names, lexicon terms). Only each
# column's tokens count (their order and separators do not: detail=column keeps no positions), so the captions and
# other names are joined in any order. Migration 0120 holds a copy of this query (tests/test_search_fts_column.py
# checks that the two give the same index).
DOC_COLUMNS_SQL = """
WITH self_names(n) AS (
  SELECT name FROM transcript_participants WHERE is_self = 1
  UNION SELECT j.value FROM transcript_participants p, json_each(p.aliases_json) j
  WHERE p.is_self = 1 AND j.type = 'text'),
lex(entity_id, t, aliases_json) AS (
  SELECT em.entity_id, t.canonical_surface, t.aliases_json FROM lexicon_terms t
  JOIN lexicon_builds b ON b.build_id = t.build_id
  JOIN entity_mention_candidates c ON c.detector = 'LEXICON:' || b.build_id
    AND json_extract(c.raw_candidate_json, '$.details.term_id') = t.term_id
  JOIN entity_mentions em ON em.candidate_id = c.candidate_id
  WHERE b.build_version = (SELECT MAX(build_version) FROM lexicon_builds WHERE completed_at_utc IS NOT NULL)
  AND em.entity_id IS NOT NULL),
lex_names(entity_id, v) AS (
  SELECT entity_id, t FROM lex
  UNION SELECT l.entity_id, j.value FROM lex l, json_each(l.aliases_json) j)
SELECT d.doc_rowid, COALESCE(d.speaker, ''), COALESCE(m.text_raw, ''),
  COALESCE((SELECT group_concat(p.text_content, char(10)) FROM message_parts_raw p
            WHERE p.message_id = m.message_id AND p.part_type IN ('image', 'file') AND p.text_content <> ''), ''),
  COALESCE((SELECT q.text_raw FROM messages q WHERE q.conversation_id = m.conversation_id
            AND q.order_index < m.order_index AND q.is_hidden = 0 ORDER BY q.order_index DESC LIMIT 1), '')
FROM search_docs d JOIN messages m ON m.message_id = d.doc_id
WHERE d.doc_kind = 'message' {where}
UNION ALL
SELECT d.doc_rowid, COALESCE(e.entity_type, ''), COALESCE(e.canonical_name, ''),
  COALESCE((SELECT group_concat(v, char(10)) FROM (
      SELECT j.value AS v FROM json_each(e.aliases_json) j WHERE j.type = 'text'
      UNION SELECT n FROM self_names WHERE e.entity_key = '__SELF__'
      UNION SELECT 'my ' || substr(e.canonical_name, 8) WHERE e.entity_key <> '__SELF__'
        AND substr(e.canonical_name, 1, 7) = 'SELF''s '
      UNION SELECT n || '''s ' || substr(e.canonical_name, 8) FROM self_names WHERE e.entity_key <> '__SELF__'
        AND substr(e.canonical_name, 1, 7) = 'SELF''s '
      UNION SELECT v FROM lex_names WHERE lex_names.entity_id = e.entity_id)
    WHERE v <> '' AND v <> COALESCE(e.canonical_name, '')), ''),
  ''
FROM search_docs d JOIN entities e ON e.entity_id = d.doc_id
WHERE d.doc_kind = 'entity' {where}
"""


def doc_columns(conn: apsw.Connection, doc_rowids: Sequence[int] | None = None) -> list[tuple[int, str, str, str, str]]:
    """(doc_rowid, speaker, body, extra, context) of these search documents (all when None), built from the vault
    as the index stage builds them (:data:`DOC_COLUMNS_SQL`) — for the refill of the FTS table and the hits of a
    document without forward-index records. A document whose source changed since it was indexed gets its
    current columns (the next index run re-indexes it)."""
    import orjson

    if doc_rowids is None:
        return [tuple(r) for r in conn.execute(DOC_COLUMNS_SQL.format(where=""))]
    where = "AND d.doc_rowid IN (SELECT value FROM json_each(?))"
    arg = orjson.dumps([int(x) for x in doc_rowids]).decode()
    return [tuple(r) for r in conn.execute(DOC_COLUMNS_SQL.format(where=where), (arg, arg))]


_FTS_SCHEMA = ("CREATE VIRTUAL TABLE search_fts USING fts5(speaker, body, extra, context, content='', "
               "contentless_delete=1, detail={detail}, tokenize='porter unicode61 remove_diacritics 2')")


def fts_detail(conn: apsw.Connection) -> str:
    """The FTS table's detail: 'column' since migration 0120 (C1: which columns hold a token, no positions — the
    counts are the forward index's), 'full' before (positions: FTS5's bm25() and kenning_hits count the hits)."""
    sql = scalar(conn, "SELECT sql FROM sqlite_master WHERE name = 'search_fts'") or ""
    m = re.search(r"detail\s*=\s*'?(\w+)", sql)
    return m.group(1).lower() if m else "full"


def fts_rebuild(conn: apsw.Connection, detail: str = "column") -> int:
    """The FTS table made again with ``detail`` ('column' or 'full') from the vault's documents (as migration 0120
    does; 'full' gives the table of before it, e.g. a test's reference). Returns how many documents."""
    if detail not in ("column", "full"):
        raise ValueError(f"detail {detail!r}: column or full")
    conn.execute("DROP TABLE IF EXISTS search_fts_vocab")
    conn.execute("DROP TABLE IF EXISTS search_fts")
    conn.execute(_FTS_SCHEMA.format(detail=detail))
    got = doc_columns(conn)
    conn.executemany("INSERT INTO search_fts(rowid, speaker, body, extra, context) VALUES (?,?,?,?,?)", got)
    conn.execute("CREATE VIRTUAL TABLE search_fts_vocab USING fts5vocab(search_fts, row)")
    bump_version(conn)  # what a Searcher cached of the old table
    return len(got)


def speaker_fields(conn: apsw.Connection, doc_rowids: Sequence[int]) -> dict[int, str]:
    """Each document's FTS speaker column: a turn's speaker, an entity's type."""
    import orjson

    return {int(r): s or "" for r, s in conn.execute(
        "SELECT d.doc_rowid, CASE WHEN d.doc_kind = 'entity' THEN (SELECT e.entity_type FROM entities e "
        "WHERE e.entity_id = d.doc_id) ELSE d.speaker END FROM search_docs d "
        "WHERE d.doc_rowid IN (SELECT value FROM json_each(?))", (orjson.dumps([int(x) for x in doc_rowids]).decode(),))}


# -- the forward index: per document its tokens' counts per column (R51, records of Y1) -----------------------

# Y1 (migration 0112): per document, `terms` = its token ids ascending as LEB128 varints of the gaps (the first: the
# id itself), `codes` = one count code byte per token (encode_counts), `counts` = u8 × 4 per code 0, in order
_TOKENIZERS: "weakref.WeakKeyDictionary[apsw.Connection, Any]" = None  # type: ignore[assignment]


def fts_tokenizer(conn: apsw.Connection) -> Any:
    """The search index's own tokenizer (``tokenize='porter unicode61 remove_diacritics 2'``, migration 0061)."""
    global _TOKENIZERS
    if _TOKENIZERS is None:
        _TOKENIZERS = weakref.WeakKeyDictionary()
    tok = _TOKENIZERS.get(conn)
    if tok is None:
        tok = _TOKENIZERS[conn] = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    return tok


_KEYS: dict[str, int] = {}  # token → key: a vault's vocabulary is small next to its documents


def term_key(token: str) -> int:
    """A token's 64-bit key in ``search_term_docs`` (BLAKE2b, so the same on every machine and run)."""
    k = _KEYS.get(token)
    if k is None:
        import hashlib

        if len(_KEYS) > 200_000:  # ~25 MB; a vault with more distinct tokens re-hashes some
            _KEYS.clear()
        k = _KEYS[token] = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
    return k


def _signed(keys: np.ndarray) -> list[int]:
    return np.ascontiguousarray(keys, dtype=np.uint64).view(np.int64).tolist()


def term_ids(conn: apsw.Connection, keys: np.ndarray, assign: bool = True) -> np.ndarray:
    """Each token key's id in the vocabulary (``search_term_docs.id``, Y1), for sorted distinct ``keys``. New
    keys get the next ids in key order (so the same input gives the same ids) when ``assign``; else -1."""
    import orjson

    out = np.full(len(keys), -1, dtype=np.int64)
    if not len(keys):
        return out
    signed = _signed(keys)
    got = dict(conn.execute("SELECT key, id FROM search_term_docs WHERE key IN (SELECT value FROM json_each(?))",
                            (orjson.dumps(signed).decode(),)).fetchall())
    if got:
        out[:] = [got.get(k, -1) for k in signed]
    missing = np.flatnonzero(out < 0)
    if assign and len(missing):
        first = int(scalar(conn, "SELECT COALESCE(MAX(id), 0) FROM search_term_docs")) + 1
        out[missing] = np.arange(first, first + len(missing))
        conn.executemany("INSERT INTO search_term_docs(key, docs, id) VALUES (?, 0, ?)",
                         zip([signed[i] for i in missing.tolist()], out[missing].tolist()))
    return out


def query_term_ids(conn: apsw.Connection, keys: Sequence[int]) -> list[int]:
    """The ids of query words' keys (-1: a token no document holds)."""
    if not keys:
        return []
    uniq = np.unique(np.asarray(keys, dtype=np.uint64))
    ids = term_ids(conn, uniq, assign=False)
    return ids[np.searchsorted(uniq, np.asarray(keys, dtype=np.uint64))].tolist()


def doc_terms(conn: apsw.Connection, columns: Sequence[str]) -> tuple[int, bytes | None, bytes | None, bytes | None]:
    """(length in tokens, token id gaps, count codes, escaped counts) of one document's FTS columns, tokenized as
    FTS5 tokenizes them (Y1)."""
    return doc_terms_many(conn, [columns])[0]


def encode_counts(counts: np.ndarray) -> np.ndarray:
    """The count code of each (speaker, body, extra, context) row: speaker<<7 | extra<<6 | body<<3 | context when
    it fits (speaker, extra ≤ 1; body, context ≤ 7), else 0 — the counts then go in the escape bytes (Y1)."""
    s, b, e, c = counts[:, 0], counts[:, 1], counts[:, 2], counts[:, 3]
    fits = (s <= 1) & (e <= 1) & (b <= 7) & (c <= 7)
    return np.where(fits, (s << 7) | (e << 6) | (b << 3) | c, 0).astype(np.uint32)


def decode_counts(codes: np.ndarray, escaped: np.ndarray, esc_rank: np.ndarray) -> np.ndarray:
    """(n, 4) counts of count codes ``codes``; those with code 0 take row ``esc_rank`` of ``escaped`` (m, 4)."""
    code = codes.astype(np.int64)
    out = np.stack([code >> 7, (code >> 3) & 7, (code >> 6) & 1, code & 7], axis=1)
    esc = code == 0
    if esc.any():
        out[esc] = escaped[esc_rank[esc]]
    return out


def encode_varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LEB128 of non-negative ``values`` (< 2^35): (the bytes, how many bytes each value took)."""
    v = values.astype(np.int64)
    nb = 1 + (v >= 1 << 7) + (v >= 1 << 14) + (v >= 1 << 21) + (v >= 1 << 28)
    start = np.cumsum(nb) - nb
    out = np.empty(int(nb.sum()), dtype=np.uint8)
    for k in range(int(nb.max()) if len(nb) else 0):
        has = nb > k
        more = (nb > k + 1)[has]
        out[start[has] + k] = ((v[has] >> (7 * k)) & 0x7F) | np.where(more, 0x80, 0)
    return out, nb


def decode_ids(buf: bytes, per_doc: Sequence[int], dtype: Any = np.int64) -> np.ndarray:
    """The absolute token ids of documents whose varint gap streams are concatenated in ``buf``, ``per_doc``
    tokens each (each document's first gap is its first id). A search decodes every pool document's tokens, so
    this is on the query path: a few whole-array passes in int32 (an id fits), the rare multi-byte gaps (~0.3%)
    fixed up sparsely; each document's first gap is lowered by the previous document's last id, so that one
    running sum gives every document's ids (C8). ``dtype`` int32 spares the search a widening pass."""
    b = np.frombuffer(buf, dtype=np.uint8)
    if not len(b):
        return np.empty(0, dtype)
    cont = np.flatnonzero(b >= 0x80)  # bytes a gap continues after
    if not len(cont):
        gaps = b.astype(np.int32)
    else:
        x = (b & 0x7F).astype(np.int32)
        # each continuation byte's gap ends at the next byte that does not continue; j: its place in the gap
        run_start = np.ones(len(cont), dtype=bool)
        run_start[1:] = cont[1:] != cont[:-1] + 1
        rid = np.cumsum(run_start) - 1
        first = cont[run_start]
        j = cont - first[rid]
        width = np.bincount(rid)  # continuation bytes per multi-byte gap
        end = first + width  # the gap's last byte
        tail = x[end] << (7 * width)
        np.add.at(tail, rid, x[cont] << (7 * j))
        x[end] = tail
        keep = np.ones(len(b), dtype=bool)
        keep[cont] = False
        gaps = x[keep]
    n = np.asarray(per_doc, dtype=np.int64)
    n = n[n > 0]
    starts = np.cumsum(n) - n  # each (non-empty) document's first token
    if len(starts) > 1:
        last = np.add.reduceat(gaps, starts)  # a document's gaps sum to its last id
        gaps[starts[1:]] -= last[:-1]  # the running sum restarts at each document
    run = np.cumsum(gaps, dtype=np.int32, out=gaps)
    return run if dtype == np.int32 else run.astype(dtype)


def doc_terms_many(conn: apsw.Connection, docs: Sequence[Sequence[str]]
                   ) -> list[tuple[int, bytes | None, bytes | None, bytes | None]]:
    """:func:`doc_terms` of many documents at once: the tokens' keys in one array, their ids in one vocabulary
    lookup, grouped per (document, token) and counted per column in numpy (a batch costs a few µs a document
    beyond tokenizing it)."""
    tok = fts_tokenizer(conn)
    keys: list[int] = []
    runs: list[int] = []  # tokens per (document, column), in order
    run_doc: list[int] = []
    run_col: list[int] = []
    lengths = [0] * len(docs)
    get = _KEYS.get
    flag = apsw.FTS5_TOKENIZE_DOCUMENT
    seen: dict[str, list[int]] = {}  # a turn's text comes back as the next turn's context column
    for d, cols in enumerate(docs):
        for c, text in enumerate(cols):
            if not text:
                continue
            ks = seen.get(text)
            if ks is None:
                toks = tok(text.encode(), flag, None, include_offsets=False, include_colocated=False)
                ks = seen[text] = [get(t) or term_key(t) for t in toks]
            if ks:
                keys.extend(ks)
                runs.append(len(ks))
                run_doc.append(d)
                run_col.append(c)
                lengths[d] += len(ks)
    out: list[tuple[int, bytes | None, bytes | None, bytes | None]] = [(n, b"", b"", None) for n in lengths]
    if not keys:
        return out
    k = np.asarray(keys, dtype=np.uint64)
    uk, inv = np.unique(k, return_inverse=True)
    ids = term_ids(conn, uk)[inv]
    doc = np.repeat(np.asarray(run_doc, dtype=np.int64), runs)
    col = np.repeat(np.asarray(run_col, dtype=np.int64), runs)
    order = np.lexsort((ids, doc))  # by document, then token id
    ids, doc, col = ids[order], doc[order], col[order]
    new = np.ones(len(ids), dtype=bool)
    new[1:] = (ids[1:] != ids[:-1]) | (doc[1:] != doc[:-1])
    group = np.cumsum(new) - 1
    n_groups = int(group[-1]) + 1
    counts = np.bincount(group * 4 + col, minlength=n_groups * 4).reshape(n_groups, 4)
    gid = ids[new]
    code = encode_counts(counts).astype(np.uint8)
    gdoc = doc[new]
    over = set(gdoc[(counts > 255).any(axis=1)].tolist())  # a count past one byte: hits from FTS5 (R51)
    gap = gid.copy()
    gap[1:] -= gid[:-1]
    firsts = np.searchsorted(gdoc, np.arange(len(docs) + 1))  # each document's first record
    starts = firsts[:-1][firsts[:-1] < len(gid)]
    gap[starts] = gid[starts]  # a document's first id is its own
    vbytes, nb = encode_varints(gap)
    vbounds = np.r_[0, np.cumsum(nb)][firsts]
    esc = code == 0
    esc_counts = counts[esc].astype(np.uint8)
    ebounds = np.searchsorted(gdoc[esc], np.arange(len(docs) + 1)) * 4
    raw, craw, eraw = vbytes.tobytes(), code.tobytes(), esc_counts.tobytes()
    for d in range(len(docs)):
        if d in over:
            out[d] = (lengths[d], None, None, None)
        else:
            e = eraw[ebounds[d]:ebounds[d + 1]]
            out[d] = (lengths[d], raw[vbounds[d]:vbounds[d + 1]], craw[firsts[d]:firsts[d + 1]], e or None)
    return out


def doc_terms_insert(conn: apsw.Connection, items: Sequence[tuple[int, str, str, str, str]]) -> None:
    if not items:
        return
    made = doc_terms_many(conn, [cols for _r, *cols in items])
    ids = [int(it[0]) for it in items]
    term_docs_add(conn, forward_keys(conn, ids), -1)  # rows replaced (none, normally)
    conn.executemany("INSERT OR REPLACE INTO search_doc_terms(doc_rowid, length, terms, codes, counts) "
                     "VALUES (?,?,?,?,?)", [(r, n, b, c, e) for r, (n, b, c, e) in zip(ids, made)])
    over = {r: _token_ids(conn, cols) for r, (_r, *cols), (_n, b, _c, _e) in zip(ids, items, made) if b is None}
    conn.executemany("DELETE FROM search_doc_keys WHERE doc_rowid=?", [(r,) for r in ids if r not in over])
    conn.executemany("INSERT OR REPLACE INTO search_doc_keys(doc_rowid, keys) VALUES (?,?)",
                     [(r, k.astype("<u4").tobytes()) for r, k in over.items()])
    term_docs_add(conn, np.concatenate([_record_ids([(b, c) for _n, b, c, _e in made if b is not None]),
                                        *over.values()]), +1)


# -- per-token document counts (R54): a query word's document frequency without an fts5vocab doclist walk -----

def _record_ids(rows: Sequence[tuple[bytes, bytes]]) -> np.ndarray:
    """The token ids of forward rows (terms, codes), concatenated."""
    return decode_ids(b"".join(t for t, _c in rows), [len(c) for _t, c in rows])


def _token_ids(conn: apsw.Connection, columns: Sequence[str | None]) -> np.ndarray:
    """The distinct token ids of one document's FTS columns (for a document whose forward row is NULL, R51)."""
    tok = fts_tokenizer(conn)
    ks = {term_key(t) for text in columns if text
          for t in tok(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False,
                       include_colocated=False)}
    return term_ids(conn, np.unique(np.fromiter(ks, dtype=np.uint64, count=len(ks))))


def forward_keys(conn: apsw.Connection, doc_rowids: Sequence[int]) -> np.ndarray:
    """Every (document, distinct token) id of these documents' forward rows, one entry per pair (documents
    without a row add nothing; a NULL row's ids come from ``search_doc_keys``). A NULL row without its ids (made
    before migration 0064) makes the counts uncountable: marked so (-1), read from fts5vocab from then on."""
    import orjson

    if not doc_rowids:
        return np.empty(0, np.int64)
    got = conn.execute("SELECT t.terms, t.codes, k.keys FROM search_doc_terms t LEFT JOIN search_doc_keys k "
                       "ON k.doc_rowid = t.doc_rowid WHERE t.doc_rowid IN (SELECT value FROM json_each(?))",
                       (orjson.dumps([int(x) for x in doc_rowids]).decode(),)).fetchall()
    if any(b is None and k is None for b, _c, k in got):
        conn.execute("UPDATE search_state SET term_docs_complete = -1 WHERE id = 1 AND term_docs_complete = 1")
    return np.concatenate([_record_ids([(b, c) for b, c, _k in got if b is not None]),
                           *[np.frombuffer(k, dtype="<u4").astype(np.int64) for b, _c, k in got if b is None and k]])


def term_docs_add(conn: apsw.Connection, ids: np.ndarray, sign: int) -> None:
    """Add ``sign`` to the document count of each token id, once per occurrence in ``ids``."""
    if not len(ids):
        return
    uniq, n = np.unique(ids, return_counts=True)
    conn.executemany("UPDATE search_term_docs SET docs = docs + ? WHERE id = ?", zip((n * sign).tolist(),
                                                                                      uniq.tolist()))


def term_docs_state(conn: apsw.Connection) -> int:
    """search_state.term_docs_complete: 1 counted, 0 to be counted by the next index run, -1 cannot be counted."""
    try:
        return int(scalar(conn, "SELECT term_docs_complete FROM search_state WHERE id = 1") or 0)
    except apsw.SQLError:
        return -1


def term_docs_complete(conn: apsw.Connection) -> bool:
    """Whether ``search_term_docs`` counts every search document (False on a vault opened read-only before
    migration 0064)."""
    try:
        return scalar(conn, "SELECT term_docs_complete FROM search_state WHERE id = 1") == 1
    except apsw.SQLError:
        return False


def term_docs_rebuild(conn: apsw.Connection, chunk: int = 50_000) -> int:
    """Count every document's tokens again from the forward index (which must be complete) and mark the counts
    complete (-1 if a NULL forward row has no ids: fts5vocab stays in use). The ids stay (the forward rows use
    them). Returns how many distinct tokens."""
    conn.execute("UPDATE search_term_docs SET docs = 0 WHERE docs != 0")
    parts_k, parts_n = [], []
    after = -(1 << 62)
    lost = False
    while True:
        got = conn.execute("SELECT t.doc_rowid, t.terms, t.codes, k.keys FROM search_doc_terms t LEFT JOIN "
                           "search_doc_keys k ON k.doc_rowid = t.doc_rowid WHERE t.doc_rowid > ? "
                           "ORDER BY t.doc_rowid LIMIT ?", (after, chunk)).fetchall()
        if not got:
            break
        after = got[-1][0]
        lost = lost or any(b is None and k is None for _r, b, _c, k in got)
        ids = np.concatenate([_record_ids([(b, c) for _r, b, c, _k in got if b is not None]),
                              *[np.frombuffer(k, dtype="<u4").astype(np.int64) for _r, b, _c, k in got
                                if b is None and k]])
        u, n = np.unique(ids, return_counts=True)
        parts_k.append(u)
        parts_n.append(n)
    n_keys = 0
    if parts_k:
        u, inv = np.unique(np.concatenate(parts_k), return_inverse=True)
        n = np.bincount(inv, weights=np.concatenate(parts_n)).astype(np.int64)
        conn.executemany("UPDATE search_term_docs SET docs = ? WHERE id = ?", zip(n.tolist(), u.tolist()))
        n_keys = len(u)
    conn.execute("UPDATE search_state SET term_docs_complete = ? WHERE id = 1", (-1 if lost else 1,))
    return n_keys


def doc_terms_missing_messages(conn: apsw.Connection, limit: int, after: int = 0) -> list[dict]:
    """Turn documents without a forward-index row (indexed before migration 0063) after rowid ``after`` (keyset
    paging), by rowid, with what their FTS columns were built from."""
    return rows(conn, "SELECT d.doc_rowid, d.speaker, m.message_id, m.conversation_id, m.order_index, m.text_raw "
                      "FROM search_docs d JOIN messages m ON m.message_id = d.doc_id "
                      "WHERE d.doc_rowid > ? AND +d.doc_kind = 'message' "  # + : walk by rowid, not by kind
                      "AND NOT EXISTS (SELECT 1 FROM search_doc_terms t WHERE t.doc_rowid = d.doc_rowid) "
                      "ORDER BY d.doc_rowid LIMIT ?", (after, limit))


def doc_terms_missing_entities_reset(conn: apsw.Connection) -> int:
    """Entity documents without a forward-index row: their content hash is cleared so that the index stage
    re-indexes them (FTS and forward index together). Returns how many."""
    conn.execute("UPDATE search_docs SET content_sha256 = '' WHERE doc_kind = 'entity' AND NOT EXISTS "
                 "(SELECT 1 FROM search_doc_terms t WHERE t.doc_rowid = search_docs.doc_rowid)")
    return int(conn.changes())


def doc_terms_complete(conn: apsw.Connection) -> bool:
    """Whether every search document has its forward-index row (the pool may then read hits from it). False on a
    vault opened read-only before migration 0063 (no table: migrations run only on a writable open)."""
    if not scalar(conn, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='search_doc_terms'"):
        return False
    return int(scalar(conn, "SELECT COUNT(*) FROM search_doc_terms")) >= doc_count(conn)


def doc_term_rows(conn: apsw.Connection, doc_rowids: Sequence[int] | None
                  ) -> tuple[list[int], list[int], list, bytes, bytes, bytes]:
    """These documents' forward-index rows (every row when None), in rowid order, as one aggregate row (no Python
    object per document): (rowids, lengths, tokens per document — None where the row is NULL —, and concatenated
    over the non-NULL rows: the id gaps, the count codes, the escaped counts — Y1). Documents without a row are
    left out."""
    import orjson

    where, params = "", ()
    if doc_rowids is not None:
        where = "WHERE doc_rowid IN (SELECT value FROM json_each(?)) "
        params = (orjson.dumps([int(x) for x in doc_rowids]).decode(),)
    ids, lens, ntok, buf, codes, esc = conn.execute(
        "SELECT json_group_array(doc_rowid), json_group_array(length), json_group_array(length(codes)), "
        "CAST(group_concat(terms, '') AS BLOB), CAST(group_concat(codes, '') AS BLOB), "
        "CAST(group_concat(counts, '') AS BLOB) FROM (SELECT doc_rowid, length, terms, codes, counts "
        f"FROM search_doc_terms {where}ORDER BY doc_rowid)", params).fetchone()
    ids, lens, ntok = orjson.loads(ids), orjson.loads(lens), orjson.loads(ntok)
    if ids != sorted(ids):  # the aggregates did not keep the subquery's order (SQLite does): row by row
        return doc_term_rows_plain(conn, doc_rowids)
    return ids, lens, ntok, buf or b"", codes or b"", esc or b""


def doc_term_rows_plain(conn: apsw.Connection, doc_rowids: Sequence[int] | None
                        ) -> tuple[list[int], list[int], list, bytes, bytes, bytes]:
    """:func:`doc_term_rows` a row at a time (~2× the CPU; the aggregate's order is SQLite's, not a promise)."""
    import orjson

    if doc_rowids is None:
        got = conn.execute("SELECT doc_rowid, length, terms, codes, counts FROM search_doc_terms "
                           "ORDER BY doc_rowid").fetchall()
    else:
        got = conn.execute("SELECT doc_rowid, length, terms, codes, counts FROM search_doc_terms WHERE doc_rowid IN "
                           "(SELECT value FROM json_each(?)) ORDER BY doc_rowid",
                           (orjson.dumps([int(x) for x in doc_rowids]).decode(),)).fetchall()
    return ([int(r) for r, *_ in got], [int(n) for _r, n, *_ in got],
            [None if c is None else len(c) for _r, _n, _b, c, _e in got],
            b"".join(b for _r, _n, b, _c, _e in got if b), b"".join(c for _r, _n, _b, c, _e in got if c),
            b"".join(e for _r, _n, _b, _c, e in got if e))


def orphan_message_docs(conn: apsw.Connection) -> list[int]:
    return [r for (r,) in conn.execute(
        "SELECT d.doc_rowid FROM search_docs d LEFT JOIN messages m ON m.message_id=d.doc_id "
        "WHERE d.doc_kind='message' AND (m.message_id IS NULL OR m.is_hidden=1)")]


def delete_docs(conn: apsw.Connection, doc_rowids: Sequence[int]) -> None:
    """Documents out of search_docs and the FTS index (their vectors go through the vector index)."""
    fts_delete(conn, doc_rowids)
    conn.executemany("DELETE FROM search_docs WHERE doc_rowid=?", [(r,) for r in doc_rowids])


def clear_index(conn: apsw.Connection) -> list[int]:
    """Everything derived, gone: the next index run rebuilds it from the raw layer. Returns the old rowids
    (their vectors are deleted by the caller through the vector index)."""
    old = [int(r) for (r,) in conn.execute("SELECT doc_rowid FROM search_docs")]
    conn.execute("INSERT INTO search_fts(search_fts) VALUES('delete-all')")
    conn.execute("DELETE FROM search_doc_terms")
    conn.execute("DELETE FROM search_term_docs")
    conn.execute("DELETE FROM search_doc_keys")
    conn.execute("UPDATE search_state SET term_docs_complete = 1 WHERE id = 1")  # nothing indexed, nothing to count
    conn.execute("DELETE FROM search_docs")
    conn.execute("DELETE FROM search_entity_names")
    return old


def drop_legacy_vector_tables(conn: apsw.Connection) -> list[str]:
    """The search-only sqlite-vec tables of the first version (search_vec_<backend>_<dim>), if any remain."""
    names = [n for (n,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'search\\_vec\\_%' ESCAPE '\\' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
    for n in names:
        if re.fullmatch(r"search_vec_[a-z0-9_]{1,64}", n):
            conn.execute(f"DROP TABLE IF EXISTS {n}")
    return names


def doc_count(conn: apsw.Connection, kind: str | None = None) -> int:
    if kind is None:
        return int(scalar(conn, "SELECT COUNT(*) FROM search_docs"))
    return int(scalar(conn, "SELECT COUNT(*) FROM search_docs WHERE doc_kind=?", (kind,)))


def bump_version(conn: apsw.Connection) -> int:
    (v,) = conn.execute("UPDATE search_state SET version = version + 1 WHERE id = 1 RETURNING version").fetchone()
    return int(v)


def version(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT version FROM search_state WHERE id = 1") or 0)


# -- vectors (the rows live in the model layer's vector_items; R15) ----------------------------------------

def docs_missing_vectors(conn: apsw.Connection, space: str, after: int, limit: int) -> list[dict]:
    """Documents with no vector item in ``space`` (new, or never embedded), by doc_rowid after ``after``."""
    return rows(conn, "SELECT d.doc_rowid, d.doc_kind, d.doc_id, d.speaker FROM search_docs d "
                      "LEFT JOIN vector_items v ON v.space=? AND v.item_id = CAST(d.doc_rowid AS TEXT) "
                      "WHERE v.vid IS NULL AND d.doc_rowid > ? ORDER BY d.doc_rowid LIMIT ?", (space, after, limit))


def docs_for_embedding(conn: apsw.Connection, doc_rowids: Sequence[int]) -> list[dict]:
    out: list[dict] = []
    for chunk in chunks(list(doc_rowids)):
        out += rows(conn, f"SELECT doc_rowid, doc_kind, doc_id, speaker FROM search_docs "
                          f"WHERE doc_rowid IN ({marks(len(chunk))}) ORDER BY doc_rowid", chunk)
    return out


def vector_doc_meta(conn: apsw.Connection, space: str, by_vid: bool = False) -> Iterable[tuple]:
    """(vid, doc_rowid, doc_kind, speaker, occurred_at_utc, event_start, event_end) of every search vector, in no
    particular order unless ``by_vid`` (sorting 1M rows by vid cost ~0.3–0.7 s of a cold search; the caller indexes
    by vid, R60; the pre-R60 reference loader sorted)."""
    return conn.execute("SELECT v.vid, d.doc_rowid, d.doc_kind, d.speaker, d.occurred_at_utc, d.event_start, "
                        "d.event_end FROM vector_items v JOIN search_docs d ON d.doc_rowid = v.item_id "
                        "WHERE v.space = ?" + (" ORDER BY v.vid" if by_vid else ""), (space,))


def vector_doc_meta_joined(conn: apsw.Connection, space: str) -> tuple:
    """:func:`vector_doc_meta` as one row: (how many, vids and doc_rowids each joined by ',', then doc_kind, speaker,
    occurred_at_utc, event_start, event_end — NULL as '' — each joined by char(31)); ~1.4 s at 1M vectors against
    ~1.8 s as row tuples (R60). The caller checks the pieces add up (a value holding the separator makes one more)."""
    return tuple(conn.execute(
        "SELECT COUNT(*), group_concat(v.vid, ','), group_concat(d.doc_rowid, ','), "
        "group_concat(d.doc_kind, char(31)), group_concat(coalesce(d.speaker, ''), char(31)), "
        "group_concat(coalesce(d.occurred_at_utc, ''), char(31)), group_concat(coalesce(d.event_start, ''), char(31)), "
        "group_concat(coalesce(d.event_end, ''), char(31)) "
        "FROM vector_items v JOIN search_docs d ON d.doc_rowid = v.item_id WHERE v.space = ?", (space,)).fetchone())


def vector_item_ids(conn: apsw.Connection, space: str) -> list[str]:
    return [r for (r,) in conn.execute("SELECT item_id FROM vector_items WHERE space=?", (space,))]


# -- entities as documents and as query-side names (R18) ---------------------------------------------------

def active_entities(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT entity_id, entity_type, entity_key, canonical_name, aliases_json, first_seen_at_utc, "
                      "mention_count FROM entities WHERE status='active' ORDER BY entity_id")


def lexicon_names(conn: apsw.Connection) -> list[tuple[str, str, str]]:
    """(entity_id, canonical_surface, aliases_json) of the newest lexicon build's terms, tied to the entity
    their LexiconMatch mentions resolved to."""
    return [tuple(r) for r in conn.execute(
        "SELECT DISTINCT em.entity_id, t.canonical_surface, t.aliases_json FROM lexicon_terms t "
        "JOIN lexicon_builds b ON b.build_id = t.build_id "
        "JOIN entity_mention_candidates c ON c.detector = 'LEXICON:' || b.build_id "
        "  AND json_extract(c.raw_candidate_json, '$.details.term_id') = t.term_id "
        "JOIN entity_mentions em ON em.candidate_id = c.candidate_id "
        "WHERE b.build_version = (SELECT MAX(build_version) FROM lexicon_builds WHERE completed_at_utc IS NOT NULL) "
        "AND em.entity_id IS NOT NULL ORDER BY 1, 2")]


def docs_of_kind(conn: apsw.Connection, kind: str) -> dict[str, tuple[int, str]]:
    """doc_id → (doc_rowid, content_sha256) of every document of one kind."""
    return {d: (int(r), h) for d, r, h in conn.execute(
        "SELECT doc_id, doc_rowid, content_sha256 FROM search_docs WHERE doc_kind=?", (kind,))}


def replace_entity_names(conn: apsw.Connection, entity_ids: Sequence[str], names: Iterable[tuple[str, str, str]]) -> None:
    conn.executemany("DELETE FROM search_entity_names WHERE entity_id=?", [(e,) for e in entity_ids])
    conn.executemany("INSERT OR IGNORE INTO search_entity_names(name_norm, entity_id, source) VALUES (?,?,?)",
                     list(names))


def entity_names_count(conn: apsw.Connection) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM search_entity_names"))


def entities_named(conn: apsw.Connection, names: Sequence[str]) -> list[dict]:
    """Active entities one of ``names`` (normalised) refers to, with how it matched."""
    out: list[dict] = []
    for chunk in chunks(list(names), 400):
        out += rows(conn, "SELECT n.name_norm, n.source, e.entity_id, e.entity_type, e.canonical_name, e.mention_count "
                          "FROM search_entity_names n JOIN entities e ON e.entity_id = n.entity_id "
                          f"WHERE n.name_norm IN ({marks(len(chunk))}) AND e.status='active' "
                          "ORDER BY n.name_norm, e.mention_count DESC, e.entity_id", chunk)
    return out


def entity_mention_docs(conn: apsw.Connection, entity_ids: Sequence[str], limit: int,
                        as_of: str | None = None) -> list[dict]:
    """Message documents mentioning any of ``entity_ids`` (newest first), one row per (document, entity)."""
    q = marks(len(entity_ids))
    sql = ("SELECT d.doc_rowid, em.entity_id, em.surface_text, em.char_start, em.char_end, d.occurred_at_utc "
           "FROM entity_mentions em JOIN search_docs d ON d.doc_kind='message' AND d.doc_id = em.message_id "
           f"WHERE em.entity_id IN ({q})")
    params: list[Any] = list(entity_ids)
    if as_of:
        sql += " AND d.occurred_at_utc <= ?"
        params.append(as_of)
    sql += " ORDER BY d.occurred_at_utc DESC, d.doc_rowid DESC LIMIT ?"
    params.append(limit)
    return rows(conn, sql, params)


# -- queries ------------------------------------------------------------------------------------------------

def _filters(alias: str, as_of: str | None, speakers: Sequence[str] | None, start: str | None, end: str | None,
             kinds: Sequence[str] | None, entity_ids: Sequence[str] | None = None,
             rowids: Sequence[int] | None = None) -> tuple[str, list]:
    sql, params = "", []
    if entity_ids:
        sql += (f" AND {alias}.doc_kind='message' AND {alias}.doc_id IN (SELECT message_id FROM entity_mentions "
                f"WHERE entity_id IN ({marks(len(entity_ids))}))")
        params += list(entity_ids)
    if rowids is not None:
        sql += f" AND {alias}.doc_rowid IN ({marks(len(rowids))})"
        params += [int(r) for r in rowids]
    if as_of:
        sql += f" AND {alias}.occurred_at_utc <= ?"
        params.append(as_of)
    if speakers:
        sql += f" AND {alias}.speaker COLLATE NOCASE IN ({marks(len(speakers))})"
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
        sql += f" AND {alias}.doc_kind IN ({marks(len(kinds))})"
        params += list(kinds)
    return sql, params


def filter_rowids(conn: apsw.Connection, doc_rowids: Sequence[int], *, as_of: str | None = None,
                  speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                  kinds: Sequence[str] | None = None) -> set[int]:
    """Which of ``doc_rowids`` pass a lane's filters (the SQL :func:`fts_search` joined; R40's pool lanes)."""
    import orjson

    where, params = _filters("d", as_of, speakers, start, end, kinds)
    return {int(r) for (r,) in conn.execute(
        f"SELECT d.doc_rowid FROM search_docs d WHERE d.doc_rowid IN (SELECT value FROM json_each(?)){where}",
        [orjson.dumps([int(x) for x in doc_rowids]).decode(), *params])}


def fts_search(conn: apsw.Connection, match: str, weights: Sequence[float], limit: int, *, as_of: str | None = None,
               speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
               kinds: Sequence[str] | None = None, entity_ids: Sequence[str] | None = None,
               rowids: Sequence[int] | None = None) -> list[tuple[int, float]]:
    """(doc_rowid, bm25) best first. ``match`` is an FTS5 query built by retrieve.search (never user text).
    ``rowids`` scores only those documents (the second step of the capped lane, R19)."""
    w = ", ".join(f"{float(x):.6g}" for x in weights)
    if rowids is not None and not (as_of or speakers or start or end or kinds or entity_ids):
        if not rowids:
            return []
        sql = (f"SELECT rowid, bm25(search_fts, {w}) AS s FROM search_fts WHERE search_fts MATCH ? "
               f"AND rowid IN ({marks(len(rowids))}) ORDER BY s, rowid LIMIT ?")
        return [(int(r), float(s)) for r, s in conn.execute(sql, (match, *[int(x) for x in rowids], limit))]
    where, params = _filters("d", as_of, speakers, start, end, kinds, entity_ids, rowids)
    if not where:
        sql = (f"SELECT rowid, bm25(search_fts, {w}) AS s FROM search_fts WHERE search_fts MATCH ? "
               f"ORDER BY s, rowid LIMIT ?")
        return [(int(r), float(s)) for r, s in conn.execute(sql, (match, limit))]
    sql = (f"SELECT f.rowid, bm25(search_fts, {w}) AS s FROM search_fts f JOIN search_docs d ON d.doc_rowid=f.rowid "
           f"WHERE search_fts MATCH ?{where} ORDER BY s, f.rowid LIMIT ?")
    return [(int(r), float(s)) for r, s in conn.execute(sql, [match, *params, limit])]


def docs_by_rowid(conn: apsw.Connection, doc_rowids: Sequence[int]) -> dict[int, dict]:
    """Documents with what a hit shows: text, speaker, time, conversation title, turn reference."""
    out: dict[int, dict] = {}
    for chunk in chunks(list(doc_rowids)):
        for r in rows(conn,
                      "SELECT d.doc_rowid, d.doc_kind, d.doc_id, d.conversation_id, d.speaker, d.role, "
                      "d.occurred_at_utc, d.position, m.text_raw, m.export_message_id, m.timestamp_quality, "
                      "c.title AS conversation_title, c.source_kind, c.created_at_utc AS conversation_started_at_utc, "
                      "d.event_start, d.event_end, e.canonical_name AS entity_name, e.entity_type, "
                      "e.aliases_json AS entity_aliases_json, e.mention_count AS entity_mentions "
                      "FROM search_docs d LEFT JOIN messages m ON d.doc_kind='message' AND m.message_id=d.doc_id "
                      "LEFT JOIN conversations c ON c.conversation_id=d.conversation_id "
                      "LEFT JOIN entities e ON d.doc_kind='entity' AND e.entity_id=d.doc_id "
                      f"WHERE d.doc_rowid IN ({marks(len(chunk))})", chunk):
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


def speakers(conn: apsw.Connection) -> list[str]:
    """Every speaker in the index, in order: a loose scan of idx_search_docs_speaker_exact, one seek per speaker
    (R62: grouping 1M documents took 0.34 s; this ~0.1 ms)."""
    return [s for (s,) in conn.execute(
        "WITH RECURSIVE s(v) AS ("
        " SELECT (SELECT speaker FROM search_docs WHERE speaker IS NOT NULL ORDER BY speaker LIMIT 1)"
        " UNION ALL"
        " SELECT (SELECT speaker FROM search_docs WHERE speaker > s.v ORDER BY speaker LIMIT 1) FROM s"
        " WHERE s.v IS NOT NULL) "
        "SELECT v FROM s WHERE v IS NOT NULL")]


def participant_aliases(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(name, aliases_json) of every declared transcript participant."""
    return [(n, a) for n, a in conn.execute(
        "SELECT DISTINCT name, aliases_json FROM transcript_participants ORDER BY name, aliases_json")]


def term_doc_counts(conn: apsw.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many documents hold each term (its FTS5 doclist length; terms as the tokenizer stores them): from the
    per-token counts the index stage keeps (R54) when they are complete, else from fts5vocab (a doclist walk)."""
    if not terms:
        return {}
    if term_docs_complete(conn):
        keys = {t: np.uint64(term_key(t)).view(np.int64).item() for t in terms}
        q = marks(len(keys))
        found = dict(conn.execute(f"SELECT key, docs FROM search_term_docs WHERE key IN ({q})", list(keys.values())))
        return {t: int(found[k]) for t, k in keys.items() if found.get(k)}
    q = marks(len(terms))
    return {t: int(n) for t, n in conn.execute(f"SELECT term, doc FROM search_fts_vocab WHERE term IN ({q})",
                                               list(terms))}


def fts_rowids(conn: apsw.Connection, match: str, limit: int, newest_first: bool = True) -> list[int]:
    """Documents matching ``match`` in rowid order, unranked (a doclist walk that stops at ``limit``; -1: all)."""
    import orjson

    order = "DESC" if newest_first else "ASC"
    # one aggregate row, not a Python row per match (C9); the aggregate keeps the subquery's order in SQLite —
    # checked, row by row if not
    got = orjson.loads(conn.execute(f"SELECT json_group_array(rowid) FROM (SELECT rowid FROM search_fts WHERE "
                                    f"search_fts MATCH ? ORDER BY rowid {order} LIMIT ?)", (match, limit)).fetchone()[0])
    if got == sorted(got, reverse=newest_first):
        return got
    return [int(r) for (r,) in conn.execute(f"SELECT rowid FROM search_fts WHERE search_fts MATCH ? "
                                            f"ORDER BY rowid {order} LIMIT ?", (match, limit))]


def fts_term_hits(conn: apsw.Connection, restrict: str, terms: Sequence[str], weights: Sequence[float],
                  limit: int, columns: Sequence[str] | None = None,
                  found: dict[int, tuple[int, list[float]]] | None = None,
                  newest_first: bool = True, rowid: int | None = None) -> dict[int, tuple[int, list[float]]]:
    """The newest ``limit`` documents matching the FTS5 expression ``restrict`` (built by retrieve.search, never user
    text) that hold one of ``terms``, each with its length in tokens and, per term, its hits weighted by column
    (what FTS5's bm25() sums; R40). A doclist walk in rowid order that stops at ``limit``; the per-row work is one
    auxiliary-function call. ``found`` (rowid → (length, hits), from earlier steps of the same pool) is added to in
    place: a document already there still counts towards ``limit`` but is not measured again (R50).
    ``newest_first=False`` walks oldest first — the same documents only when ``limit`` is at least their number,
    and ~20–35% less FTS5 work than the reverse walk (R50). ``rowid``: only that document."""
    uniq = list(terms)
    out: dict[int, tuple[int, list[float]]] = {} if found is None else found
    if not uniq:
        return out
    _register_hits(conn)
    expr = f"({restrict}) AND ({' OR '.join(chr(34) + t + chr(34) for t in uniq)})"
    if columns is not None:
        expr = "{" + " ".join(columns) + "} : (" + expr + ")"
    sink = _sink()
    sink.append((out, len(uniq), tuple(float(w) for w in weights)))
    try:
        if rowid is not None:  # one document (R51: one the forward index cannot give)
            conn.execute("SELECT kenning_hits(search_fts) FROM search_fts WHERE search_fts MATCH ? AND rowid = ?",
                         (expr, int(rowid))).fetchall()
        else:
            conn.execute("SELECT kenning_hits(search_fts) FROM search_fts WHERE search_fts MATCH ? "
                         f"ORDER BY rowid {'DESC' if newest_first else 'ASC'} LIMIT ?", (expr, limit)).fetchall()
    finally:
        sink.pop()
    return out


def fts_count(conn: apsw.Connection, match: str) -> int:
    """How many documents match ``match`` (a doclist walk)."""
    return int(scalar(conn, "SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH ?", (match,)) or 0)


def fts_any(conn: apsw.Connection, match: str) -> bool:
    """Whether any document matches ``match`` (stops at the first; R50)."""
    return conn.execute("SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT 1", (match,)).fetchone() is not None


def fts_totals(conn: apsw.Connection) -> tuple[int, int]:
    """(documents, tokens in all columns) of the FTS index, as bm25() reads them."""
    _register_hits(conn)
    (n,) = conn.execute("SELECT kenning_totals(search_fts) FROM search_fts WHERE search_fts MATCH ? LIMIT 1",
                        ('"' + _any_term(conn) + '"',)).fetchone() or (None,)
    if not n:
        return 0, 0
    a, b = str(n).split(",")
    return int(a), int(b)


def _any_term(conn: apsw.Connection) -> str:
    r = conn.execute("SELECT term FROM search_fts_vocab LIMIT 1").fetchone()
    return r[0] if r else "x"


_LOCAL = __import__("threading").local()  # where kenning_hits writes, per thread (the call runs in the caller's)


def _sink() -> list[tuple[dict, int, tuple[float, ...]]]:
    try:
        return _LOCAL.sink
    except AttributeError:
        _LOCAL.sink = []
        return _LOCAL.sink


_REGISTERED: "weakref.WeakSet[apsw.Connection]" = None  # type: ignore[assignment]


def _hits(api: apsw.FTS5ExtensionApi) -> int:
    """Per row: the document's length and each of the last ``n`` phrases' hits weighted by column. The call's
    state (where to write, which phrases, the weights) is read from the sink once per statement and kept in
    ``api.aux_data``; a document already measured by an earlier step is skipped (R50)."""
    st = api.aux_data
    if st is None:
        out, n, w = _sink()[-1]
        last = api.phrase_count
        st = api.aux_data = (out, range(last - n, last), last - n, n, w)
    out, phrases, first, n, w = st
    rowid = api.rowid
    if rowid in out:
        return 0
    pcols = api.phrase_columns
    hits = [0.0] * n
    for p in phrases:
        cols = pcols(p)
        if cols:  # most documents hold few of the words: the rest stay 0 cheaply
            if len(cols) == 1:  # one column: its weight times the hits there
                c = cols[0]
                hits[p - first] = w[c] * len(api.phrase_column_offsets(p, c))
            else:
                locs = api.phrase_locations(p)
                hits[p - first] = sum([w[c] * len(locs[c]) for c in cols])
    out[rowid] = (api.column_size(-1), hits)
    return 0


def _totals(api: apsw.FTS5ExtensionApi) -> str:
    return f"{api.row_count},{api.column_total_size(-1)}"


def _register_hits(conn: apsw.Connection) -> None:
    global _REGISTERED
    if _REGISTERED is None:
        _REGISTERED = weakref.WeakSet()
    if conn not in _REGISTERED:
        conn.register_fts5_function("kenning_hits", _hits)
        conn.register_fts5_function("kenning_totals", _totals)
        _REGISTERED.add(conn)


def doc_filter_meta(conn: apsw.Connection, doc_rowids: Sequence[int]) -> dict[int, tuple]:
    """(doc_kind, speaker, occurred_at_utc, event_start, event_end) of each document (the filters of the
    restricted lanes, applied to the shared candidate pool; R40)."""
    import orjson

    return {int(r[0]): tuple(r[1:]) for r in conn.execute(
        "SELECT doc_rowid, doc_kind, speaker, occurred_at_utc, event_start, event_end FROM search_docs "
        "WHERE doc_rowid IN (SELECT value FROM json_each(?))", (orjson.dumps([int(x) for x in doc_rowids]).decode(),))}


def bare_fts_count(conn: apsw.Connection, match: str, limit: int) -> list[int]:
    """The plainest FTS5 query (benchmark baseline): rowids by FTS5's default rank."""
    return [int(r) for (r,) in conn.execute("SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rank "
                                            "LIMIT ?", (match, limit))]


# -- assertions → their source turns (assertion-to-evidence expansion, R21) ---------------------------------

def assertions_about(conn: apsw.Connection, entity_ids: Sequence[str], limit: int,
                     as_of: str | None = None) -> list[dict]:
    """Assertions whose subject or object is one of ``entity_ids``, with their source turn's document and valid
    time (the temporal qualifier's resolved interval), newest first. ``as_of``: asserted by then and not
    superseded by an assertion made by then."""
    if not entity_ids:
        return []
    q = marks(len(entity_ids))
    sql = ("SELECT a.assertion_id, d.doc_rowid, a.subject_entity_id, s.canonical_name AS subject_name, "
           "p.canonical_label AS predicate, a.object_entity_id, o.canonical_name AS object_name, a.object_value, "
           "a.modality, a.polarity, a.confidence_final, a.char_start, a.char_end, a.surface_text, "
           "a.asserted_at_utc, a.temporal_qualifier_type, t.surface_text AS qualifier_surface, "
           "t.valid_from_utc, t.valid_to_utc, a.superseded_by_assertion_id "
           "FROM assertions a JOIN predicates p ON p.predicate_id = a.predicate_id "
           "JOIN entities s ON s.entity_id = a.subject_entity_id LEFT JOIN entities o ON o.entity_id = a.object_entity_id "
           "JOIN search_docs d ON d.doc_kind = 'message' AND d.doc_id = a.message_id "
           "LEFT JOIN time_mentions t ON t.time_mention_id = a.temporal_qualifier_id "
           f"WHERE (a.subject_entity_id IN ({q}) OR a.object_entity_id IN ({q})) AND a.modality <> 'question'")
    params: list[Any] = [*entity_ids, *entity_ids]
    if as_of:
        sql += (" AND d.occurred_at_utc <= ? AND (a.superseded_by_assertion_id IS NULL OR NOT EXISTS ("
                "SELECT 1 FROM assertions n JOIN messages nm ON nm.message_id = n.message_id "
                "WHERE n.assertion_id = a.superseded_by_assertion_id AND nm.created_at_utc <= ?))")
        params += [as_of, as_of]
    else:
        sql += " AND a.superseded_by_assertion_id IS NULL"
    sql += " ORDER BY d.occurred_at_utc DESC, a.assertion_id LIMIT ?"
    params.append(limit)
    return rows(conn, sql, params)


def entity_ids_named(conn: apsw.Connection, names: Sequence[str]) -> list[str]:
    """Active entities whose canonical name / alias is one of ``names`` (normalised)."""
    if not names:
        return []
    q = marks(len(names))
    return [e for (e,) in conn.execute(
        "SELECT DISTINCT n.entity_id FROM search_entity_names n JOIN entities e ON e.entity_id = n.entity_id "
        f"WHERE n.name_norm IN ({q}) AND e.status = 'active' ORDER BY n.entity_id", list(names))]


def time_mentions_of(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, list[dict]]:
    """Resolved time mentions (stage 2A) per message, first in the text first."""
    out: dict[str, list[dict]] = {}
    for chunk in chunks(list(message_ids)):
        for r in rows(conn, "SELECT message_id, surface_text, valid_from_utc, valid_to_utc, resolution_granularity, "
                            "char_start FROM time_mentions WHERE resolved_type <> 'unresolved' "
                            f"AND message_id IN ({marks(len(chunk))}) ORDER BY message_id, char_start",
                      chunk):
            out.setdefault(r["message_id"], []).append(r)
    return out


def self_participant_names(conn: apsw.Connection) -> list[str]:
    """Names and aliases of the transcript participants marked as the vault owner (``--self``)."""
    import orjson

    out: set[str] = set()
    for name, aliases in conn.execute("SELECT name, aliases_json FROM transcript_participants WHERE is_self=1"):
        out.add(name)
        out.update(a for a in orjson.loads(aliases or "[]") if isinstance(a, str))
    return sorted(out)
