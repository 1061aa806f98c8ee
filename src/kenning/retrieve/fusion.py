"""Reciprocal rank fusion (DOC72 §42A.3): Σ w/(k + rank) over lanes, each capped, divided by the maximum.

Every source of evidence is a *lane*: a named, ranked list of candidate documents. Adding a signal later
(entity/alias matches, assertion-to-evidence expansion, belief hits) means producing one more
:class:`RankedList`; the fusion and the score breakdown need no change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence


@dataclass
class Candidate:
    key: Hashable                       # what is ranked: a doc_rowid for turns/messages
    score: float                        # the lane's own score (bm25, cosine, …), for display
    detail: dict[str, Any] = field(default_factory=dict)     # why the lane ranked it (terms, speaker, time, …)
    evidence: list[dict[str, Any]] = field(default_factory=list)  # steps leading to the key (assertion → turn)


@dataclass
class RankedList:
    lane: str
    items: list[Candidate]
    weight: float = 1.0
    note: str | None = None             # e.g. "speaker: Caroline", "time: 2023-05"


@dataclass
class Fused:
    key: Hashable
    score: float                        # normalised: the best hit is 1.0
    raw: float                          # Σ w/(k + rank) before normalisation
    lanes: dict[str, dict[str, Any]]    # lane → {rank, score, contribution, detail}
    evidence: list[dict[str, Any]]


def rrf(lists: Sequence[RankedList], k: int = 60, cap: int = 50) -> list[Fused]:
    """Fuse ranked lists. Ties break by the best single rank, then by key, so results are deterministic."""
    acc: dict[Hashable, Fused] = {}
    best_rank: dict[Hashable, int] = {}
    for rl in lists:
        if rl.weight == 0:
            continue
        seen: set = set()
        rank = 0
        for c in rl.items:
            if c.key in seen:
                continue
            seen.add(c.key)
            rank += 1
            if rank > cap:
                break
            contrib = rl.weight / (k + rank)
            f = acc.get(c.key)
            if f is None:
                f = acc[c.key] = Fused(c.key, 0.0, 0.0, {}, [])
            f.raw += contrib
            f.lanes[rl.lane] = {"rank": rank, "score": c.score, "contribution": contrib, **(
                {"detail": c.detail} if c.detail else {})}
            for e in c.evidence:
                if e not in f.evidence:
                    f.evidence.append(e)
            best_rank[c.key] = min(best_rank.get(c.key, rank), rank)
    if not acc:
        return []
    top = max(f.raw for f in acc.values())
    out = sorted(acc.values(), key=lambda f: (-f.raw, best_rank[f.key], str(f.key)))
    for f in out:
        f.score = f.raw / top
    return out
