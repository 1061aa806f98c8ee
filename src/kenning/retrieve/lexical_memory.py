"""The forward index held in memory by token (decision C6): on a vault whose FTS table keeps no positions (C1), a
lane that ranks every match of its words (a small vault, R19) takes each word's documents and column-weighted hits
from here — what FTS5's bm25() computed from its position lists before migration 0120, from the same counts as
the pool's (R51) — instead of an FTS5 walk and a read of every match's forward row."""

from __future__ import annotations

from typing import Sequence

import apsw
import numpy as np

from kenning.store import search as search_sql


class MemoryIndex:
    """Every forward-index record of the vault, ordered by token id: per record its document (position in
    :attr:`rowids`) and its hits weighted by column with ``weights`` (summed column by column, as the pool sums
    them, so the floats are the pool's). Documents whose row is NULL (a count past a byte) are measured from their
    columns per query (:attr:`odd`)."""

    def __init__(self, conn: apsw.Connection, weights: Sequence[float]):
        ids_l, len_l, ntok, buf, code_buf, esc_buf = search_sql.doc_term_rows(conn, None)
        self.n_rows = len(ids_l)
        self.odd = [r for r, n in zip(ids_l, ntok) if n is None]
        keep = [i for i, n in enumerate(ntok) if n is not None]
        self.rowids = np.asarray([ids_l[i] for i in keep], dtype=np.int64)
        self.length = np.asarray([len_l[i] for i in keep], dtype=np.float64)
        per_doc = np.asarray([ntok[i] for i in keep], dtype=np.int64)
        tids = search_sql.decode_ids(buf, per_doc)
        codes = np.frombuffer(code_buf, dtype=np.uint8)
        escaped = np.frombuffer(esc_buf, dtype=np.uint8).reshape(-1, 4).astype(np.int64)
        rank = (np.cumsum(codes == 0) - 1) if len(escaped) else np.zeros(len(codes), dtype=np.int64)
        cnt = search_sql.decode_counts(codes, escaped, rank).astype(np.float64)
        w = np.asarray(weights, dtype=np.float64)
        val = ((cnt[:, 0] * w[0] + cnt[:, 1] * w[1]) + cnt[:, 2] * w[2]) + cnt[:, 3] * w[3]
        doc = np.repeat(np.arange(len(per_doc), dtype=np.int32), per_doc)
        order = np.argsort(tids, kind="stable")
        self.doc, self.val = doc[order], val[order]
        self.tokens, starts = np.unique(tids[order], return_index=True)
        self.ptr = np.append(starts, len(order)).astype(np.int64)
        self.nbytes = sum(a.nbytes for a in (self.rowids, self.length, self.doc, self.val, self.tokens, self.ptr))

    def postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(document positions, weighted hits) of one token id; empty when no document holds it."""
        k = int(np.searchsorted(self.tokens, tid))
        if tid < 0 or k >= len(self.tokens) or self.tokens[k] != tid:
            return self.doc[:0], self.val[:0]
        return self.doc[self.ptr[k]:self.ptr[k + 1]], self.val[self.ptr[k]:self.ptr[k + 1]]

    def arrays(self, tids: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """(rowids ascending, hits (m, len(tids)), lengths, each word's matching documents) over the documents
        where one of the words has a hit in a weighted column — the documents the FTS5 query of the words over
        the weighted columns matches."""
        lists = [self.postings(t) for t in tids]
        held = [d[v > 0] for d, v in lists]
        docs = np.unique(np.concatenate(held)) if held else np.empty(0, np.int32)
        hits = np.zeros((len(docs), len(tids)), dtype=np.float64)
        for j, (d, v) in enumerate(lists):
            if len(d):
                pos = np.searchsorted(docs, d)
                ok = (pos < len(docs)) & (docs[np.minimum(pos, len(docs) - 1)] == d)
                hits[pos[ok], j] = v[ok]
        return self.rowids[docs], hits, self.length[docs], [int(len(h)) for h in held]
