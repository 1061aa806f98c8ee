"""The vector lanes' view of the model layer's vector index (decisions R14, R15).

Search documents are items of one vector-index space (``retrieval.vector.space``, item id = doc_rowid), embedded
by the one configured embedder (``embeddings.backend``). The speaker-, time- and ``--as-of``-restricted vector
lanes filter *inside* the search: :class:`DocMeta` holds each vector's document metadata (kind, speaker, said-at
time, resolved event days) as numpy arrays indexed by vid, and turns a lane's filters into the boolean mask the
index applies before ranking (exact in the in-memory mirror; 1-bit codes + exact re-rank above
``embeddings.vector_index.quantize_above``). The arrays are loaded once per (vault, search-index version,
vector-table version) and shared by every Searcher in the process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from kenning.config.models import Config
from kenning.llm.embed import Embedder
from kenning.llm.index import VectorIndex
from kenning.store import search as search_sql
from kenning.store import vectors as vsql

_EPOCH = np.datetime64("1970-01-01T00:00:00", "s")
_NONE_S = np.iinfo(np.int64).min
_NONE_D = np.iinfo(np.int32).min


def _given(xs: Sequence[str | None], width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(positions of the given values — not None, not '' —, those values cut to ``width`` characters) as numpy
    arrays, the cut and the test made by numpy (R60: list comprehensions over 1M values cost ~0.15 s each); None
    when there is none."""
    if not any(xs):
        return None
    text = np.array([x or "" for x in xs] if None in xs else xs, dtype=f"U{width}")  # numpy cuts to the width
    if all(xs):
        return np.arange(len(xs)), text
    idx = np.flatnonzero(text != "")
    return idx, text[idx]


def _seconds(ts: Sequence[str | None]) -> np.ndarray:
    """"YYYY-MM-DDTHH:MM:SS.sssZ" → seconds since the epoch (int64); missing → int64 min."""
    out = np.full(len(ts), _NONE_S, dtype=np.int64)
    given = _given(ts, 19)
    if given is not None:
        out[given[0]] = (given[1].astype("datetime64[s]") - _EPOCH).astype(np.int64)
    return out


def _days(ds: Sequence[str | None]) -> np.ndarray:
    out = np.full(len(ds), _NONE_D, dtype=np.int32)
    given = _given(ds, 10)
    if given is not None:
        out[given[0]] = given[1].astype("datetime64[D]").astype(np.int64).astype(np.int32)
    return out


def seconds_of(ts: str) -> int:
    return int((np.datetime64(ts[:19], "s") - _EPOCH).astype(np.int64))


def day_of(d: str) -> int:
    return int(np.datetime64(d[:10], "D").astype(np.int64))


