"""The vector index: sqlite-vec tables holding one embedding model's vectors, exact top-k search with filters,
and model migration per DOC72 §3.7.

    from kenning.llm.index import VectorIndex
    idx = VectorIndex(conn, config)                   # conn: the stage's connection (writes join its transaction)
    idx.upsert("belief_nodes", [("node-1", "i am patient"), ("node-2", "i love mornings", "TRAIT")])
    hits = idx.search("i am a patient person", k=10, space="belief_nodes", kinds=["TRAIT"])
    hits[0].item_id, hits[0].score                    # cosine similarity, highest first
    idx.thresholds()                                  # match / no_match / tension for the active model
    idx.delete("belief_nodes", ["node-2"])

What is indexed lives in ``vector_items`` (space, item_id, kind, text): the text is kept so that a new model can
re-embed everything. Vectors live in one vec0 table per model generation (``vector_tables``); exactly one is
active and every query uses it. ``migrate(spec)`` builds the next table in batches (each its own short
transaction) while queries keep using the active one, catches up with items changed meanwhile, then swaps in one
write transaction (retire + drop the old table, activate the new). Interrupted, it resumes where it stopped.

Search is exact either way: sqlite-vec's KNN (``engine: sqlite``), or an in-memory float32 mirror of the active
table (``engine: numpy``; ``auto`` uses it up to ``mirror_max_vectors``), ~1.2× a bare numpy matmul where
sqlite-vec 0.1.9 takes ~5–8× (benchmarks/RESULTS.md). The mirror is keyed by the table's ``version`` token,
which every write changes (a hash chain), so a mirror never serves vectors another connection has changed. A fresh
process loads it in bulk (R60): vec0's chunks read as blobs straight into the matrix, the items as columns — the same
mirror the rows of :func:`vsql.all_vectors` given one by one to ``_Mirror.upsert`` make (``upsert`` / ``delete`` keep
it current afterwards).
"""

from __future__ import annotations

import hashlib
import mmap
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from kenning.config import Config
from kenning.config.models import Thresholds
from kenning.llm.embed import CachedEmbedder, Embedder, get_embedder, model_id_for
from kenning.llm.errors import VectorIndexError
from kenning.llm.thresholds import thresholds_for
from kenning.sources.jcs import sha256_hex
from kenning.sources.timestamps import now_utc
from kenning.store import embeddings as cache_sql
from kenning.store import vectors as vsql
from kenning.store.connection import read_snapshot, transaction, write_scope

GENESIS = "genesis"

# space → f(conn, config, item_ids) → {item_id: text or None}: where an item stored without its text (X2) gets it
# back for a model migration. Registered by the module that owns the space's source (the search space: the vector
# fill, :mod:`kenning.retrieve.vector_fill`).
TEXT_SOURCES: dict[str, Callable[[Any, Config, list[str]], dict[str, str | None]]] = {}


def register_text_source(space: str, fn: Callable[[Any, Config, list[str]], dict[str, str | None]]) -> None:
    TEXT_SOURCES[space] = fn


def element_of(table: dict) -> str:
    return table.get("element") or "float32"


