"""Phase 8 — BeliefResolver and BeliefMatchVerifier (seed 000 §4.10, §4.11).

For one canonical atom (text, hash, polarity, vector):

1. exact ``(canonical_hash, polarity)`` → ``match`` (the hash shortcut; a merged node leads to its survivor);
2. top_k (10) most similar nodes **of the same polarity** (S9: opposite-polarity pairs score higher than
   paraphrases, so polarity filters the candidates before any threshold);
3. best ≥ match threshold → ``match``; best < no_match → ``no_match``;
4. in the band [no_match, match) and with an LLM: the verifier may upgrade to ``match`` or downgrade to
   ``no_match`` when its confidence reaches ``verifier.min_confidence``;
5. otherwise ``uncertain`` (a new node plus a tentative link to the best candidate).

Thresholds are the active embedding model's (``embeddings.thresholds``, fitted by `kenning calibrate`), or the
text-similarity ones when the Levenshtein fallback is in use — never the seed's raw 0.90 / 0.75, which were
measured for text-embedding-3-small (S15).

Concurrency (``unique_canonical_hash_retry``): node creation is an INSERT guarded by UNIQUE(canonical_hash,
polarity); on a violation (another process created the node after this one resolved) it waits
``retry_delay_ms``, re-reads the node by its key and links the occurrence to it — up to ``max_retries`` times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import apsw
from pydantic import BaseModel, Field

from kenning.selfbelief.embedder import HTNBeliefEmbedder, Similar
from kenning.store import selfbeliefs as sql


class VerifierAnswer(BaseModel):
    """seed 000 §4.11: ``{is_same_belief, confidence, reasoning}``."""

    is_same_belief: bool
    confidence: float = Field(ge=0, le=1)
    reasoning: str


@dataclass
class BeliefMatchVerifier:
    llm: Any
    model: str | None = None

    def verify(self, text_a: str, text_b: str, *, message_id: str | None = None,
               item_key: str | None = None) -> tuple[VerifierAnswer | None, tuple[str, ...]]:
        res = self.llm.structured("verifier", {"belief_a": text_a, "belief_b": text_b}, VerifierAnswer,
                                  message_id=message_id, item_key=item_key,
                                  options={"model": self.model} if self.model else None)
        return (res.value if res.ok else None), tuple(res.call_ids)


@dataclass
class ResolutionResult:
    outcome: str                       # match | no_match | uncertain
    match_confidence: float
    matched_node_id: str | None
    candidate_ids: list[str]
    best: Similar | None = None
    band: list[Similar] = field(default_factory=list)
    signals: dict[str, Any] = field(default_factory=dict)


def follow_merges(conn, node: dict | None) -> dict | None:
    seen = set()
    while node is not None and node.get("merged_into_belief_id") and node["belief_id"] not in seen:
        seen.add(node["belief_id"])
        node = sql.nodes_by_ids(conn, [node["merged_into_belief_id"]]).get(node["merged_into_belief_id"])
    return node


class BeliefResolver:
    def __init__(self, conn, config, embedder: HTNBeliefEmbedder, verifier: BeliefMatchVerifier | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.conn, self.config, self.embedder, self.verifier = conn, config, embedder, verifier
        self.cfg = config.self_beliefs
        self.sleep = sleep
        self._thresholds = None

    @property
    def thresholds(self):
        if self._thresholds is None:
            self._thresholds = self.embedder.thresholds()
        return self._thresholds

    def resolve(self, canonical: str, canonical_hash: str, polarity: str, vector, *, message_id: str | None = None,
                item_key: str | None = None) -> ResolutionResult:
        exact = follow_merges(self.conn, sql.node_by_key(self.conn, canonical_hash, polarity))
        if exact is not None:
            return ResolutionResult("match", 1.0, exact["belief_id"], [exact["belief_id"]],
                                    signals={"method": "canonical_hash"})
        t = self.thresholds
        sims = self.embedder.similar(canonical, vector, self.cfg.resolution.top_k, polarity)
        ids = [s.belief_id for s in sims]
        sig: dict[str, Any] = {"method": "embedding" if (vector is not None and self.embedder.uses_vectors)
                               else "levenshtein_ratio",
                               "thresholds": {"match": t.match, "no_match": t.no_match},
                               "top": [[s.belief_id, round(s.score, 6)] for s in sims[:3]]}
        best = sims[0] if sims else None
        if best is None or best.score < t.no_match:
            return ResolutionResult("no_match", best.score if best else 0.0, None, ids, best, [], sig)
        if best.score >= t.match:
            return ResolutionResult("match", best.score, best.belief_id, ids, best, [], sig)
        band = [s for s in sims if t.no_match <= s.score < t.match]
        if self.verifier is not None and self.cfg.resolution.verifier.enabled:
            other = sql.nodes_by_ids(self.conn, [best.belief_id]).get(best.belief_id)
            answer, calls = self.verifier.verify(canonical, other["canonical_text"] if other else "",
                                                 message_id=message_id, item_key=item_key)
            sig["verifier"] = {"call_ids": list(calls)}
            if answer is not None:
                sig["verifier"].update(is_same_belief=answer.is_same_belief, confidence=answer.confidence,
                                       reasoning=answer.reasoning[:500])
                if answer.confidence >= self.cfg.resolution.verifier.min_confidence:
                    if answer.is_same_belief:
                        return ResolutionResult("match", best.score, best.belief_id, ids, best, band, sig)
                    return ResolutionResult("no_match", best.score, None, ids, best, band, sig)
        return ResolutionResult("uncertain", best.score, None, ids, best, band, sig)

    def create_node(self, row: dict) -> tuple[str, bool, int]:
        """Insert the node; on a unique violation re-read it (``unique_canonical_hash_retry``).
        Returns (belief_id, created, retries)."""
        c = self.cfg.concurrency
        for attempt in range(c.max_retries + 1):
            try:
                with self.conn:  # a savepoint: a failed INSERT leaves the surrounding transaction intact
                    sql.insert_node(self.conn, row)
                return row["belief_id"], True, attempt
            except apsw.ConstraintError:
                if attempt >= c.max_retries:
                    raise
                self.sleep(c.retry_delay_ms / 1000.0)
                found = follow_merges(self.conn, sql.node_by_key(self.conn, row["canonical_hash"], row["polarity"]))
                if found is not None:
                    return found["belief_id"], False, attempt + 1
        raise RuntimeError("unreachable")  # pragma: no cover