@dataclass
class DocMeta:
    """Per-vid metadata of the search space's vectors."""

    key: tuple
    rowid: np.ndarray        # doc_rowid by vid (-1: not a search vector)
    kind: np.ndarray         # int8 code (kinds list)
    speaker: np.ndarray      # int32 code of the casefolded speaker (-1: none)
    said: np.ndarray         # int64 seconds
    ev_start: np.ndarray     # int32 days
    ev_end: np.ndarray
    kinds: dict[str, int]
    speakers: dict[str, int]
    by_speaker: dict | None = None   # speaker codes -> their vids, ascending (R57)
    said_order: np.ndarray | None = None   # vids by said-at time (stable), and those times, for time ranges (R57)
    said_sorted: np.ndarray | None = None
    event_vids: np.ndarray | None = None   # vids with a resolved event time, ascending
    vid_by_rowid: np.ndarray | None = None  # doc_rowid -> vid (-1: no vector), built on first use (R59)
    speaker_order: np.ndarray | None = None   # vids by speaker code (stable), and each code's bounds in it (R59)
    speaker_bounds: np.ndarray | None = None

    @classmethod
    def load(cls, conn, space: str, key: tuple) -> "DocMeta":
        vids, rowids, kinds_c, speakers_c, said_l, es_l, ee_l = _doc_meta_columns(conn, space)
        # column by column; kinds and speakers have few distinct values: each is coded once (R60)
        kinds = {k: i for i, k in enumerate(sorted(set(kinds_c)))}
        fold = {s: (s or "").casefold() for s in set(speakers_c)}
        speakers = {s: i for i, s in enumerate(sorted(set(fold.values())))}
        speaker_code = {raw: speakers[f] for raw, f in fold.items()}
        v = np.asarray(vids, dtype=np.int64)
        size = int(v.max()) + 1 if len(v) else 1
        m = cls(key, np.full(size, -1, np.int64), np.full(size, -1, np.int8), np.full(size, -1, np.int32),
                np.full(size, _NONE_S, np.int64), np.full(size, _NONE_D, np.int32), np.full(size, _NONE_D, np.int32),
                kinds, speakers)
        if len(v):
            m.rowid[v] = np.asarray(rowids, dtype=np.int64)
            m.kind[v] = np.fromiter(map(kinds.__getitem__, kinds_c), dtype=np.int8, count=len(v))
            m.speaker[v] = np.fromiter(map(speaker_code.__getitem__, speakers_c), dtype=np.int32, count=len(v))
            m.said[v] = _seconds(said_l)
            m.ev_start[v] = _days(es_l)
            m.ev_end[v] = _days(ee_l)
        return m

    def speaker_vids(self, codes: Sequence[int]) -> np.ndarray:
        """The vids of the documents said by any of ``codes`` (ascending), kept for the next question."""
        key = tuple(sorted(set(codes)))
        if self.by_speaker is None:
            self.by_speaker = {}
        got = self.by_speaker.get(key)
        if got is None:
            if len(self.by_speaker) >= 256:
                self.by_speaker.clear()
            if self.speaker_order is None:
                # every speaker's vids at once (one stable sort, kept): a speaker seen for the first time is a slice,
                # not a pass over every vid (~10 ms at 1M) (R59)
                self.speaker_order = np.argsort(self.speaker, kind="stable").astype(np.int64)
                self.speaker_bounds = np.searchsorted(self.speaker[self.speaker_order],
                                                      np.arange(len(self.speakers) + 1), side="left")
            assert self.speaker_bounds is not None
            parts = [self.speaker_order[self.speaker_bounds[c]:self.speaker_bounds[c + 1]]
                     for c in key if 0 <= c < len(self.speakers)]
            got = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            if len(parts) > 1:
                got = np.sort(got)
            self.by_speaker[key] = got
        return got

    def vids_of(self, rowids: np.ndarray) -> np.ndarray:
        """The vid of each document rowid (-1 where the document has no vector in this space)."""
        if self.vid_by_rowid is None:
            live = np.nonzero(self.rowid >= 0)[0]
            table = np.full(int(self.rowid[live].max()) + 1 if len(live) else 1, -1, dtype=np.int64)
            table[self.rowid[live]] = live
            self.vid_by_rowid = table
        r = np.asarray(rowids, dtype=np.int64)
        inside = (r >= 0) & (r < len(self.vid_by_rowid))
        return np.where(inside, self.vid_by_rowid[np.where(inside, r, 0)], -1)

    def may_pass(self, rowids: np.ndarray, *, speakers: Sequence[str] | None = None, start: str | None = None,
                 end: str | None = None) -> np.ndarray:
        """A superset test of a restricted lane's speaker / time filter (:meth:`Searcher._pool_keep`) for these
        documents: False only where this metadata shows the filter cannot pass — a document without a vector
        here is always True (its row is tested as before). The time range is widened by two days on each side
        (the said-at times are whole seconds; the filter compares ISO strings). Used so the pool's lanes fetch
        and test ``search_docs`` rows only for documents that may pass (R59)."""
        vids = self.vids_of(rowids)
        known = vids >= 0
        v = np.where(known, vids, 0)
        ok = np.ones(len(vids), dtype=bool)
        if speakers:
            codes = [self.speakers[x.casefold()] for x in speakers if x.casefold() in self.speakers]
            ok &= np.isin(self.speaker[v], codes)
        if start and end:
            said = self.said[v]
            t0, t1 = seconds_of(start) - 2 * 86400, seconds_of(end) + 2 * 86400
            ok &= ((said != _NONE_S) & (said >= t0) & (said < t1)) | (self.ev_start[v] != _NONE_D) | \
                (self.ev_end[v] != _NONE_D)
        return ok | ~known

    def time_vids(self, t0: int, t1: int) -> np.ndarray | None:
        """A superset of the vids a said-at/event-time filter [t0, t1) keeps — said then, or holding an event time
        (tested by the filter) — ascending; None when that is more than a quarter of the vids (no gain)."""
        if self.said_order is None:
            order = np.argsort(self.said, kind="stable")
            self.said_sorted = self.said[order]
            self.event_vids = np.nonzero(self.ev_start != _NONE_D)[0].astype(np.int64)
            self.said_order = order
        assert self.said_sorted is not None and self.event_vids is not None
        lo, hi = np.searchsorted(self.said_sorted, [t0, t1], side="left")
        if (hi - lo) + len(self.event_vids) > TIME_ROWS_MAX_SHARE * len(self.said):
            return None
        mark = np.zeros(len(self.said), dtype=bool)  # a union in vid order without sorting
        mark[self.said_order[lo:hi]] = True
        mark[self.event_vids] = True
        return np.nonzero(mark)[0].astype(np.int64)

    def mask_fn(self, *, kinds: Sequence[str] | None = None, speakers: Sequence[str] | None = None,
                start: str | None = None, end: str | None = None, as_of: str | None = None,
                rowids: Sequence[int] | None = None) -> Callable[[np.ndarray], np.ndarray]:
        """The filters of :func:`kenning.store.search._filters`, as a vids → bool mask function."""
        kind_codes = None if kinds is None else [self.kinds[k] for k in kinds if k in self.kinds]
        spk_codes = None if not speakers else [self.speakers[s.casefold()] for s in speakers
                                               if s.casefold() in self.speakers]
        allowed = None if rowids is None else np.asarray(sorted(set(int(r) for r in rowids)), dtype=np.int64)
        t_as_of = seconds_of(as_of) if as_of else None
        t0 = seconds_of(start) if start else None
        t1 = seconds_of(end) if end else None
        d0 = day_of(start) if start else None
        d1 = day_of(end) if end else None
        size = len(self.rowid)

        def conds(sel) -> np.ndarray:
            """The filters on the documents at ``sel`` (vids, or ``slice(None)``: every vid in order)."""
            mask = self.rowid[sel] >= 0
            if kind_codes is not None:
                mask &= np.isin(self.kind[sel], kind_codes)
            if spk_codes is not None:
                mask &= np.isin(self.speaker[sel], spk_codes)
            if t_as_of is not None:
                said = self.said[sel]
                mask &= (said <= t_as_of) & (said != _NONE_S)
            if t0 is not None and t1 is not None:
                said = self.said[sel]
                in_said = (said >= t0) & (said < t1)
                es, ee = self.ev_start[sel], self.ev_end[sel]
                told = (es != _NONE_D) & (es < d1) & (ee >= d0)  # type: ignore[operator]
                mask &= in_said | told
            elif t0 is not None:
                mask &= self.said[sel] >= t0
            elif t1 is not None:
                said = self.said[sel]
                mask &= (said < t1) & (said != _NONE_S)
            if allowed is not None:
                mask &= np.isin(self.rowid[sel], allowed)
            return mask

        def fn(vids: np.ndarray) -> np.ndarray:
            inside = vids < size
            v = np.where(inside, vids, 0)
            if len(vids) * 4 > size:  # most vids (the mirror's every row): the filters in vid order, one gather (R57)
                return inside & conds(slice(None))[v]
            return inside & conds(v)

        if spk_codes is not None:
            # the speaker filter names its rows: the index tests those only, not every vid (R57)
            fn.rows = self.speaker_vids(spk_codes)  # type: ignore[attr-defined]
            fn.rows_key = ("speakers", self.key, tuple(sorted(set(spk_codes))))  # type: ignore[attr-defined]
        elif t0 is not None and t1 is not None:
            rows = self.time_vids(t0, t1)  # the time lane: said in the range or telling of a time
            if rows is not None:
                fn.rows, fn.rows_key = rows, None  # type: ignore[attr-defined]
        return fn


