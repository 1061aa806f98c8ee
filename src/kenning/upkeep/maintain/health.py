"""`kenning health` (seed 003 §42A.6 GraphDensityMetrics, §41 KnowledgeDebtScore) with the last maintain run's
hygiene receipt. Read-only: inspecting never changes the vault.

KnowledgeDebtScore (0 = no debt, 100 = all debt; G40): a weighted sum of four shares, each in 0..1 —
unresolved suggestions (suggested nodes + pending review items, per active node), active nodes with confidence
below 0.4 (per active node), open contradictions (×10 per active node, capped at 1), and 1 − the 7-day precision
of automatic knowledge (a person's confirmations vs rejections and corrections; no verdicts → 0)."""

from __future__ import annotations

import datetime as dt
import statistics
from typing import Any

import apsw

from kenning.config import Config
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.dag import HYGIENE_FIELDS, last_receipt


def graph_density(conn: apsw.Connection, config: Config) -> dict[str, Any]:
    h = config.maintain.health
    c = msql.density_counts(conn)
    degrees = msql.node_degrees(conn)
    total_nodes = c.get("total_nodes", 0) or 0
    active_ids = {r["id"] for r in msql.active_names(conn)}
    degs = [degrees.get(i, 0) for i in active_ids]
    total_edges = c.get("total_edges", 0) or 0
    hubs = sorted(((d, i) for i, d in degrees.items() if i in active_ids), key=lambda x: (-x[0], x[1]))[:h.top_hubs]
    names = msql.node_names(conn, [i for _, i in hubs])
    bundles = msql.has_table(conn, msql.BUNDLES)
    mentions = (msql.scalar_or_none(conn, "SELECT count(*) FROM mention_observations_derived")
                if msql.has_table(conn, "mention_observations_derived") else None)

    def ratio(n: int | None, d: int | None) -> float | None:
        return round(n / d, 6) if n is not None and d else (0.0 if n is not None and d == 0 else None)

    return {
        "total_nodes": total_nodes,
        "total_edges": total_edges,
        "promoted_edges": c.get("promoted_edges", 0),
        "total_mentions": mentions if mentions is not None else c.get("provenance_mentions", 0),
        "mean_degree": round(statistics.fmean(degs), 6) if degs else 0.0,
        "median_degree": float(statistics.median(degs)) if degs else 0.0,
        "isolated_node_count": sum(1 for d in degs if d == 0),
        "hub_count": sum(1 for d in degs if d > h.hub_degree),
        "weak_edge_ratio": ratio(c.get("weak_edges", 0), total_edges),
        "generic_edge_ratio": ratio(c.get("generic_edges", 0), total_edges),
        "median_support": _bundle_median(conn) if bundles else None,
        "suppression_rate": msql.bundle_state_share(conn, ("suppressed",)) if bundles else None,
        "promotion_rate": msql.bundle_state_share(conn, ("reinforced_relation", "user_verified")) if bundles else None,
        "llm_resolution_rate": None,  # Tier 4 belongs to the back-link pipeline; none in this vault yet
        "candidates_per_observation": None,
        "low_utility_edge_count": c.get("low_utility_edges", 0),
        "top_hubs": [{"node_id": i, "name": names.get(i, {}).get("canonical_name"),
                      "node_kind": names.get(i, {}).get("node_kind"), "degree": d} for d, i in hubs],
    }


def _bundle_median(conn: apsw.Connection) -> float | None:
    vals = msql.bundle_support_counts(conn)
    return float(statistics.median(vals)) if vals else None


def knowledge_debt(conn: apsw.Connection, config: Config, now: str) -> dict[str, Any]:
    h = config.maintain.health
    since = format_utc(parse_utc(now) - dt.timedelta(days=h.precision_window_days))
    d = msql.debt_inputs(conn, since, h.low_confidence_below)
    active = max(1, d["active_nodes"])
    verdicts = d["confirmed_7d"] + d["wrong_7d"]
    precision = d["confirmed_7d"] / verdicts if verdicts else None
    shares = {
        "unresolved": min(1.0, (d["suggested"] + d["queued"]) / active),
        "low_confidence": min(1.0, d["low_confidence"] / active),
        "contradictions": min(1.0, 10 * d["contradictions"] / active),
        "imprecision": 0.0 if precision is None else 1 - precision,
    }
    w = h.debt_weights
    total_w = sum(w.values()) or 1.0
    score = 100 * sum(w[k] * shares[k] for k in shares) / total_w
    return {"knowledge_debt_score": round(score, 2),
            "components": {k: round(v, 6) for k, v in shares.items()}, "weights": dict(w),
            "inputs": {**d, "precision_7d": None if precision is None else round(precision, 6)}}


def health(conn: apsw.Connection, config: Config, *, now: str) -> dict[str, Any]:
    debt = knowledge_debt(conn, config, now)
    receipt = last_receipt(conn)
    return {
        "now": now,
        "knowledge_debt_score": debt["knowledge_debt_score"],
        "knowledge_debt": debt,
        "graph_density": graph_density(conn, config),
        "review_queues": msql.queue_counts(conn),
        "hygiene_receipt": {f: receipt[f] for f in HYGIENE_FIELDS} if receipt else None,
        "last_maintain": ({k: receipt[k] for k in ("generation", "now", "status", "changes")}
                          if receipt else None),
    }