def quantize_int8(m: np.ndarray) -> np.ndarray:
    """Rows → int8 (X3): each row scaled by 127 / its largest absolute component and rounded (half to even) — for a
    cosine the scale of a row does not matter, so each row uses the whole int8 range (cosine to the float row
    ≥ 0.9995 for MiniLM; a fixed scale of 127 gave ≥ 0.9989, RESULTS)."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32)).astype(np.float64)
    top = np.abs(m).max(axis=1, keepdims=True)
    top[top == 0] = 1.0
    return np.clip(np.rint(m * (127.0 / top)), -127, 127).astype(np.int8)


def dequantize_int8(q: np.ndarray) -> np.ndarray:
    """int8 rows → unit float32 rows. The norm comes from the integers (exact), so a row gives the same floats alone
    or in a block: a mirror loaded in bulk equals one built row by row."""
    q = np.atleast_2d(np.asarray(q, dtype=np.int8))
    wide = q.astype(np.int32)  # a squared norm is at most D × 127²: exact in int32 (int64's einsum is ~80× slower)
    n2 = np.einsum("ij,ij->i", wide, wide)
    scale = np.where(n2 > 0, 1.0 / np.sqrt(np.maximum(n2, 1).astype(np.float64)), 0.0).astype(np.float32)
    out = q.astype(np.float32)
    out *= scale[:, None]
    return out


def _decode(table: dict, blob: bytes) -> np.ndarray:
    """A stored vector as float32 (an int8 one dequantized to unit length)."""
    if element_of(table) == "int8":
        return dequantize_int8(np.frombuffer(blob, dtype=np.int8))[0]
    return np.frombuffer(blob, dtype="<f4")


def _stored_form(table: dict, vecs: Sequence[np.ndarray] | np.ndarray) -> tuple[list[bytes], np.ndarray]:
    """(the blobs table ``table`` stores for ``vecs``, the float32 rows those blobs read back as)."""
    m = np.atleast_2d(np.asarray(vecs, dtype=np.float32)) if len(vecs) else np.zeros((0, int(table["dimension"])),
                                                                                      np.float32)
    if element_of(table) == "int8":
        q = quantize_int8(m) if len(m) else np.zeros((0, m.shape[1]), np.int8)
        return [r.tobytes() for r in q], dequantize_int8(q) if len(q) else m
    return [_blob(v) for v in m], m


def _query_blob(table: dict, q: np.ndarray) -> bytes:
    return quantize_int8(q)[0].tobytes() if element_of(table) == "int8" else _blob(q)


@dataclass(frozen=True)
class Hit:
    space: str
    item_id: str
    kind: str | None
    score: float          # cosine similarity (vectors are L2-normalized)
    vid: int


def _chain(old: str, op: str, digest: str) -> str:
    return hashlib.sha256(f"{old}|{op}|{digest}".encode()).hexdigest()[:32]


def _digest_rows(rows: Sequence[tuple[int, str, str, str | None, np.ndarray]]) -> str:
    h = hashlib.sha256()
    for vid, space, item_id, kind, vec in rows:
        h.update(f"{vid}\x1f{space}\x1f{item_id}\x1f{kind or ''}\x1e".encode())
        h.update(np.ascontiguousarray(vec, dtype="<f4").tobytes())
    return h.hexdigest()


def _blob(vec: np.ndarray) -> bytes:
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()


_write = write_scope
_read = read_snapshot


# -- the in-memory mirror -----------------------------------------------------------------------------------
class _Mirror:
    """A float32 copy of one vec0 table (plus item ids and filter codes), valid for one ``version``."""

    def __init__(self, dimension: int, version: str):
        self.dim, self.version = dimension, version
        self.lock = threading.RLock()
        cap = 1024
        self.matrix = np.zeros((cap, dimension), dtype=np.float32)
        self.vids = np.zeros(cap, dtype=np.int64)
        self.valid = np.zeros(cap, dtype=bool)
        self.space_codes = np.zeros(cap, dtype=np.int32)
        self.kind_codes = np.zeros(cap, dtype=np.int32)
        self.item_ids: Any = _id_array(cap)      # by position; not Python objects where numpy allows (R59)
        self.spaces: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
        self.space_names: list[str] = []
        self.kind_names: list[str | None] = []
        self._pos_of: dict[int, int] | None = {}
        self.n = 0
        self.deleted = 0
        self.codes: np.ndarray | None = None    # 1-bit codes, built on first quantized search (R16)
        self.center = np.zeros(dimension, dtype=np.float32)
        self._last_dist: tuple | None = None    # (query key, Hamming distances) of the last quantized search
        self.blocks: dict[int, dict] = {}       # space code -> contiguous copy of its rows (search_by_kind)
        self.row_sets: dict = {}                # a filter's rows key -> (positions, codes of those rows) (R57)
        self._pos_by_vid: np.ndarray | None = None

    @classmethod
    def filled(cls, dimension: int, version: str, vids: np.ndarray, matrix: np.ndarray,
               items: tuple[np.ndarray, Sequence[str], Sequence[str], Sequence[str | None]]) -> "_Mirror":
        """A mirror of ``vids`` / ``matrix`` (rows in order; ``matrix`` may hold more rows, unused: the capacity)
        and ``items`` (the columns vid, space, item_id, kind of every item, ascending vid: :func:`_item_columns`) —
        equal to one made empty and given the rows ``(vid, space, item_id, kind, vector)`` of the vids that have an
        item, in order, through :meth:`upsert` (decisions R60): the same matrix, vids, positions, space / kind codes
        (numbered by first appearance), item ids; built column by column instead of a Python step per row."""
        m = cls(dimension, version)
        cols = items
        item_vids = cols[0]
        at = np.searchsorted(item_vids, vids)
        inside = at < len(item_vids)
        has = inside & (item_vids[np.where(inside, at, 0)] == vids) if len(item_vids) else np.zeros(len(vids), bool)
        if not has.all():  # vectors without an item (the JOIN of all_vectors leaves them out)
            keep = np.nonzero(has)[0]
            matrix[:len(keep)] = matrix[keep]
            matrix[len(keep):len(vids)] = 0
            vids, at = vids[keep], at[keep]
        n = len(vids)
        m.matrix, m.n = matrix, n
        cap = matrix.shape[0]
        m.vids = np.zeros(cap, dtype=np.int64)
        m.vids[:n] = vids
        m.valid = np.zeros(cap, dtype=bool)
        m.valid[:n] = True
        for attr, table, names, col, norm in (("space_codes", m.spaces, m.space_names, cols[1], False),
                                              ("kind_codes", m.kinds, m.kind_names, cols[3], True)):
            values = sorted(set(col), key=lambda x: (x is None, x or ""))  # a few distinct values: a code each
            local_of = {x: i for i, x in enumerate(values)}
            if norm:  # upsert files '' and None under None
                values = [x or None for x in values]
                local_of = {x: values.index(x or None) for x in local_of}
            local = np.fromiter(map(local_of.__getitem__, col), dtype=np.int32, count=len(col))[at]
            seen, first = np.unique(local, return_index=True)  # codes by first appearance, as upsert numbers them
            remap = np.zeros(max(len(values), 1), dtype=np.int32)
            for code in seen[np.argsort(first)]:
                table[values[code]] = len(names)
                names.append(values[code])
            remap[seen] = [table[values[c]] for c in seen]
            codes = np.zeros(cap, dtype=np.int32)
            codes[:n] = remap[local]
            setattr(m, attr, codes)
        ids = cols[2] if n == len(cols[2]) and bool(np.all(at == np.arange(n))) else [cols[2][i] for i in at.tolist()]
        if _ID_DTYPE is None:
            m.item_ids = list(ids) + [None] * (cap - n)
        else:
            m.item_ids = _id_array(cap)
            m.item_ids[:n] = ids
        m._pos_of = None  # made on first use (upsert, delete, an item-id filter): a one-shot search never needs it
        return m

    @property
    def pos_of(self) -> dict[int, int]:
        """vid -> position of every live row (after a bulk load: made on first use, ~0.4 s at 1M vectors, R60)."""
        if self._pos_of is None:
            live = np.nonzero(self.valid[:self.n])[0]
            self._pos_of = dict(zip(self.vids[live].tolist(), live.tolist()))
        return self._pos_of

    @pos_of.setter
    def pos_of(self, value: dict[int, int]) -> None:
        self._pos_of = value

    def _code(self, table: dict, names: list, value: Any) -> int:
        code = table.get(value)
        if code is None:
            code = table[value] = len(names)
            names.append(value)
        return code

    def _grow(self, need: int) -> None:
        cap = len(self.vids)
        if need <= cap:
            return
        new = max(need, cap * 2)
        for name in ("matrix", "vids", "valid", "space_codes", "kind_codes"):
            old = getattr(self, name)
            arr = np.zeros((new, *old.shape[1:]), dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)
        if self.codes is not None:
            codes = np.zeros((self.codes.shape[0], new), dtype=np.uint64)
            codes[:, :cap] = self.codes
            self.codes = codes
        if isinstance(self.item_ids, list):
            self.item_ids.extend([None] * (new - cap))
        else:
            self.item_ids = np.concatenate([self.item_ids, _id_array(new - cap)])

    def upsert(self, rows: Sequence[tuple[int, str, str, str | None, np.ndarray]]) -> None:
        with self.lock:
            self._last_dist = None
            self.row_sets.clear()
            self._pos_by_vid = None
            self._grow(self.n + len(rows))
            for vid, space, item_id, kind, vec in rows:
                pos = self.pos_of.get(vid)
                if pos is None:
                    pos = self.n
                    self.n += 1
                    self.pos_of[vid] = pos
                self.matrix[pos] = vec
                self.vids[pos] = vid
                self.valid[pos] = True
                self.space_codes[pos] = self._code(self.spaces, self.space_names, space)
                self.kind_codes[pos] = self._code(self.kinds, self.kind_names, kind or None)
                self.item_ids[pos] = item_id
                if self.blocks:
                    self._block_put(int(self.space_codes[pos]), pos, vec)
                if self.codes is not None:
                    self.codes[:, pos] = self._pack(np.asarray(vec, dtype=np.float32).reshape(1, -1))[:, 0]

    def delete(self, vids: Sequence[int]) -> None:
        with self.lock:
            self._last_dist = None
            self.blocks.clear()
            self.row_sets.clear()
            self._pos_by_vid = None
            for vid in vids:
                pos = self.pos_of.pop(int(vid), None)
                if pos is not None:
                    self.valid[pos] = False
                    self.deleted += 1
            if self.deleted > 1024 and self.deleted * 4 > self.n:
                self._compact()

    def _compact(self) -> None:
        keep = np.nonzero(self.valid[:self.n])[0]
        self.matrix[:len(keep)] = self.matrix[keep]
        for name in ("vids", "space_codes", "kind_codes"):
            arr = getattr(self, name)
            arr[:len(keep)] = arr[keep]
        self.item_ids[:len(keep)] = [self.item_ids[i] for i in keep]
        if self.codes is not None:
            self.codes[:, :len(keep)] = self.codes[:, keep]
        self.valid[:] = False
        self.valid[:len(keep)] = True
        self.n, self.deleted = len(keep), 0
        self.pos_of = {int(v): i for i, v in enumerate(self.vids[:self.n])}

    # -- 1-bit codes (decisions R16) ---------------------------------------------------------------------
    def _pack(self, m: np.ndarray, buffers: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Sign bits of centred rows, as (words, rows) uint64 bit planes (column-major: one pass per word).
        ``buffers`` (float32 and bool, at least as many rows as ``m``) hold the centred rows and their signs, so that
        a pass over every row makes no new temporaries per block."""
        m = np.atleast_2d(m)
        if buffers is None:
            signs = m - self.center > 0
        else:
            centred, signs = buffers[0][:len(m)], buffers[1][:len(m)]
            np.subtract(m, self.center, out=centred)
            np.greater(centred, 0, out=signs)
        bits = np.packbits(signs, axis=1, bitorder="little")
        pad = (-bits.shape[1]) % 8
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(bits.view("<u8").T)

    def ensure_codes(self) -> None:
        """Build the codes of every row (the centre is the mean of the rows present now, then fixed)."""
        with self.lock:
            if self.codes is not None:
                return
            n = self.n
            # every row live (no delete since the load): the rows themselves, not a copy of them (R60: the copy
            # of 1M x 384 float32 cost ~5 s, mostly page faults); the same mean either way
            live = self.matrix[:n] if not self.deleted else self.matrix[:n][self.valid[:n]]
            self.center = live.mean(axis=0).astype(np.float32) if len(live) else np.zeros(self.dim, np.float32)
            words = (self.dim + 63) // 64
            self.codes = np.zeros((words, len(self.vids)), dtype=np.uint64)
            step = 8192  # blocks through two reused buffers (no new temporaries per block)
            buffers = (np.empty((min(n, step), self.dim), dtype=np.float32),
                       np.empty((min(n, step), self.dim), dtype=bool))
            for i in range(0, n, step):
                self.codes[:, i:min(n, i + step)] = self._pack(self.matrix[i:min(n, i + step)], buffers)

    def _mask(self, n: int, space: str | None, kinds: Sequence[str] | None, vids: Sequence[int] | None,
              allow: Callable[[np.ndarray], np.ndarray] | None) -> np.ndarray | None | bool:
        """The rows a search may return (None = all; False = none)."""
        mask = None
        if self.deleted:
            mask = self.valid[:n].copy()
        if space is not None:
            code = self.spaces.get(space)
            if code is None:
                return False
            m = self.space_codes[:n] == code
            mask = m if mask is None else mask & m
        if kinds is not None:
            codes = [self.kinds[x] for x in kinds if x in self.kinds]
            m = np.isin(self.kind_codes[:n], codes)
            mask = m if mask is None else mask & m
        if vids is not None:
            m = np.zeros(n, dtype=bool)
            pos = [self.pos_of[v] for v in vids if v in self.pos_of]
            m[pos] = True
            mask = m if mask is None else mask & m
        if allow is not None:
            m = np.asarray(allow(self.vids[:n]), dtype=bool)
            mask = m if mask is None else mask & m
        return mask

    def search(self, q: np.ndarray, k: int, space: str | None, kinds: Sequence[str] | None,
               vids: Sequence[int] | None, allow: Callable[[np.ndarray], np.ndarray] | None = None,
               quantize_above: int = 0, rerank: int = 0) -> list[Hit]:
        """Top-``k`` by cosine. Exact (one matrix product) up to ``quantize_above`` rows; above it, Hamming
        distance over 1-bit codes picks ``rerank`` candidates that are then scored exactly (R16)."""
        with self.lock:
            n = self.n
            if n == 0 or k <= 0:
                return []
            rows = getattr(allow, "rows", None) if allow is not None else None
            if rows is not None and len(rows) <= n // 4:  # the filter names its rows (one speaker's): test those only (R57)
                found_rows = self._row_set_candidates(q, n, space, kinds, vids, allow, rows, k,
                                                      quantize_above, rerank)
                if found_rows is None:
                    return []
                candidates, mask = found_rows, None
            else:
                mask = self._mask(n, space, kinds, vids, allow)
                if mask is False:
                    return []
                candidates = None if mask is None else np.nonzero(mask)[0]
                if candidates is not None and len(candidates) == 0:
                    return []
                if candidates is not None and len(candidates) == n:
                    candidates, mask = None, None  # the filter keeps every row: no gather
                size = n if candidates is None else len(candidates)
                if quantize_above and n > quantize_above and size > max(rerank, k):
                    self.ensure_codes()
                    candidates = self._hamming_candidates(q, n, mask, max(rerank, k))
            if candidates is not None and len(candidates) > n // 4:
                scores = self.matrix[:n] @ q  # one product over every row beats gathering a large subset
                sub = scores[candidates]
                kk = min(k, len(candidates))
                top = np.argpartition(-sub, kk - 1)[:kk] if kk < len(candidates) else np.arange(len(candidates))
                top = top[np.lexsort((self.vids[candidates[top]], -sub[top]))]
                found = [(int(candidates[t]), float(sub[t])) for t in top]
            elif candidates is None:
                scores = self.matrix[:n] @ q
                kk = min(k, n)
                top = np.argpartition(-scores, kk - 1)[:kk] if kk < n else np.arange(n)
                order = top[np.lexsort((self.vids[top], -scores[top]))]
                found = [(p, float(scores[p])) for p in order]
            else:
                sub = self.matrix[candidates] @ q
                kk = min(k, len(candidates))
                top = np.argpartition(-sub, kk - 1)[:kk] if kk < len(candidates) else np.arange(len(candidates))
                top = top[np.lexsort((self.vids[candidates[top]], -sub[top]))]
                found = [(int(candidates[t]), float(sub[t])) for t in top]
            return [Hit(self.space_names[self.space_codes[p]], self.item_ids[p],  # type: ignore[arg-type]
                        self.kind_names[self.kind_codes[p]], score, int(self.vids[p])) for p, score in found]

    def _row_set(self, rows: np.ndarray, key) -> tuple[np.ndarray, list]:
        """The ascending positions of ``rows`` (vids; those not in the mirror left out), cached under ``key``
        until the next write, with a slot for the codes of those rows."""
        hit = self.row_sets.get(key) if key is not None else None
        if hit is not None:
            self.row_sets[key] = self.row_sets.pop(key)  # most recently used last
            return hit
        n = self.n
        if self._pos_by_vid is None:
            live = self.vids[:n] if not self.deleted else self.vids[:n][self.valid[:n]]
            where = np.arange(n, dtype=np.int64) if not self.deleted else np.nonzero(self.valid[:n])[0]
            table = np.full(int(live.max()) + 1 if len(live) else 1, -1, dtype=np.int64)
            table[live] = where
            self._pos_by_vid = table
        r = np.asarray(rows, dtype=np.int64)
        r = r[(r >= 0) & (r < len(self._pos_by_vid))]
        pos = self._pos_by_vid[r]
        pos = pos[pos >= 0]
        if len(pos) > 1 and not bool(np.all(pos[1:] > pos[:-1])):  # vids usually grow with positions
            pos = np.sort(pos)
        entry = (pos, [None])
        if key is not None:
            # least recently used out first, within a byte budget: positions + the rows' codes (words × 8 bytes),
            # so that the speakers of a session's questions stay cached (R59; was: all dropped at 16 entries)
            per_row = 8 + (self.dim + 63) // 64 * 8
            used = sum(len(p) for p, _ in self.row_sets.values()) * per_row
            while self.row_sets and used + len(pos) * per_row > ROW_SETS_MAX_BYTES:
                old_pos, _ = self.row_sets.pop(next(iter(self.row_sets)))
                used -= len(old_pos) * per_row
            self.row_sets[key] = entry
        return entry

    def _row_set_candidates(self, q: np.ndarray, n: int, space: str | None, kinds: Sequence[str] | None,
                            vids: Sequence[int] | None, allow: Callable[[np.ndarray], np.ndarray], rows: np.ndarray,
                            k: int, quantize_above: int, rerank: int) -> np.ndarray | None:
        """The candidates :meth:`search` finds through ``_mask`` + ``_hamming_candidates`` for a filter that
        names a superset of its rows (``allow.rows``, vids): the filters are tested on those rows only, and the
        Hamming distances are those rows' (R56's result: the same candidates in the same order). None: no row."""
        pos, slot = self._row_set(rows, getattr(allow, "rows_key", None))
        if len(pos) == 0:
            return None
        ok = np.asarray(allow(self.vids[pos]), dtype=bool)
        if space is not None:
            code = self.spaces.get(space)
            if code is None:
                return None
            ok &= self.space_codes[pos] == code
        if kinds is not None:
            ok &= np.isin(self.kind_codes[pos], [self.kinds[x] for x in kinds if x in self.kinds])
        if vids is not None:
            ok &= np.isin(self.vids[pos], np.asarray(list(vids), dtype=np.int64))
        every = bool(ok.all())
        cand = pos if every else pos[ok]
        if len(cand) == 0:
            return None
        m = max(rerank, k)
        if not (quantize_above and n > quantize_above and len(cand) > m):
            return cand
        self.ensure_codes()
        assert self.codes is not None
        last = self._last_dist
        if last is not None and last[0] == (q.tobytes(), n, id(self.codes)):
            # the same query vector as the last full scan (the time lane after the plain one): those rows'
            # distances are already known — the same distances, the same cut (R59)
            return cand[_cut(last[1][cand], m, self.codes.shape[0] * 64 + 1)]
        if slot[0] is None:
            slot[0] = np.ascontiguousarray(self.codes[:, pos])
        codes = slot[0] if every else slot[0][:, ok]
        return cand[self._hamming_keep(q, codes, m)]

    def _hamming_candidates(self, q: np.ndarray, n: int, mask: np.ndarray | None, m: int,
                            subset: bool = True) -> np.ndarray:
        assert self.codes is not None
        key = (q.tobytes(), n, id(self.codes))
        if subset and mask is not None and (self._last_dist is None or self._last_dist[0] != key):
            pos = np.nonzero(mask)[0]
            if len(pos) <= n // 8:  # a narrow filter (one speaker): distances of its rows only, same result (R56)
                return self._hamming_subset(q, pos, m)
        if self._last_dist is not None and self._last_dist[0] == key:
            dist = self._last_dist[1].copy()  # the same query again (another lane's filter): reuse the scan
        else:
            qc = self._pack(q.reshape(1, -1))[:, 0]
            dist = _hamming(self.codes, qc, n)
            self._last_dist = (key, dist.copy())
        worst = self.codes.shape[0] * 64 + 1
        if mask is not None:
            dist[~mask] = worst
        # the smallest distance d whose cumulative count reaches m: every row at distance <= d is a candidate
        hist = np.bincount(dist, minlength=worst + 1)
        cum = np.cumsum(hist[:worst])
        cut = int(np.searchsorted(cum, m))
        cand = np.nonzero(dist <= min(cut, worst - 1))[0]
        if len(cand) > 4 * m:  # a wide tie at the cut: keep the m closest (ties by position)
            cand = cand[np.argsort(dist[cand], kind="stable")[:m]]
        return cand


    def _hamming_subset(self, q: np.ndarray, pos: np.ndarray, m: int) -> np.ndarray:
        """:meth:`_hamming_candidates` for a mask given as its (ascending) positions: the same candidates in the same
        order, from the Hamming distances of those rows only."""
        assert self.codes is not None
        return pos[self._hamming_keep(q, self.codes[:, pos], m)]

    def _hamming_keep(self, q: np.ndarray, codes: np.ndarray, m: int) -> np.ndarray:
        """Indexes (into the columns of ``codes``) of the ``m``-candidate cut of :meth:`_hamming_candidates`."""
        qc = self._pack(q.reshape(1, -1))[:, 0]
        return _cut(_hamming(codes, qc, codes.shape[1]), m, codes.shape[0] * 64 + 1)

    # -- per-space blocks (seed 000's searches touch one space of a table shared with messages and entities) --
    def _space_block(self, code: int, n: int) -> dict | None:
        """A contiguous float32 copy of the live rows of one space, when that space holds at most
        ``BLOCK_MAX_SHARE`` of the rows (else None: a product over the whole matrix costs about the same). Kept
        up to date by ``upsert``; dropped by ``delete`` and rebuilt on the next search."""
        b = self.blocks.get(code)
        if b is not None:
            return b
        rows = self.space_codes[:n] == code
        if self.deleted:
            rows &= self.valid[:n]
        pos = np.nonzero(rows)[0]
        if len(pos) > BLOCK_MAX_SHARE * n or len(pos) == 0:
            return None
        cap = max(1024, 2 * len(pos))
        matrix = np.zeros((cap, self.dim), dtype=np.float32)
        matrix[:len(pos)] = self.matrix[pos]
        positions = np.zeros(cap, dtype=np.int64)
        positions[:len(pos)] = pos
        b = {"matrix": matrix, "pos": positions, "n": len(pos), "index": {int(p): i for i, p in enumerate(pos)}}
        self.blocks[code] = b
        return b

    def _block_put(self, code: int, pos: int, vec: np.ndarray) -> None:
        b = self.blocks.get(code)
        if b is None:
            return
        i = b["index"].get(pos)
        if i is None:
            i = b["n"]
            if i == len(b["pos"]):
                for name in ("matrix", "pos"):
                    old = b[name]
                    arr = np.zeros((2 * len(old), *old.shape[1:]), dtype=old.dtype)
                    arr[:i] = old
                    b[name] = arr
            b["pos"][i] = pos
            b["index"][pos] = i
            b["n"] = i + 1
        b["matrix"][i] = vec

    def search_by_kind(self, q: np.ndarray, k: int, space: str, kinds: Sequence[str]) -> dict[str, list[Hit]]:
        """Top-``k`` of each kind in ``space`` from one product over the matrix (what ``search(kinds=[x])`` gives
        for each x, for the price of one)."""
        return self.search_by_kind_many(q.reshape(1, -1), k, space, kinds)[0]

    def search_by_kind_many(self, queries: np.ndarray, k: int, space: str,
                            kinds: Sequence[str]) -> list[dict[str, list[Hit]]]:
        """``search_by_kind`` for each row of ``queries`` from one matrix product (the matrix is read once: three
        queries cost about what one does, the product being memory-bound)."""
        with self.lock:
            n = self.n
            m = queries.shape[0]
            outs: list[dict[str, list[Hit]]] = [{x: [] for x in kinds} for _ in range(m)]
            code = self.spaces.get(space)
            if n == 0 or k <= 0 or code is None or m == 0:
                return outs
            block = self._space_block(code, n)
            if block is not None:  # the space is a minority of the rows: one product over its own copy
                bn = block["n"]
                pos = block["pos"][:bn]
                part = block["matrix"][:bn] @ queries[0] if m == 1 else block["matrix"][:bn] @ queries.T
                scores = np.zeros((n, m), dtype=np.float32)
                scores[pos] = part.reshape(bn, m)
                base = np.zeros(n, dtype=bool)
                base[pos] = True
            else:
                scores = (self.matrix[:n] @ queries[0]).reshape(n, 1) if m == 1 else self.matrix[:n] @ queries.T
                base = self.space_codes[:n] == code
                if self.deleted:
                    base &= self.valid[:n]
            for kind in kinds:
                kc = self.kinds.get(kind)
                if kc is None:
                    continue
                candidates = np.nonzero(base & (self.kind_codes[:n] == kc))[0]
                if len(candidates) == 0:
                    continue
                kk = min(k, len(candidates))
                for j in range(m):
                    col = scores[:, j]
                    sub = col[candidates]
                    top = np.argpartition(-sub, kk - 1)[:kk] if kk < len(candidates) else np.arange(len(candidates))
                    order = candidates[top[np.lexsort((self.vids[candidates[top]], -sub[top]))]]
                    outs[j][kind] = [Hit(self.space_names[self.space_codes[p]],
                                         self.item_ids[p],  # type: ignore[arg-type]
                                         self.kind_names[self.kind_codes[p]], float(col[p]), int(self.vids[p]))
                                     for p in order]
            return outs