def _doc_meta_columns(conn, space: str) -> list:
    """The columns of :func:`search_sql.vector_doc_meta` (vids and doc_rowids as int64 arrays; kind, speaker, said-at,
    event start / end as lists, a missing value as '' or None): from the joined read, or — when a value holds the
    separator — row by row."""
    n, vids_s, rowids_s, *texts = search_sql.vector_doc_meta_joined(conn, space)
    if n:
        cols = [t.split("\x1f") for t in texts]
        ints = [np.fromstring(x, dtype=np.int64, sep=",") for x in (vids_s, rowids_s)]  # text mode: not deprecated
        if all(len(c) == n for c in (*ints, *cols)):
            return [*ints, *cols]
    rows = list(search_sql.vector_doc_meta(conn, space))
    return [np.asarray([r[0] for r in rows], dtype=np.int64), np.asarray([r[1] for r in rows], dtype=np.int64),
            *[[r[i] for r in rows] for i in range(2, 7)]]


def _rowwise_doc_meta(conn, space: str, key: tuple) -> DocMeta:
    """DocMeta.load as it was before R60 (row by row, the rows sorted by vid): the reference the column-wise load
    is tested and benchmarked against (like ``llm.index._rowwise_mirror``)."""
    vids, rowids, kinds_l, speakers_l, said_l, es_l, ee_l = [], [], [], [], [], [], []
    for vid, rowid, kind, speaker, said, es, ee in search_sql.vector_doc_meta(conn, space, by_vid=True):
        vids.append(vid)
        rowids.append(rowid)
        kinds_l.append(kind)
        speakers_l.append((speaker or "").casefold())
        said_l.append(said)
        es_l.append(es)
        ee_l.append(ee)
    size = (max(vids) + 1) if vids else 1
    v = np.asarray(vids, dtype=np.int64)
    kinds = {k: i for i, k in enumerate(sorted(set(kinds_l)))}
    speakers = {s: i for i, s in enumerate(sorted(set(speakers_l)))}
    m = DocMeta(key, np.full(size, -1, np.int64), np.full(size, -1, np.int8), np.full(size, -1, np.int32),
                   np.full(size, _NONE_S, np.int64), np.full(size, _NONE_D, np.int32),
                   np.full(size, _NONE_D, np.int32), kinds, speakers)
    if vids:
        m.rowid[v] = rowids
        m.kind[v] = [kinds[k] for k in kinds_l]
        m.speaker[v] = [speakers[s] for s in speakers_l]
        m.said[v] = _seconds(said_l)
        m.ev_start[v] = _days(es_l)
        m.ev_end[v] = _days(ee_l)
    return m


