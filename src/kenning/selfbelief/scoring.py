"""Phase 12 — ActivationService (seed 000 §4.16) and CoreScoreService (§4.17).

    activation = Σ source_weight × exp(−ln 2 × age_days / half_life[stream])
    support    = 1 − exp(−n_weighted / k_n)                       n_weighted = Σ source_weight × atom_confidence
    spread     = sigmoid((max_t − min_t − midpoint_days) / temperature)       (days)
    diversity  = sigmoid((n_contexts − midpoint_contexts) / temperature)      (distinct context_id)
    base       = support × spread × diversity
    penalty    = weight × conflicts_in_window / n_weighted
    core_score = max(0, base − penalty)         status: < 0.3 surface, < 0.6 developing, else core

Times are when each occurrence was *said* (its message's time; the row's created_at when the message has none),
and ages run to the run clock's now (S5). ``conflicts_in_window`` counts active conflict edges observed within
``recent_window_days`` before now.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from kenning.selfbelief.links import sigmoid
from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import parse_utc

LN2 = math.log(2.0)


def _days(a: str, b: str) -> float:
    return (parse_utc(b) - parse_utc(a)).total_seconds() / 86400.0


def activation(occurrences: Sequence[dict], half_life_days: float, now: str) -> float:
    total = 0.0
    for o in occurrences:
        age = max(0.0, _days(o["t"], now))
        total += o["source_weight"] * math.exp(-LN2 * age / half_life_days)
    return total


def core_parts(occurrences: Sequence[dict], conflicts_in_window: int, cfg) -> dict[str, Any]:
    """The §4.17 formula, every intermediate value included (stored in ``score_json``)."""
    n_weighted = sum(o["source_weight"] * o["atom_confidence"] for o in occurrences)
    times = [o["t"] for o in occurrences]
    spread_days = _days(min(times), max(times)) if times else 0.0
    n_contexts = len({o["context_id"] for o in occurrences})
    support = 1.0 - math.exp(-n_weighted / cfg.support.k_n)
    spread = sigmoid((spread_days - cfg.spread.midpoint_days) / cfg.spread.temperature)
    diversity = sigmoid((n_contexts - cfg.diversity.midpoint_contexts) / cfg.diversity.temperature)
    base = support * spread * diversity
    penalty = cfg.conflict_penalty.weight * (conflicts_in_window / n_weighted) if n_weighted > 0 else 0.0
    core = max(0.0, base - penalty) if n_weighted > 0 else 0.0
    return {"n_weighted": n_weighted, "spread_days": spread_days, "n_contexts": n_contexts, "support": support,
            "spread": spread, "diversity": diversity, "base": base, "conflicts_in_window": conflicts_in_window,
            "conflict_penalty": penalty, "core_score": min(1.0, core)}


def status_for(core: float, thresholds) -> str:
    if core >= thresholds.core:
        return "core"
    if core >= thresholds.developing:
        return "developing"
    return "surface"


class ScoringService:
    """Activation, core score and status of nodes from their live occurrences."""

    def __init__(self, conn, config, clock):
        self.conn, self.clock = conn, clock
        self.sb = config.self_beliefs

    def score(self, belief_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        from kenning.store import selfbeliefs as sql

        ids = list(dict.fromkeys(belief_ids))
        if not ids:
            return {}
        now = self.clock.now()
        occ = sql.live_occurrences(self.conn, ids)
        streams = sql.assignments_of(self.conn, ids)
        window_start = _shift(now, -self.sb.core_score.conflict_penalty.recent_window_days)
        in_window = sql.active_conflict_counts(self.conn, ids, since=window_start)
        active = sql.active_conflict_counts(self.conn, ids)
        out, rows = {}, []
        for bid in ids:
            items = [{"t": o["occurred_at"] or o["created_at"], "source_weight": o["source_weight"],
                      "atom_confidence": o["atom_confidence"], "context_id": o["context_id"]} for o in occ.get(bid, [])]
            stream = (streams.get(bid) or {}).get("primary_stream", "identity")
            hl = self.sb.activation.half_life_days.get(stream, self.sb.activation.half_life_days["identity"])
            act = activation(items, hl, now)
            parts = core_parts(items, in_window.get(bid, 0), self.sb.core_score)
            status = status_for(parts["core_score"], self.sb.core_score.status_thresholds)
            parts.update(activation=act, half_life_days=hl, stream=stream, occurrences=len(items), status=status)
            out[bid] = parts
            rows.append({"belief_id": bid, "activation": round(act, 12), "core_score": round(parts["core_score"], 12),
                         "status": status, "conflict_count": active.get(bid, 0),
                         "score_json": canonicalize({k: (round(v, 9) if isinstance(v, float) else v)
                                                     for k, v in parts.items()}),
                         "scored_at": now})
        sql.write_scores(self.conn, rows)
        return out


def _shift(ts: str, days: float) -> str:
    import datetime as dt

    from kenning.sources.timestamps import format_utc

    return format_utc(parse_utc(ts) + dt.timedelta(days=days))