try:  # numpy >= 2: variable-width strings stored in the array, not as Python objects
    from numpy.dtypes import StringDType as _StringDType

    _ID_DTYPE: Any = _StringDType(na_object=None)
except ImportError:  # pragma: no cover - numpy 1.x
    _ID_DTYPE = None


def _id_array(n: int) -> Any:
    """``n`` empty item-id slots (None): a numpy string array, whose strings are not Python objects — a list of a
    million item-id strings made every full garbage collection walk them, ~50 ms at 1M vectors (R59) — or, on numpy
    1.x, a list."""
    if _ID_DTYPE is None:
        return [None] * n
    a = np.empty(n, dtype=_ID_DTYPE)
    a[:] = None
    return a


def _cut(dist: np.ndarray, m: int, worst: int) -> np.ndarray:
    """Indexes of the ``m``-candidate cut of Hamming distances ``dist`` (:meth:`_Mirror._hamming_candidates`):
    every row at or below the smallest distance whose cumulative count reaches ``m``, or on a wide tie there the
    ``m`` closest (ties by index)."""
    cum = np.cumsum(np.bincount(dist, minlength=worst + 1)[:worst])
    cut = int(np.searchsorted(cum, m))
    keep = np.nonzero(dist <= min(cut, worst - 1))[0]
    if len(keep) > 4 * m:
        keep = keep[np.argsort(dist[keep], kind="stable")[:m]]
    return keep


