"""Entity consolidation (seed 001 §2B.7–2B.8): upsert by (type, key), role-aware names, counts, salience.

Choices (docs/decisions.md E23–E25): recency is measured to the newest message time in the vault (not the
wall clock); an existing entity keeps its ``canonical_name`` (stage 3 owns refinements, with history);
``aliases_json`` only grows; an entity whose mentions all disappeared stays, with zero counts.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson

from kenning.detect.keys import entity_key, entity_type_for
from kenning.detect.times import parse_stored_utc
from kenning.sources.jcs import canonicalize

SELF_TYPE, SELF_KEY, SELF_NAME = "PERSON", "__SELF__", "SELF"


@dataclass
class EntityAgg:
    entity_id: str
    entity_type: str
    entity_key: str
    mentions: int = 0
    user_mentions: int = 0
    conversations: set = field(default_factory=set)
    first_seen: str | None = None
    last_seen: str | None = None
    surfaces: Counter = field(default_factory=Counter)
    user_surfaces: Counter = field(default_factory=Counter)
    first_occ: dict = field(default_factory=dict)      # surface -> sort tuple of its first occurrence
    detectors: Counter = field(default_factory=Counter)
    links: list = field(default_factory=list)           # mention ids whose entity_id must be set

    def add(self, mention_id: str, surface: str | None, detector: str, role: str, conversation_id: str,
            created: str | None, order_index: int, message_id: str) -> None:
        self.mentions += 1
        if role == "user":
            self.user_mentions += 1
        self.conversations.add(conversation_id)
        if created is not None:
            if self.first_seen is None or created < self.first_seen:
                self.first_seen = created
            if self.last_seen is None or created > self.last_seen:
                self.last_seen = created
        self.detectors["LEXICON" if detector.startswith("LEXICON:") else detector] += 1
        if surface is not None:
            self.surfaces[surface] += 1
            if role == "user":
                self.user_surfaces[surface] += 1
            # §2B.7.3 first occurrence: (created_at_utc, conversation_id, order_index, message_id, mention_id, surface)
            occ = (created is None, created or "", conversation_id, order_index, message_id, mention_id, surface)
            if surface not in self.first_occ or occ < self.first_occ[surface]:
                self.first_occ[surface] = occ

    def name_2b(self) -> str | None:
        """§2B.7.3: most frequent surface > more user-role uses > first occurrence."""
        if not self.surfaces:
            return None
        return min(self.surfaces, key=lambda s: (-self.surfaces[s], -self.user_surfaces[s], self.first_occ[s]))


def _jcs_number(x: float) -> float | int:
    """The same JCS text (RFC 8785 writes 1.0 as 1), but canonicalize's fast path only takes non-integral floats,
    and these ratios are often exactly 0 or 1."""
    return int(x) if x.is_integer() else x


def recency_factor(last_seen: str | None, reference: str | None, halflife_days: float) -> float:
    if last_seen is None or reference is None:
        return 0.0
    days = max(0.0, (parse_stored_utc(reference) - parse_stored_utc(last_seen)) / dt.timedelta(days=1))
    return 0.5 ** (days / halflife_days)


def salience(agg_mentions: int, conversations: int, user_ratio: float, recency: float, cfg: Any) -> float:
    return round(agg_mentions * cfg.salience_weight_mentions + conversations * cfg.salience_weight_conversations
                 + user_ratio * cfg.salience_weight_user_ratio + recency * cfg.salience_weight_recency, 9)


def aggregate_mentions(mention_rows, ids, key_opts: dict[str, Any]) -> tuple[dict[str, EntityAgg], int]:
    """Group emitted mentions by entity (type, key). Returns (aggregates by entity_id, mentions needing a link)."""
    aggs: dict[str, EntityAgg] = {}
    key_cache: dict[tuple, tuple[str, str, str]] = {}
    relinks = 0
    for (mention_id, current_entity, hint, surface, detector, _conf, raw_json, role, conv, created, order_index,
         message_id) in mention_rows:
        ck = (hint, surface, raw_json if hint in ("PHONE", "IP_ADDRESS") else None)
        got = key_cache.get(ck)
        if got is None:
            etype = entity_type_for(hint)
            details = orjson.loads(raw_json).get("details") if raw_json and hint in ("PHONE", "IP_ADDRESS") else None
            key = entity_key(etype, surface or "", details, **key_opts)
            got = (etype, key, ids.make("entity", etype, key))
            key_cache[ck] = got
        etype, key, eid = got
        agg = aggs.get(eid)
        if agg is None:
            agg = aggs[eid] = EntityAgg(eid, etype, key)
        agg.add(mention_id, surface, detector, role, conv, created, order_index, message_id)
        if current_entity != eid:
            agg.links.append(mention_id)
            relinks += 1
    return aggs, relinks


def plan_upserts(aggs: dict[str, EntityAgg], existing: dict[str, dict], self_id: str, reference_time: str | None,
                 sal_cfg: Any) -> tuple[list[tuple], list[tuple], Counter]:
    """(insert rows, stat update rows, counts). Every existing entity gets fresh counts (zero if unmentioned)."""
    inserts, updates = [], []
    counts: Counter = Counter()
    for eid in sorted(set(aggs) | set(existing) | {self_id}):
        agg = aggs.get(eid)
        old = existing.get(eid)
        if agg is None:  # SELF, or an entity none of whose mentions remain
            agg = EntityAgg(eid, old["entity_type"], old["entity_key"]) if old else EntityAgg(eid, SELF_TYPE, SELF_KEY)
        aliases = set(agg.surfaces)
        if old is not None:
            aliases |= set(orjson.loads(old["aliases_json"]))
        ratio = agg.user_mentions / agg.mentions if agg.mentions else 0.0
        rec = recency_factor(agg.last_seen, reference_time, sal_cfg.salience_recency_halflife_days)
        sal = salience(agg.mentions, len(agg.conversations), ratio, rec, sal_cfg)
        stats = canonicalize({"user_mentions": agg.user_mentions, "user_mention_ratio": _jcs_number(round(ratio, 9)),
                              "recency_factor": _jcs_number(round(rec, 9)), "recency_reference_utc": reference_time,
                              "detectors": dict(sorted(agg.detectors.items())), "name_2b": agg.name_2b()})
        alias_json = canonicalize(sorted(aliases))
        if old is None:
            name = SELF_NAME if eid == self_id else (agg.name_2b() or agg.entity_key)
            inserts.append((eid, agg.entity_type, agg.entity_key, name, alias_json, "active", agg.first_seen,
                            agg.last_seen, agg.mentions, len(agg.conversations), sal, stats))
            counts["entities_created"] += 1
        else:
            new = (alias_json, agg.first_seen, agg.last_seen, agg.mentions, len(agg.conversations), sal, stats)
            cur = (old["aliases_json"], old["first_seen_at_utc"], old["last_seen_at_utc"], old["mention_count"],
                   old["conversation_count"], old["salience_score"], old["raw_stats_json"])
            if new != cur:
                updates.append((*new, eid))
                counts["entities_updated"] += 1
    return inserts, updates, counts


def self_entity_id(ids) -> str:
    """§2B.1 the reserved SELF entity: uuid5(["entity", "PERSON", "__SELF__"])."""
    return ids.make("entity", SELF_TYPE, SELF_KEY)


def group_links(aggs: dict[str, EntityAgg]) -> list[tuple[str, str]]:
    out = []
    for eid in sorted(aggs):
        out.extend((eid, mid) for mid in aggs[eid].links)
    return out


def by_type(aggs: dict[str, EntityAgg]) -> dict[str, int]:
    c: dict[str, int] = defaultdict(int)
    for a in aggs.values():
        c[a.entity_type] += 1
    return dict(sorted(c.items()))
