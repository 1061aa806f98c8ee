"""Phase 10 — TentativeLinkService (seed 000 §3.3, §4.12): uncertain identity between two nodes.

* IDs are normalized: ``from_belief_id < to_belief_id`` (string order; invariant 3, also a CHECK in SQL).
* ``confidence = sigmoid(a·support_both − b·support_one − c·age_days)`` with a = 1.2, b = 0.9, c = 0.06 and
  ``age_days`` the days since the link's last supporting evidence (S19).
* ``support_both``: uncertain matches involving both nodes; ``support_one``: definite matches to one side only.
* Auto-accept above 0.85, auto-reject below 0.15. ``accepted`` only marks the pair for merging; the merge is
  `kenning self merge` (invariant 4: no auto-merge).
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import parse_utc
from kenning.store import selfbeliefs as sql


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def days_between(a: str | None, b: str | None) -> float:
    if not a or not b:
        return 0.0
    return (parse_utc(b) - parse_utc(a)).total_seconds() / 86400.0


def link_confidence(support_both: int, support_one: int, age_days: float, a: float, b: float, c: float) -> float:
    return sigmoid(a * support_both - b * support_one - c * max(0.0, age_days))


def ordered(x: str, y: str) -> tuple[str, str]:
    return (x, y) if x < y else (y, x)


class TentativeLinkService:
    def __init__(self, conn, config, clock, ids, extractor_version: str):
        self.conn, self.clock, self.ids, self.version = conn, clock, ids, extractor_version
        self.cfg = config.self_beliefs.resolution.tentative_link

    def confidence_of(self, link: dict, now: str | None = None) -> float:
        c = self.cfg
        return link_confidence(link["support_both"], link["support_one"],
                               days_between(link["last_support_at"] or link["created_at"], now or self.clock.now()),
                               c.a, c.b, c.c)

    def create_or_update(self, node_a: str, node_b: str, signals: dict[str, Any]) -> dict:
        """An uncertain match between the two nodes: create the link, or add ``support_both`` to it."""
        lo, hi = ordered(node_a, node_b)
        now = self.clock.now()
        link = sql.get_link(self.conn, lo, hi)
        if link is None:
            link = {"link_id": self.ids.make("tentative_link", lo, hi), "from_belief_id": lo, "to_belief_id": hi,
                    "confidence": 0.0, "status": "pending", "support_both": 1, "support_one": 0,
                    "last_support_at": now, "signals": canonicalize({"history": [signals]}),
                    "extractor_version": self.version, "created_at": now, "updated_at": now,
                    "status_reason": None, "merged_at": None}
            link["confidence"] = self.confidence_of(link, now)
            sql.insert_link(self.conn, link)
            return self.check_auto_resolution(link)
        return self.update_evidence(link, "both", signals)

    def update_evidence(self, link: dict, support_type: str, signals: dict[str, Any] | None = None) -> dict:
        if link["status"] != "pending":
            return link
        now = self.clock.now()
        hist = orjson.loads(link["signals"] or "{}").get("history", [])
        if signals:
            hist = (hist + [signals])[-20:]
        link = {**link, "last_support_at": now, "updated_at": now, "signals": canonicalize({"history": hist})}
        if support_type == "both":
            link["support_both"] += 1
        else:
            link["support_one"] += 1
        link["confidence"] = self.confidence_of(link, now)
        sql.update_link(self.conn, link["link_id"], {k: link[k] for k in ("support_both", "support_one",
                                                                          "last_support_at", "updated_at", "signals",
                                                                          "confidence")})
        return self.check_auto_resolution(link)

    def definite_match(self, belief_id: str, signals: dict[str, Any]) -> list[dict]:
        """A definite match to ``belief_id``: ``support_one`` on each of its pending links."""
        return [self.update_evidence(link, "one", signals) for link in sql.links_of(self.conn, belief_id)]

    def check_auto_resolution(self, link: dict) -> dict:
        if link["status"] != "pending":
            return link
        c = self.cfg
        status = reason = None
        if link["confidence"] > c.auto_accept_threshold:
            status, reason = "accepted", "auto_accept"
        elif link["confidence"] < c.auto_reject_threshold:
            status, reason = "rejected", "auto_reject"
        if status:
            link = {**link, "status": status, "status_reason": reason, "updated_at": self.clock.now()}
            sql.update_link(self.conn, link["link_id"], {"status": status, "status_reason": reason,
                                                         "updated_at": link["updated_at"]})
        return link

    def refresh_all(self) -> dict[str, int]:
        """Age every pending link (confidence decays while no evidence arrives) and auto-resolve."""
        now = self.clock.now()
        counts = {"links_refreshed": 0, "links_auto_accepted": 0, "links_auto_rejected": 0}
        for link in sql.list_links(self.conn, ["pending"]):
            conf = self.confidence_of(link, now)
            if abs(conf - link["confidence"]) > 1e-12:
                sql.update_link(self.conn, link["link_id"], {"confidence": conf})
                counts["links_refreshed"] += 1
            after = self.check_auto_resolution({**link, "confidence": conf})
            if after["status"] == "accepted":
                counts["links_auto_accepted"] += 1
            elif after["status"] == "rejected":
                counts["links_auto_rejected"] += 1
        return counts

    def review(self, link_id: str, decision: str) -> dict:
        """`kenning self links --accept/--reject`: accepted = marked for merge, rejected = closed."""
        link = sql.get_link_by_id(self.conn, link_id)
        if link is None:
            raise LookupError(f"no single tentative link matches {link_id!r}")
        status = {"accept": "accepted", "reject": "rejected"}[decision]
        now = self.clock.now()
        sql.update_link(self.conn, link["link_id"], {"status": status, "status_reason": "user", "updated_at": now})
        return {**link, "status": status, "status_reason": "user", "updated_at": now}