def _hamming(codes: np.ndarray, qc: np.ndarray, n: int) -> np.ndarray:
    """Hamming distances (uint16) of the first ``n`` columns of ``codes`` (words × rows bit planes) to ``qc``,
    through two reused buffers (no 8-byte temporary per word)."""
    dist = np.empty(n, dtype=np.uint16)
    tmp = np.empty(n, dtype=np.uint64)
    cnt = np.empty(n, dtype=np.uint8)
    for w in range(len(qc)):
        np.bitwise_xor(codes[w, :n], qc[w], out=tmp)
        np.bitwise_count(tmp, out=cnt)
        if w == 0:
            dist[:] = cnt
        else:
            np.add(dist, cnt, out=dist)
    return dist


ROW_SETS_MAX_BYTES = 256 << 20  # the mirror's cached filter row sets (positions + codes), least recently used out
BLOCK_MAX_SHARE = 0.5   # search_by_kind copies a space into its own block when it holds at most this share of rows

_MIRRORS: dict[tuple[str, str], _Mirror] = {}
_MIRRORS_LOCK = threading.Lock()


def _check_query(table: dict, dimension: int, model_id: str | None) -> None:
    """A query vector must come from the active table's model and have its dimension."""
    if model_id is not None and model_id != table["model_id"]:
        raise VectorIndexError(f"the query vector was made by {model_id} but the index holds "
                               f"{table['model_id']} vectors (a migration swapped models?)")
    if dimension != table["dimension"]:
        raise VectorIndexError(f"query has {dimension} dimensions; the index has {table['dimension']}")


def _mirror_key(conn, table: str) -> tuple[str, str]:
    return (conn.filename or f"memory:{id(conn)}", table)


def drop_mirrors() -> None:
    """Forget every in-memory mirror (tests, benchmarks)."""
    with _MIRRORS_LOCK:
        _MIRRORS.clear()


# -- loading a mirror (R60) -----------------------------------------------------------------------------------
def _matrix(n: int, dim: int) -> np.ndarray:
    """A zeroed float32 matrix for a mirror of ``n`` rows, with room for more, its pages mapped now
    (``MAP_POPULATE``): on a machine short of free huge pages, numpy's zeros (``MADV_HUGEPAGE``) made the first
    touch of a 1.5 GB matrix stall in page compaction — 3–7 s against ~1 s populated (R60)."""
    rows = n + n // 64 + 1024  # room for ~1.5% more before the first _grow (which doubles)
    flags = getattr(mmap, "MAP_POPULATE", None)
    if flags is None or n < 65536:  # not Linux, or small: numpy's allocation
        return np.zeros((rows, dim), dtype=np.float32)
    buf = mmap.mmap(-1, rows * dim * 4, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | flags)
    return np.frombuffer(buf, dtype=np.float32).reshape(rows, dim)