TIME_ROWS_MAX_SHARE = 0.25  # a time filter names its rows when they are at most this share of the vids
_META: dict[tuple, DocMeta] = {}
_META_LOCK = threading.Lock()


class SearchVectors:
    """Query-side access to the search space: the query embedder and filtered KNN."""

    def __init__(self, conn, config: Config):
        self.conn, self.config = conn, config
        self.space = config.retrieval.vector.space
        self.index = VectorIndex(conn, config)
        self._table: dict | None | bool = False
        self._items = 0

    def table(self) -> dict | None:
        if self._table is False:
            t = vsql.active_table(self.conn)
            self._items = vsql.count_items(self.conn, self.space) if t is not None else 0
            self._table = t if self._items > 0 else None
        return self._table or None

    def quantized(self) -> bool:
        """Whether this space's searches are 1-bit scans (more than ``vector_index.quantize_above`` vectors; the
        items :meth:`table` counted, once per Searcher)."""
        above = self.config.embeddings.vector_index.quantize_above
        return bool(above) and self.table() is not None and self._items > above

    def embedder(self) -> Embedder | None:
        t = self.table()
        return self.index.embedder_for(t["model_id"], t["dimension"]) if t else None

    def meta(self) -> DocMeta:
        t = vsql.active_table(self.conn)
        key = (self.conn.filename or f"memory:{id(self.conn)}", search_sql.version(self.conn),
               t["version"] if t else None, self.space)
        with _META_LOCK:
            m = _META.get(key)
        if m is None:
            m = DocMeta.load(self.conn, self.space, key)
            with _META_LOCK:
                for old in [k for k in _META if k[0] == key[0]]:
                    del _META[old]
                _META[key] = m
        return m

    def knn_start(self, qvec: np.ndarray, k: int, *, kinds: Sequence[str] | None = None,
                  speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                  as_of: str | None = None) -> Callable[[], list[tuple[int, float]]] | None:
        """:meth:`knn`, started: a quantized mirror scan runs in the search worker thread (R44) while the caller
        goes on; the returned function waits for it. None when the search is not a quantized mirror scan (call
        :meth:`knn`)."""
        t = self.table()
        if t is None or not self.quantized():
            return None
        allow = self._allow(kinds, speakers, start, end, as_of)
        run = self.index.prepare_search(qvec, k, space=self.space, model_id=t["model_id"], allow=allow)
        if run is None:
            return None
        fut = _worker().submit(run)
        return lambda: [(int(h.item_id), h.score) for h in fut.result()]

    def knn(self, qvec: np.ndarray, k: int, *, kinds: Sequence[str] | None = None,
            speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
            as_of: str | None = None, rowids: Sequence[int] | None = None,
            exact: bool = False) -> list[tuple[int, float]]:
        """(doc_rowid, cosine) nearest first, filtered inside the search."""
        t = self.table()
        if t is None:
            return []
        hits = self.index.search(qvec, k, space=self.space, model_id=t["model_id"],
                                 allow=self._allow(kinds, speakers, start, end, as_of, rowids), exact=exact,
                                 oversample=self.config.retrieval.vector.sqlite_oversample)
        return [(int(h.item_id), h.score) for h in hits]

    def _allow(self, kinds: Sequence[str] | None, speakers: Sequence[str] | None, start: str | None,
               end: str | None, as_of: str | None, rowids: Sequence[int] | None = None):
        """The metadata filter of a search (:meth:`DocMeta.mask_fn`), or None when nothing is filtered."""
        if kinds is None and not (speakers or start or end or as_of) and rowids is None:
            return None
        return self.meta().mask_fn(kinds=kinds, speakers=speakers, start=start, end=end, as_of=as_of, rowids=rowids)


_WORKER: list = []


def _worker():
    """The one worker thread of the vector lanes' scans (R44), made on first use."""
    with _META_LOCK:
        if not _WORKER:
            from concurrent.futures import ThreadPoolExecutor

            _WORKER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-vectors"))
        return _WORKER[0]


def drop_meta() -> None:
    with _META_LOCK:
        _META.clear()
