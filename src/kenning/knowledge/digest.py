"""Seed 003 §42A.4.6 weekly knowledge digest (WeeklyDigestContent / RenderInput), assembled from the node store:
new entities (nodes created in the window), confidence changes (α/(α+β) before the window's first evidence update
and now), corrections applied (commits of a person's corrections), approaching deadlines (open obligations due
within inspect.digest.deadline_days) and the stale count. Kenning has no work contexts: one section for the
whole vault (D48–D49). Reads only."""

from __future__ import annotations

import datetime as dt
from typing import Any

import hashlib

import apsw
import orjson

from kenning.config import Config
from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import format_utc, normalize_to_utc, parse_utc
from kenning.store import compiled as csql
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq

ENTITY_KINDS = ("world_entity", "domain_concept", "goal", "obligation", "procedure", "standing_procedure",
                "preference", "memory_directive", "application")


class DigestError(ValueError):
    pass


def _mean(a: float, b: float) -> float:
    return a / (a + b) if a + b > 0 else 0.0


def confidence_changes(conn: apsw.Connection, start: str, end: str, *, skip: set[str],
                       limit: int) -> list[dict[str, Any]]:
    first_old: dict[str, dict[str, float]] = {}
    for m in csql.evidence_updates_between(conn, start, end):
        if m["target_id"] in skip:
            continue
        old = first_old.setdefault(m["target_id"], {})
        for op in orjson.loads(m["reverse_patch"]):
            path = op.get("path", "").lstrip("/")
            if path in ("alpha", "beta") and path not in old:
                old[path] = float(op["value"])
    out = []
    for nid, old in first_old.items():
        if not old:
            continue
        n = ksql.get_node(conn, nid)
        if n is None or not n["is_active"]:
            continue
        before = _mean(old.get("alpha", n["alpha"]), old.get("beta", n["beta"]))
        after = _mean(n["alpha"], n["beta"])
        if round(before, 4) != round(after, 4):
            out.append({"node_id": nid, "canonical_name": n["canonical_name"], "old_confidence": round(before, 4),
                        "new_confidence": round(after, 4)})
    out.sort(key=lambda c: (-abs(c["new_confidence"] - c["old_confidence"]), c["canonical_name"], c["node_id"]))
    return out[:limit]


def approaching_deadlines(conn: apsw.Connection, config: Config, now: str, *, limit: int) -> list[dict[str, Any]]:
    days = config.inspect.digest.deadline_days
    end = format_utc(parse_utc(now) + dt.timedelta(days=days))
    open_st = set(config.knowledge.delivery.obligations.open_statuses)
    out = []
    # dates carry their own offsets: read a day either side as text, then compare instants
    lo = format_utc(parse_utc(now) - dt.timedelta(days=1))[:10]
    hi = format_utc(parse_utc(end) + dt.timedelta(days=1))[:10] + "\uffff"
    for n in kq.obligations_due(conn, lo, hi, limit=limit * 3):
        due = normalize_to_utc(n.get("due"))
        status = (n.get("payload") or {}).get("status")
        if due is None or not (now <= due <= end) or (status and status not in open_st):
            continue
        out.append({"node_id": n["id"], "canonical_name": n["canonical_name"],
                    "deadline_hint": f"due {due[:10]}" + (f", {status}" if status else "")})
    return out[:limit]


def weekly_digest(conn: apsw.Connection, config: Config, *, now: str, since: str | None = None) -> dict[str, Any]:
    """WeeklyDigestRenderInput for the window [since, now] (default: inspect.digest.window_days back)."""
    d = config.inspect.digest
    if since is None:
        start = format_utc(parse_utc(now) - dt.timedelta(days=d.window_days))
    else:
        start = normalize_to_utc(since)
        if start is None:
            raise DigestError(f"--since {since!r} is not a date; use ISO-8601 like 2026-03-01")
    if start >= now:
        raise DigestError(f"--since {since} is not before now ({now[:10]})")
    new = csql.nodes_created_between(conn, start, now, kinds=ENTITY_KINDS, limit=d.max_entities)
    section = {
        "work_context_id": "vault", "work_context_name": "All knowledge",
        "new_entities": [{"node_id": n["id"], "canonical_name": n["canonical_name"], "node_kind": n["node_kind"],
                          "created_at": n["created_at"]} for n in new],
        "confidence_changes": confidence_changes(conn, start, now, skip={n["id"] for n in new},
                                                 limit=d.max_entities),
        "corrections_applied": csql.corrections_between(conn, start, now),
        "approaching_deadlines": approaching_deadlines(conn, config, now, limit=d.max_entities),
        "stale_knowledge_count": csql.stale_count(conn),
    }
    content = {"week_start": start, "week_end": now, "work_context_sections": [section], "schema_version": 1}
    digest_id = "digest-" + hashlib.sha256(canonicalize(content).encode("utf-8")).hexdigest()[:16]
    return {"digest_id": digest_id, "generated_at": now, "visibility_class": "local_only",
            "content": {"digest_id": digest_id, **content}, "schema_version": 1}