def _read_vectors(conn, table: dict) -> tuple[np.ndarray, np.ndarray]:
    """(vids, matrix) of every vector of ``table``, in vec0's full-scan order (the order of
    :func:`vsql.all_vectors`); the matrix has spare zero rows (the mirror's room to grow). From vec0's chunks when
    the sqlite-vec version's storage is known (:data:`vsql.VEC0_READ_VERSIONS`), else through the virtual table."""
    got = _read_vec0_chunks(conn, table)
    if got is not None:
        return got
    dim = int(table["dimension"])
    vids: list[int] = []
    blobs: list[bytes] = []
    for vid, blob in vsql.vector_blobs(conn, table["table_name"]):
        vids.append(vid)
        blobs.append(blob)
    matrix = _matrix(len(vids), dim)
    int8 = element_of(table) == "int8"
    for i in range(0, len(blobs), 8192):
        part = blobs[i:i + 8192]
        if int8:
            matrix[i:i + len(part)] = dequantize_int8(np.frombuffer(b"".join(part), dtype=np.int8).reshape(len(part), dim))
        else:
            matrix[i:i + len(part)] = np.frombuffer(b"".join(part), dtype="<f4").reshape(len(part), dim)
    return np.asarray(vids, dtype=np.int64), matrix


def _read_vec0_chunks(conn, table: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_read_vectors` from vec0's shadow tables — each chunk's vectors (1024 a chunk) read as one blob,
    straight into the matrix, instead of a virtual-table step per vector (17 s → ~0.3 s at 1M, R60); an int8 table's
    chunks through a scratch buffer, dequantized (X3). None when the storage is not one this code knows or does not
    add up (the caller then reads through the virtual table)."""
    name, dim = table["table_name"], int(table["dimension"])
    int8 = element_of(table) == "int8"
    loaded, created = vsql.vec0_versions(conn, name)
    if loaded not in vsql.VEC0_READ_VERSIONS or created not in vsql.VEC0_READ_VERSIONS:
        return None
    total = vsql.vec0_row_count(conn, name)
    matrix = _matrix(total, dim)
    vids = np.zeros(total, dtype=np.int64)
    scratch: np.ndarray | None = None
    reader = vsql.Vec0Vectors(conn, name)
    n = 0
    try:
        for chunk_id, size, validity, rowids in vsql.vec0_chunks(conn, name):
            size = int(size)
            if len(validity) != (size + 7) // 8 or len(rowids) != 8 * size:
                return None
            ok = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size].astype(bool)
            k = int(ok.sum())
            if n + k > total:
                return None
            ids = np.frombuffer(rowids, dtype="<i8")
            if k == size and not int8:  # a full chunk: its vectors go straight into their rows
                if not reader.read_into(chunk_id, matrix[n:n + k]):
                    return None
                vids[n:n + k] = ids
            elif k:
                if scratch is None or scratch.shape[0] != size:
                    scratch = np.empty((size, dim), dtype=np.int8 if int8 else np.float32)
                if not reader.read_into(chunk_id, scratch):
                    return None
                vids[n:n + k] = ids[ok] if k < size else ids
                rows = scratch[ok] if k < size else scratch
                matrix[n:n + k] = dequantize_int8(rows) if int8 else rows
            n += k
    finally:
        reader.close()
    if n != total:
        return None
    return vids, matrix


def _item_columns(conn) -> tuple[np.ndarray, list[str], list[str], list[str | None]]:
    """(vids, spaces, item ids, kinds) of every item, ascending vid: read as joined text and split (~0.4 s at 1M
    items against ~1 s for row tuples), or — when a value holds the separator — row by row."""
    n, vids_s, ids_s, spaces_s, kinds_s = vsql.item_columns_joined(conn)
    sep = vsql.UNIT_SEP
    ids, spaces, kinds = ids_s.split(sep), spaces_s.split(sep), kinds_s.split(sep)
    vids = np.fromstring(vids_s, dtype=np.int64, sep=",") if n else np.zeros(0, dtype=np.int64)
    if n == 0 or not (len(vids) == len(ids) == len(spaces) == len(kinds) == n):
        rows = vsql.item_columns(conn)
        return (np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)), [r[1] for r in rows],
                [r[2] for r in rows], [r[3] for r in rows])
    if len(vids) > 1 and not bool(np.all(vids[1:] > vids[:-1])):  # the table's order is its rowid's; if not, sort
        order = np.argsort(vids, kind="stable").tolist()
        vids = vids[order]
        ids, spaces, kinds = ([col[i] for i in order] for col in (ids, spaces, kinds))
    return vids, spaces, ids, kinds


def _rowwise_mirror(conn, table: dict) -> _Mirror:
    """The mirror as it was loaded before R60: every row of :func:`vsql.all_vectors` through :meth:`_Mirror.upsert`
    (the reference the bulk load is tested and benchmarked against)."""
    m = _Mirror(int(table["dimension"]), table["version"])
    batch: list[tuple[int, str, str, str | None, np.ndarray]] = []
    for vid, space, item_id, kind, blob in vsql.all_vectors(conn, table["table_name"]):
        batch.append((int(vid), space, item_id, kind, _decode(table, blob)))
        if len(batch) >= 8192:
            m.upsert(batch)
            batch = []
    if batch:
        m.upsert(batch)
    return m


# -- the index ----------------------------------------------------------------------------------------------
_BLAS_LIMITED: int | None = None


def limit_blas_threads(n: int) -> None:
    """Cap the BLAS thread pool (embeddings.vector_index.blas_threads; 0 = leave it). A matrix-vector product is
    memory-bound: on a busy 2-core machine OpenBLAS's second thread makes it 10-15x slower (R22)."""
    global _BLAS_LIMITED
    if n <= 0 or _BLAS_LIMITED == n:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it BLAS keeps its default
        return
    threadpool_limits(n, user_api="blas")
    _BLAS_LIMITED = n


class VectorIndex:
    """See the module docstring."""

    def __init__(self, conn, config: Config, *, engine: str | None = None, clock=None,
                 embedder: Embedder | None = None):
        self.conn, self.config, self.clock = conn, config, clock
        self.engine = engine or config.embeddings.vector_index.engine
        if self.engine not in ("auto", "sqlite", "numpy"):
            raise VectorIndexError(f"unknown vector engine {self.engine!r} (auto, sqlite, numpy)")
        self._embedders: dict[tuple[str, int], Embedder] = {}
        limit_blas_threads(config.embeddings.vector_index.blas_threads)
        if embedder is not None:
            self._embedders[(embedder.model_id, embedder.dimension)] = embedder

    def _now(self) -> str:
        return self.clock.now() if self.clock is not None else now_utc()

    # -- tables --------------------------------------------------------------------------------------------
    def active(self) -> dict | None:
        return vsql.active_table(self.conn)

    @property
    def storage(self) -> str:
        """The element type new tables store (embeddings.vector_index.storage, X3)."""
        return self.config.embeddings.vector_index.storage

    def ensure_active(self) -> dict:
        """The active table; on a vault without one, create it for the configured model and dimension. An active
        table of the other storage (float32 / int8) is converted first (X4) — every caller is about to write."""
        t = vsql.active_table(self.conn)
        if t is not None:
            if element_of(t) != self.storage and vsql.building_table(self.conn) is None:
                return self.convert_storage()
            return t
        with _write(self.conn):
            t = vsql.active_table(self.conn)
            if t is None:
                vsql.create_table(self.conn, generation=vsql.next_generation(self.conn),
                                  model_id=model_id_for(self.config), dimension=self.config.embeddings.dimension,
                                  status="active", created_at_utc=self._now(), version=GENESIS,
                                  element=self.storage)
                t = vsql.active_table(self.conn)
        assert t is not None
        return t

    def convert_storage(self, element: str | None = None) -> dict:
        """Re-store the active table's vectors as ``element`` (default: the configured storage) in a new generation
        of the same model, from the stored vectors — nothing is encoded again (X4) — and swap it in, all in one
        write transaction. Float32 → int8 quantizes; int8 → float32 keeps the dequantized vectors. Returns the
        active table."""
        element = element or self.storage
        with _write(self.conn):
            old = vsql.active_table(self.conn)
            if old is None or element_of(old) == element:
                return old if old is not None else self.ensure_active()
            if vsql.building_table(self.conn) is not None:
                raise VectorIndexError("a model migration is in progress: finish or cancel it before converting "
                                       "the vector storage")
            name = vsql.create_table(self.conn, generation=vsql.next_generation(self.conn), model_id=old["model_id"],
                                     dimension=int(old["dimension"]), status="building", created_at_utc=self._now(),
                                     version=GENESIS, element=element)
            new = vsql.building_table(self.conn)
            vids, matrix = _read_vectors(self.conn, old)
            meta = vsql.items_by_vids(self.conn, vids.tolist())
            keep = [i for i, v in enumerate(vids.tolist()) if v in meta]  # a vector without an item is stale
            step = 4096
            for a in range(0, len(keep), step):
                part = keep[a:a + step]
                blobs, _ = _stored_form(new, matrix[part])
                vsql.write_vectors(self.conn, name, [(int(vids[i]), meta[int(vids[i])]["space"],
                                                      meta[int(vids[i])]["kind"], b) for i, b in zip(part, blobs)],
                                   element)
            del matrix
            vsql.set_built_through(self.conn, name, vsql.last_rev(self.conn))
            vsql.set_version(self.conn, name, _chain(old["version"], "converted", f"{element}/{len(keep)}"))
            vsql.swap_active(self.conn, old["table_name"], name, self._now())
            active = vsql.active_table(self.conn)
        with _MIRRORS_LOCK:
            _MIRRORS.pop(_mirror_key(self.conn, old["table_name"]), None)
        return active

    def embedder_for(self, model_id: str, dimension: int) -> Embedder:
        key = (model_id, int(dimension))
        if key not in self._embedders:
            emb = get_embedder(self.config, model_id, dimension=dimension, conn=self.conn, clock=self.clock)
            if isinstance(emb, CachedEmbedder):  # a text an item embeds: its vector is read back from vec0 (X1)
                emb.stored = lambda hashes, m=model_id, d=int(dimension): self.stored_vectors(m, d, hashes)
            self._embedders[key] = emb
        return self._embedders[key]

    def stored_vectors(self, model_id: str, dimension: int, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """text sha256 → the vector an item with that text has in a vec0 table of ``model_id`` / ``dimension``
        (the active table, or a building one up to its watermark): the embedding cache's second half (X1)."""
        out: dict[str, np.ndarray] = {}
        want = list(dict.fromkeys(hashes))
        for t in (vsql.active_table(self.conn), vsql.building_table(self.conn)):
            if not want or t is None or (t["model_id"], int(t["dimension"])) != (model_id, int(dimension)):
                continue
            by_sha = vsql.vids_by_sha(self.conn, want, None if t["status"] == "active" else t["built_through_rev"])
            blobs = vsql.get_vectors(self.conn, t["table_name"], [v for vids in by_sha.values() for v in vids])
            for h, vids in by_sha.items():
                blob = next((blobs[v] for v in vids if v in blobs), None)
                if blob is not None:
                    out[h] = _decode(t, blob)
            want = [h for h in want if h not in out]
        return out

    def thresholds(self) -> Thresholds:
        t = self.active()
        return thresholds_for(self.config, t["model_id"] if t else model_id_for(self.config))

    # -- writes --------------------------------------------------------------------------------------------
    def upsert(self, space: str, items: Sequence[tuple[str, str] | tuple[str, str, str | None]], *,
               vectors: Sequence[np.ndarray] | None = None, model_id: str | None = None) -> int:
        """Index (or re-index) items ``(item_id, text[, kind])`` in ``space``: embedded with the active model
        (through the cache), written in the caller's transaction. Unchanged items are skipped. Returns how many
        were written. ``vectors`` (one per item, made by ``model_id``) are used as they are when ``model_id`` is
        the active model and the dimension matches — the caller embedded the texts already."""
        norm = []
        for it in items:
            item_id, text = str(it[0]), it[1]
            kind = it[2] if len(it) > 2 else None  # type: ignore[misc]
            if not isinstance(text, str) or not text.strip():
                raise VectorIndexError(f"item {item_id!r} in space {space!r} has no text to embed")
            norm.append((item_id, text, kind))
        if not norm:
            return 0
        given: dict[str, np.ndarray] = {}
        if vectors is not None:
            if len(vectors) != len(norm):
                raise VectorIndexError(f"upsert got {len(vectors)} vectors for {len(norm)} items")
            given = {i: np.asarray(v, dtype=np.float32).reshape(-1) for (i, _, _), v in zip(norm, vectors)}
        table = self.ensure_active()
        existing = vsql.items_by_ids(self.conn, space, [i for i, _, _ in norm])
        changed = []
        for item_id, text, kind in dict((i, (i, t, k)) for i, t, k in norm).values():
            old = existing.get(item_id)
            if (old is None or old["text_sha256"] != vsql.text_key(sha256_hex(text))
                    or (old["kind"] or None) != (kind or None)):
                changed.append((item_id, text, kind))
        if not changed:
            return 0
        if given and model_id == table["model_id"] and all(given[i].shape[0] == int(table["dimension"])
                                                           for i, _, _ in changed):
            vecs = np.stack([given[i] for i, _, _ in changed])
        else:
            vecs = self._embed_for_items(table, [t for _, t, _ in changed])
        with _write(self.conn):
            now_table = vsql.active_table(self.conn)
            if (now_table["model_id"], now_table["dimension"]) != (table["model_id"], table["dimension"]):
                vecs = self._embed_for_items(now_table, [t for _, t, _ in changed])  # a migration swapped models
            table = now_table
            first = vsql.reserve_revs(self.conn, len(changed))
            keep = TEXT_SOURCES  # a space whose source derives the text stores none (X2)
            shas = [sha256_hex(t) for _, t, _ in changed]
            vids = vsql.upsert_items(self.conn, [
                {"space": space, "item_id": i, "kind": k, "text": None if space in keep else t, "text_sha256": h,
                 "rev": first + n} for n, ((i, t, k), h) in enumerate(zip(changed, shas))])
            rows = [(vid, space, i, k, v) for vid, (i, _, k), v in zip(vids, changed, vecs)]
            self._write_rows(table, rows)
            # the vectors are in vec0 now: a cache row of the same text would be a second copy (X1)
            cache_sql.delete_many(self.conn, table["model_id"], int(table["dimension"]), shas)
        return len(changed)

    def _embed_for_items(self, table: dict, texts: list[str]) -> np.ndarray:
        """Vectors for texts an upsert writes to vec0: through the cache and vec0 lookups, but no new cache rows —
        vec0 holds them (X1)."""
        emb = self.embedder_for(table["model_id"], table["dimension"])
        if isinstance(emb, CachedEmbedder):
            return emb.embed_unsaved(texts)[0]
        return emb.embed(texts)

    def _write_rows(self, table: dict, rows: list[tuple[int, str, str, str | None, np.ndarray]]) -> None:
        blobs, stored = _stored_form(table, [r[4] for r in rows])
        rows = [(vid, s, i, k, v) for (vid, s, i, k, _), v in zip(rows, stored)]  # what the table reads back (X3)
        vsql.write_vectors(self.conn, table["table_name"], [(vid, s, k, b) for (vid, s, _, k, _), b in zip(rows, blobs)],
                           element_of(table))
        old = table["version"]
        new = _chain(old, "upsert", _digest_rows(rows))
        vsql.set_version(self.conn, table["table_name"], new)
        self._advance_mirror(table["table_name"], old, new, lambda m: m.upsert(rows))

    def delete(self, space: str, item_ids: Sequence[str]) -> int:
        found = vsql.items_by_ids(self.conn, space, list(item_ids))
        if not found:
            return 0
        vids = sorted(int(r["vid"]) for r in found.values())
        with _write(self.conn):
            table = vsql.active_table(self.conn)
            if table is not None and self.config.embeddings.cache:
                self._keep_in_cache(table, vids)
            vsql.delete_items(self.conn, vids)
            if table is not None:
                vsql.delete_vectors(self.conn, table["table_name"], vids)
                old = table["version"]
                new = _chain(old, "delete", ",".join(map(str, vids)))
                vsql.set_version(self.conn, table["table_name"], new)
                self._advance_mirror(table["table_name"], old, new, lambda m: m.delete(vids))
        return len(vids)

    def as_stored(self, vector: np.ndarray) -> np.ndarray:
        """``vector`` as the active table reads it back (int8 storage: quantized and dequantized, X3) — what a
        caller keeping its own copy of a vector it indexed scores with, to match the index exactly."""
        t = vsql.active_table(self.conn)
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        return _stored_form(t, v.reshape(1, -1))[1][0] if t is not None else v

    def _keep_in_cache(self, table: dict, vids: list[int]) -> None:
        """Before items go: their vectors whose text no other item embeds move to the embedding cache, so that a
        rebuild (a full reindex, a changed document changed back) does not encode them again (X1). Forgetting
        deletes through :mod:`kenning.forget`, which keeps nothing."""
        shas = vsql.shas_of_vids(self.conn, vids)
        gone = set(vids)
        held = {h for h, vs in vsql.vids_by_sha(self.conn, list(set(shas.values()))).items()
                if any(v not in gone for v in vs)}
        keep = {vid: h for vid, h in shas.items() if h not in held}
        if not keep:
            return
        blobs = vsql.get_vectors(self.conn, table["table_name"], list(keep))
        rows = {keep[vid]: _decode(table, blob).astype("<f4").tobytes() for vid, blob in sorted(blobs.items())}
        cache_sql.put_many(self.conn, table["model_id"], int(table["dimension"]), sorted(rows.items()), self._now())

    def _advance_mirror(self, table: str, old: str, new: str, apply: Callable[[_Mirror], None]) -> None:
        key = _mirror_key(self.conn, table)
        with _MIRRORS_LOCK:
            m = _MIRRORS.get(key)
            if m is None:
                return
            if m.version == old:
                apply(m)
                m.version = new
            else:
                del _MIRRORS[key]

    # -- reads ---------------------------------------------------------------------------------------------
    def _use_mirror(self, table: dict) -> bool:
        if self.engine == "numpy":
            return True
        if self.engine == "sqlite":
            return False
        with _MIRRORS_LOCK:
            m = _MIRRORS.get(_mirror_key(self.conn, table["table_name"]))
        if m is not None and m.version == table["version"]:
            return True  # already loaded and current: no need to count
        return vsql.count_items(self.conn) <= self.config.embeddings.vector_index.mirror_max_vectors

    def _mirror(self, table: dict) -> _Mirror:
        key = _mirror_key(self.conn, table["table_name"])
        with _MIRRORS_LOCK:
            m = _MIRRORS.get(key)
            if m is not None and m.version == table["version"] and m.dim == table["dimension"]:
                return m
        vids, matrix = _read_vectors(self.conn, table)
        m = _Mirror.filled(int(table["dimension"]), table["version"], vids, matrix, _item_columns(self.conn))
        with _MIRRORS_LOCK:
            for other in [k for k in _MIRRORS if k[0] == key[0] and k != key]:
                del _MIRRORS[other]  # a retired table's mirror: never used again
            _MIRRORS[key] = m
        return m

    def search(self, query: str | np.ndarray, k: int = 10, *, space: str | None = None,
               kinds: Sequence[str] | None = None, item_ids: Sequence[str] | None = None,
               min_score: float | None = None, model_id: str | None = None,
               allow: Callable[[np.ndarray], np.ndarray] | None = None, exact: bool = False,
               oversample: int = 20) -> list[Hit]:
        """Top-``k`` by cosine similarity in the active table. ``query`` is a text (embedded with the
        active model) or a vector of the active dimension (pass ``model_id`` to have it checked). Filters:
        ``space``, ``kinds`` (any of), ``item_ids`` (an allow-list, needs ``space``), ``min_score``, and
        ``allow``: a function from an array of vids to a boolean mask (the caller's own metadata filter).
        Exact in the mirror up to ``vector_index.quantize_above`` vectors, 1-bit codes + exact re-rank above it
        (``exact=True`` forces a full scan); without a mirror sqlite-vec's KNN, where ``allow`` filters
        ``k × oversample`` neighbours (approximate)."""
        if item_ids is not None and space is None:
            raise VectorIndexError("search(item_ids=…) needs space=…: item ids are unique per space")
        if not isinstance(query, str):
            q = np.asarray(query, dtype=np.float32).reshape(-1)
        for _ in range(3):
            table = vsql.active_table(self.conn)
            if table is None:
                return []
            if isinstance(query, str):  # embed before the read snapshot (the cache may write)
                q = self.embedder_for(table["model_id"], table["dimension"]).embed([query])[0]
            with _read(self.conn):
                current = vsql.active_table(self.conn)
                if current is None:
                    return []
                if (current["model_id"], current["dimension"]) != (table["model_id"], table["dimension"]):
                    continue  # a migration swapped models between the two reads: embed again
                hits = self._search_table(current, q, k, space, kinds, item_ids, model_id, allow, exact,
                                          oversample)
            break
        else:  # pragma: no cover - three swaps in a row
            raise VectorIndexError("the active embedding model kept changing during the search; try again")
        if min_score is not None:
            hits = [h for h in hits if h.score >= min_score]
        return hits

    def prepare_search(self, query: np.ndarray, k: int, *, space: str | None = None, model_id: str | None = None,
                       allow: Callable[[np.ndarray], np.ndarray] | None = None) -> Callable[[], list[Hit]] | None:
        """:meth:`search` of a query vector in two parts, for a search run in another thread (R44): the active
        table and its mirror are looked up here (SQL, the caller's thread), and the returned function searches the
        mirror (numpy under the mirror's lock, no SQL) with what ``search`` gives. None when the search is not a
        quantized mirror scan (no mirror, or at most ``vector_index.quantize_above`` vectors): call ``search``."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        vcfg = self.config.embeddings.vector_index
        with _read(self.conn):
            table = vsql.active_table(self.conn)
            if table is None or not vcfg.quantize_above or not self._use_mirror(table):
                return None
            _check_query(table, q.shape[0], model_id)
            mirror = self._mirror(table)
        if mirror.n <= vcfg.quantize_above:
            return None
        rerank = max(k * vcfg.rerank_factor, vcfg.rerank_min)
        return lambda: mirror.search(q, k, space, None, None, allow, vcfg.quantize_above, rerank)

    def search_by_kind(self, query: np.ndarray, k: int, *, space: str, kinds: Sequence[str],
                       model_id: str | None = None) -> dict[str, list[Hit]]:
        """``{kind: search(query, k, space=space, kinds=[kind])}`` for each kind — with the in-memory mirror from
        one pass over the vectors (seed 000's resolver and conflict engine ask for both polarities of one atom)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        with _read(self.conn):
            table = vsql.active_table(self.conn)
            if table is None:
                return {x: [] for x in kinds}
            _check_query(table, q.shape[0], model_id)
            if self._use_mirror(table):
                return self._mirror(table).search_by_kind(q, k, space, list(kinds))
            return {x: self._search_table(table, q, k, space, [x], None, model_id) for x in kinds}

    def search_by_kind_many(self, queries: np.ndarray, k: int, *, space: str, kinds: Sequence[str],
                            model_id: str | None = None) -> list[dict[str, list[Hit]]]:
        """``search_by_kind`` for each row of ``queries`` — with the in-memory mirror from one matrix product."""
        qs = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        with _read(self.conn):
            table = vsql.active_table(self.conn)
            if table is None:
                return [{x: [] for x in kinds} for _ in range(qs.shape[0])]
            _check_query(table, qs.shape[1], model_id)
            if self._use_mirror(table):
                return self._mirror(table).search_by_kind_many(np.ascontiguousarray(qs), k, space, list(kinds))
            return [{x: self._search_table(table, q, k, space, [x], None, model_id) for x in kinds} for q in qs]

    def _search_table(self, table: dict, q: np.ndarray, k: int, space: str | None, kinds: Sequence[str] | None,
                      item_ids: Sequence[str] | None, model_id: str | None,
                      allow: Callable[[np.ndarray], np.ndarray] | None = None, exact: bool = False,
                      oversample: int = 20) -> list[Hit]:
        _check_query(table, q.shape[0], model_id)
        vids = None
        if item_ids is not None:
            vids = [int(r["vid"]) for r in vsql.items_by_ids(self.conn, space, list(item_ids)).values()]  # type: ignore[arg-type]
            if not vids:
                return []
        if self._use_mirror(table):
            vcfg = self.config.embeddings.vector_index
            return self._mirror(table).search(q, k, space, list(kinds) if kinds is not None else None, vids, allow,
                                              0 if exact else vcfg.quantize_above,
                                              max(k * vcfg.rerank_factor, vcfg.rerank_min))
        kinds_l = [x or "" for x in kinds] if kinds is not None else None
        want = k if allow is None else k * oversample
        found = vsql.knn(self.conn, table["table_name"], _query_blob(table, q), want, space=space, kinds=kinds_l,
                         vids=vids, element=element_of(table))
        if allow is not None and found:
            ok = np.asarray(allow(np.asarray([v for v, _ in found], dtype=np.int64)), dtype=bool)
            found = [f for f, keep in zip(found, ok) if keep][:k]
        meta = vsql.items_by_vids(self.conn, [v for v, _ in found])
        return [Hit(meta[v]["space"], meta[v]["item_id"], meta[v]["kind"] or None, 1.0 - d, v)
                for v, d in found if v in meta]

    # -- status and migration ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        with _read(self.conn):
            active = vsql.active_table(self.conn)
            building = vsql.building_table(self.conn)
            total = vsql.count_items(self.conn)
            out: dict[str, Any] = {
                "items": total, "spaces": vsql.spaces(self.conn),
                "configured": {"model_id": model_id_for(self.config), "dimension": self.config.embeddings.dimension},
                "active": None, "building": None, "cache": cache_sql.stats(self.conn),
                "history": [{k: t[k] for k in ("table_name", "model_id", "dimension", "status", "created_at_utc",
                                                "activated_at_utc", "retired_at_utc")}
                            for t in vsql.all_tables(self.conn)],
            }
            if active is not None:
                out["active"] = {"table": active["table_name"], "model_id": active["model_id"],
                                 "dimension": active["dimension"], "storage": element_of(active), "activated_at_utc": active["activated_at_utc"],
                                 "vectors": vsql.count_vectors(self.conn, active["table_name"])}
            if building is not None:
                left = vsql.count_items_after_rev(self.conn, building["built_through_rev"])
                out["building"] = {"table": building["table_name"], "model_id": building["model_id"],
                                   "dimension": building["dimension"], "started_at_utc": building["created_at_utc"],
                                   "items_done": total - left, "items_total": total,
                                   "progress_pct": round(100.0 * (total - left) / total, 1) if total else 100.0}
        target = (out["configured"]["model_id"], out["configured"]["dimension"])
        out["matches_config"] = active is None or (active["model_id"], active["dimension"]) == target
        return out

    def cancel_migration(self) -> bool:
        with _write(self.conn):
            b = vsql.building_table(self.conn)
            if b is None:
                return False
            vsql.forget_table(self.conn, b["table_name"])
        return True

    def _texts_of(self, items: list[dict]) -> list[str | None]:
        """The text of each item: stored, or derived from its source (X2: a search document's item keeps none);
        None when the source no longer gives one (the document went or is skipped now)."""
        derived: dict[str, dict[str, str | None]] = {}
        for space in sorted({it["space"] for it in items if it["text"] is None}):
            source = TEXT_SOURCES.get(space)  # registered from above (the index stage, the CLI): llm is the floor
            if source is None:
                raise VectorIndexError(f"items of space {space!r} keep no text and no source derives it; "
                                       "re-index that space instead of migrating it")
            derived[space] = source(self.conn, self.config, [it["item_id"] for it in items
                                                             if it["space"] == space and it["text"] is None])
        return [it["text"] if it["text"] is not None else (derived[it["space"]].get(it["item_id"]) or None)
                for it in items]

    def _embed_items(self, embedder: Embedder, items: list[dict]) -> tuple[list[dict], np.ndarray]:
        """(the items that still have a text, their vectors); an item whose source lost its text is removed (the
        next index run or fill settles its document)."""
        texts = self._texts_of(items)
        lost: dict[str, list[str]] = {}
        for it, t in zip(items, texts):
            if t is None:
                lost.setdefault(it["space"], []).append(it["item_id"])
        for space, ids in lost.items():
            self.delete(space, ids)
        kept = [(it, t) for it, t in zip(items, texts) if t is not None]
        if not kept:
            return [], np.zeros((0, embedder.dimension), np.float32)
        if isinstance(embedder, CachedEmbedder):  # the vectors go to the new vec0 table: no cache rows (X1)
            vecs = embedder.embed_unsaved([t for _, t in kept])[0]
        else:
            vecs = embedder.embed([t for _, t in kept])
        return [it for it, _ in kept], vecs

    def migrate(self, spec: str | None = None, *, dimension: int | None = None, batch_size: int | None = None,
                pause_s: float | None = None, progress: Callable[[int, int], None] | None = None,
                stop_after_batches: int | None = None) -> dict[str, Any]:
        """Re-embed every item with ``spec`` (default: the configured backend) into a new table, then swap.
        DOC72 §3.7: batches of ``migration_batch_size`` in their own transactions while queries use the active
        table; at full parity one write transaction retires and drops the old table and activates the new.
        ``stop_after_batches`` stops early (the build resumes on the next call) — for tests and Ctrl-C."""
        vcfg = self.config.embeddings.vector_index
        batch_size = batch_size or vcfg.migration_batch_size
        pause_s = vcfg.migration_batch_pause_s if pause_s is None else pause_s
        target = model_id_for(self.config, spec)
        dim = int(dimension or self.config.embeddings.dimension)
        if self.conn.in_transaction:
            raise VectorIndexError("migrate() runs its own transactions; call it outside a stage transaction")
        active = vsql.active_table(self.conn)
        if active is None:  # nothing indexed yet: the target simply becomes the first table
            self.ensure_active()
            active = vsql.active_table(self.conn)
            if (active["model_id"], active["dimension"]) != (target, dim) and vsql.count_items(self.conn) == 0:
                with _write(self.conn):
                    vsql.forget_table(self.conn, active["table_name"])
                    vsql.create_table(self.conn, generation=vsql.next_generation(self.conn), model_id=target,
                                      dimension=dim, status="active", created_at_utc=self._now(), version=GENESIS,
                                      element=self.storage)
                return {"status": "created", "model_id": target, "dimension": dim, "items": 0}
        if (active["model_id"], active["dimension"]) == (target, dim):
            if element_of(active) != self.storage and vsql.building_table(self.conn) is None:
                self.convert_storage()  # the same model, another storage: no re-encoding (X4)
                return {"status": "converted", "model_id": target, "dimension": dim, "storage": self.storage,
                        "items": vsql.count_items(self.conn)}
            return {"status": "already_active", "model_id": target, "dimension": dim,
                    "items": vsql.count_items(self.conn)}
        embedder = self.embedder_for(target, dim)  # fails now (clearly) if the target model cannot load
        with _write(self.conn):
            building = vsql.building_table(self.conn)
            if building is not None and (building["model_id"], building["dimension"]) != (target, dim):
                raise VectorIndexError(
                    f"a migration to {building['model_id']} ({building['dimension']}-d) is in progress; finish it "
                    f"with `kenning embeddings migrate {building['model_id']}` or drop it with --cancel")
            if building is None:
                vsql.create_table(self.conn, generation=vsql.next_generation(self.conn), model_id=target,
                                  dimension=dim, status="building", created_at_utc=self._now(), version=GENESIS,
                                  element=self.storage)
                building = vsql.building_table(self.conn)
        name = building["table_name"]
        watermark = int(building["built_through_rev"])
        batches = 0
        total = vsql.count_items(self.conn)
        while True:
            items = vsql.items_after_rev(self.conn, watermark, batch_size)
            if not items:
                break
            last = max(int(it["rev"]) for it in items)
            items, vecs = self._embed_items(embedder, items)
            with _write(self.conn):
                current = {int(r["vid"]): r for r in vsql.items_by_vids(self.conn, [it["vid"] for it in items]).values()}
                rows = [(int(it["vid"]), it["space"], it["item_id"], it["kind"], v) for it, v in zip(items, vecs)
                        if int(it["vid"]) in current]
                if rows:
                    blobs, _ = _stored_form(building, [r[4] for r in rows])
                    vsql.write_vectors(self.conn, name, [(vid, s, k, b) for (vid, s, _, k, _), b in zip(rows, blobs)],
                                       element_of(building))
                watermark = last
                vsql.set_built_through(self.conn, name, watermark)
            batches += 1
            if progress is not None:
                total = vsql.count_items(self.conn)
                progress(total - vsql.count_items_after_rev(self.conn, watermark), total)
            if stop_after_batches is not None and batches >= stop_after_batches:
                return {"status": "paused", "model_id": target, "dimension": dim, "batches": batches,
                        "items_done": total - vsql.count_items_after_rev(self.conn, watermark), "items_total": total}
            if pause_s:
                time.sleep(pause_s)
        # The swap: catch up with anything written since the last batch, drop vectors of deleted items, check
        # parity, retire + drop the old table and activate the new — all in one write transaction.
        with transaction(self.conn):
            late = vsql.items_after_rev(self.conn, watermark, 1 << 62)
            if late:
                last = max(int(it["rev"]) for it in late)
                late, lv = self._embed_items(embedder, late)
                blobs, _ = _stored_form(building, lv)
                vsql.write_vectors(self.conn, name, [(int(it["vid"]), it["space"], it["kind"], b)
                                                     for it, b in zip(late, blobs)], element_of(building))
                watermark = last
                vsql.set_built_through(self.conn, name, watermark)
            stale = sorted(vsql.vids_in_table(self.conn, name) - vsql.vids_of_items(self.conn))
            vsql.delete_vectors(self.conn, name, stale)
            n_items, n_vecs = vsql.count_items(self.conn), vsql.count_vectors(self.conn, name)
            if n_items != n_vecs:
                raise VectorIndexError(f"migration parity check failed: {n_vecs} vectors for {n_items} items; "
                                       "nothing was swapped (run the migration again)")
            old = vsql.active_table(self.conn)
            vsql.set_version(self.conn, name, _chain(GENESIS, "migrated", f"{target}/{dim}/{watermark}/{n_vecs}"))
            vsql.swap_active(self.conn, old["table_name"] if old else None, name, self._now())
        with _MIRRORS_LOCK:
            if old is not None:
                _MIRRORS.pop(_mirror_key(self.conn, old["table_name"]), None)
        return {"status": "swapped", "model_id": target, "dimension": dim, "items": n_items, "batches": batches,
                "late_items": len(late), "stale_removed": len(stale),
                "previous": {"model_id": old["model_id"], "dimension": old["dimension"]} if old else None}
