"""Phase 7 — HTNBeliefEmbedder (seed 000 §4.9): canonical texts → vectors, through the model layer.

The vectors come from ``kenning.llm.embed.get_embedder`` (the vault's active embedding model; MiniLM, an
OpenAI-compatible endpoint or the hashing embedder) via the ``VectorIndex``, which also indexes the nodes
(space ``self_beliefs.embeddings.space``, kind = polarity) and gives the calibrated match / no_match / tension
thresholds of that model (S15). With embeddings disabled, or when the model fails and
``fallback_to_text_similarity`` is on, the resolver and the conflict engine use the Levenshtein ratio instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from kenning.config import Config
from kenning.config.models import Thresholds
from kenning.llm.errors import ModelLayerError
from kenning.llm.index import Hit, VectorIndex


def levenshtein_ratio(a: str, b: str) -> float:
    """1 − distance / max(len): 1.0 for equal strings (§5.2 ``text_similarity_method: levenshtein_ratio``)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return 1.0 - prev[-1] / max(len(a), len(b))


PREFETCH_MIN = 3   # a matrix-matrix product beats separate passes from three queries on (benchmarks/RESULTS.md)


@dataclass
class Similar:
    belief_id: str
    score: float


class HTNBeliefEmbedder:
    def __init__(self, conn, config: Config, clock=None, warn=None):
        self.conn, self.config = conn, config
        self.cfg = config.self_beliefs.embeddings
        self.space = self.cfg.space
        self.warn = warn
        self.enabled = self.cfg.enabled
        self.index: VectorIndex | None = VectorIndex(conn, config, clock=clock) if self.enabled else None
        self._embedder = None
        self.model_id: str | None = None
        self.failed: str | None = None
        # One pass over the index serves both polarities of a vector (the resolver asks for one, the conflict
        # engine for the other): vector bytes → (len(_created) then, {polarity: top hits}). Nodes this embedder
        # indexes afterwards are scored directly, so the answers stay exact.
        r = config.self_beliefs.resolution
        self._k = max(r.top_k, r.tension.top_k_conflict_check) + 8
        self._by_kind: dict[bytes, tuple[int, dict[str, list[Similar]]]] = {}
        self._created: list[tuple[str, str, np.ndarray]] = []
        self._version: str | None = None      # the vector table's version token the cache was made from

    def _active(self):
        assert self.index is not None
        if self._embedder is None:
            table = self.index.ensure_active()
            self._embedder = self.index.embedder_for(table["model_id"], table["dimension"])
            self.model_id = table["model_id"]
        return self._embedder

    @property
    def uses_vectors(self) -> bool:
        return self.enabled and self.failed is None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray | None:
        """(n, D) float32 rows, or None when the text-similarity fallback is in use."""
        if not self.uses_vectors or not texts:
            return None
        try:
            return self._active().embed(list(texts))
        except ModelLayerError as e:
            if not self.cfg.fallback_to_text_similarity:
                raise
            self.failed = str(e)
            if self.warn:
                self.warn("SELF_EMBEDDINGS_FAILED", f"embeddings failed ({e}); resolving by text similarity instead")
            return None

    def embed(self, text: str) -> np.ndarray | None:
        v = self.embed_batch([text])
        return None if v is None else v[0]

    def thresholds(self) -> Thresholds:
        if self.uses_vectors:
            assert self.index is not None
            self._active()
            return self.index.thresholds()
        t = self.cfg.text_similarity_thresholds
        return Thresholds(match=t.match, no_match=t.no_match, tension=t.tension)

    def similar(self, text: str, vector: np.ndarray | None, k: int, polarity: str | None,
                exclude: Sequence[str] = ()) -> list[Similar]:
        """The ``k`` nodes most similar to ``text`` (optionally of one polarity), best first."""
        if vector is not None and self.uses_vectors:
            assert self.index is not None
            if polarity is None or k + len(exclude) > self._k:
                hits: list[Hit] = self.index.search(vector, k + len(exclude), space=self.space,
                                                    kinds=[polarity] if polarity else None, model_id=self.model_id)
                return [Similar(h.item_id, h.score) for h in hits if h.item_id not in exclude][:k]
            key = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
            cached = self._by_kind.get(key)
            if cached is None:
                res = self.index.search_by_kind(vector, self._k, space=self.space, kinds=["affirm", "deny"],
                                                model_id=self.model_id)
                cached = (len(self._created), {p: [Similar(h.item_id, h.score) for h in hs] for p, hs in res.items()})
                if len(self._by_kind) >= 256:
                    self._by_kind.clear()
                if not self._by_kind:
                    self._version = self._table_version()
                self._by_kind[key] = cached
            since, per = cached
            cands = list(per.get(polarity, []))
            known = {c.belief_id for c in cands}
            for bid, pol, vec in self._created[since:]:
                if pol == polarity and bid not in known:
                    cands.append(Similar(bid, float(np.dot(vector, vec))))
            cands = [c for c in cands if c.belief_id not in exclude]
            cands.sort(key=lambda c: -c.score)
            return cands[:k]
        from kenning.store import selfbeliefs as sql

        scored = [Similar(bid, levenshtein_ratio(text, t)) for bid, t in
                  sql.nodes_for_text_scan(self.conn, polarity, self.cfg.linear_scan_max_nodes) if bid not in exclude]
        scored.sort(key=lambda s: (-s.score, s.belief_id))
        return scored[:k]

    def prefetch(self, vectors: np.ndarray | None) -> None:
        """Search for every atom vector of an experience at once (one pass over the index instead of one per atom)
        when there are at least ``PREFETCH_MIN`` new ones; ``similar`` then answers from the cache, exactly."""
        if vectors is None or not self.uses_vectors or self.index is None:
            return
        keys, todo = set(), []
        for v in vectors:
            key = np.ascontiguousarray(v, dtype=np.float32).tobytes()
            if key not in self._by_kind and key not in keys:
                keys.add(key)
                todo.append((key, v))
        if len(todo) < PREFETCH_MIN:
            return
        res = self.index.search_by_kind_many(np.stack([v for _, v in todo]), self._k, space=self.space,
                                             kinds=["affirm", "deny"], model_id=self.model_id)
        if len(self._by_kind) + len(todo) > 256:
            self._by_kind.clear()
        if not self._by_kind:
            self._version = self._table_version()
        for (key, _), r in zip(todo, res):
            self._by_kind[key] = (len(self._created), {p: [Similar(h.item_id, h.score) for h in hs]
                                                       for p, hs in r.items()})

    def index_node(self, belief_id: str, canonical: str, polarity: str, vector: np.ndarray | None = None) -> None:
        if self.uses_vectors and self.index is not None:
            fresh = self._by_kind and self._table_version() == self._version
            self.index.upsert(self.space, [(belief_id, canonical, polarity)],
                              vectors=[vector] if vector is not None else None, model_id=self.model_id)
            if vector is not None and fresh:
                # as the index stores it (int8: X3), so the cached answers equal a fresh search's
                self._created.append((belief_id, polarity, self.index.as_stored(vector)))
                self._version = self._table_version()      # our own write: the cache stays exact
            else:
                self.forget()

    def unindex(self, belief_ids: Sequence[str]) -> None:
        if self.enabled and self.index is not None:
            self.index.delete(self.space, list(belief_ids))
        self.forget()

    def forget(self) -> None:
        """Drop the cached searches."""
        self._by_kind.clear()
        self._created.clear()
        self._version = None

    def _table_version(self) -> str | None:
        from kenning.store import vectors as vsql

        t = vsql.active_table(self.conn)
        return t["version"] if t else None

    def check_fresh(self) -> None:
        """Forget the cached searches if anyone else has written to the index since they were made."""
        if self._by_kind and self._table_version() != self._version:
            self.forget()

    def cosine(self, a: np.ndarray | None, b: np.ndarray | None) -> float | None:
        if a is None or b is None:
            return None
        return float(np.dot(a, b))
