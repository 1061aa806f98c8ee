"""Phase 9 — StreamClassifier (seed 000 §4.13) and phase 13 — StreamService (§4.14).

Classifier: ``streams.mapping[belief_type][temporal_scope]``, else ``[belief_type]["default"]``, else
``streams.fallback``; the confidence says which row applied. Service: one assignment per node (created on the
node's first occurrence), promotion ``state → identity`` when temporal spread, context diversity and activation
all pass ``migration.promote_state_to_identity``, and the ratchet: an ``identity`` assignment is never demoted
automatically (invariant 5) — only :meth:`StreamService.demote` with one of ``ratchet.demotion_triggers`` does
it, and the table's trigger refuses any other change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from kenning.sources.jcs import canonicalize
from kenning.store import selfbeliefs as sql


@dataclass(frozen=True)
class StreamClassification:
    primary_stream: str
    secondary_stream: str | None
    confidence: float
    rule: str


class StreamClassifier:
    def __init__(self, cfg):
        self.cfg = cfg

    def classify(self, belief_type: str, temporal_scope: str) -> StreamClassification:
        rows = self.cfg.mapping.get(belief_type)
        conf = self.cfg.confidence
        if rows is not None and temporal_scope in rows:
            r = rows[temporal_scope]
            return StreamClassification(r.primary, r.secondary, conf.scope_row, f"{belief_type}.{temporal_scope}")
        if rows is not None and "default" in rows:
            r = rows["default"]
            return StreamClassification(r.primary, r.secondary, conf.type_default, f"{belief_type}.default")
        r = self.cfg.fallback
        return StreamClassification(r.primary, r.secondary, conf.fallback, "fallback")


class RatchetError(ValueError):
    pass


class StreamService:
    def __init__(self, conn, config, clock, ids):
        self.conn, self.clock, self.ids = conn, clock, ids
        self.mig = config.self_beliefs.migration

    def assign_initial(self, belief_id: str, c: StreamClassification) -> dict:
        now = self.clock.now()
        row = {"assignment_id": self.ids.make("stream_assignment", belief_id), "belief_id": belief_id,
               "primary_stream": c.primary_stream, "secondary_stream": c.secondary_stream,
               "confidence": c.confidence, "migrated_from": None, "migrated_at": None,
               "migration_history": canonicalize([]), "created_at": now, "updated_at": now}
        sql.insert_assignment(self.conn, row)
        return row

    def get_assignment(self, belief_id: str) -> dict | None:
        return sql.get_assignment(self.conn, belief_id)

    def check_migration(self, belief_id: str, assignment: dict, core: dict[str, Any], activation: float
                        ) -> dict | None:
        """Promote state → identity when spread, diversity and activation pass; returns the history entry."""
        p = self.mig.promote_state_to_identity
        if assignment["primary_stream"] != "state":
            return None
        if core.get("spread", 0) < p.min_spread or core.get("diversity", 0) < p.min_diversity \
                or activation < p.min_activation:
            return None
        return self._move(belief_id, assignment, "identity", {
            "reason": "promote_state_to_identity", "spread": round(core["spread"], 6),
            "diversity": round(core["diversity"], 6), "activation": round(activation, 6)})

    def demote(self, belief_id: str, to: str, trigger: str, note: str | None = None) -> dict:
        """Explicit demotion out of identity (ratchet): only for a configured trigger."""
        a = sql.get_assignment(self.conn, belief_id)
        if a is None:
            raise RatchetError(f"belief {belief_id} has no stream assignment")
        r = self.mig.ratchet
        if r.enabled and a["primary_stream"] == "identity" and trigger not in r.demotion_triggers:
            raise RatchetError(f"an identity assignment is only demoted by an explicit trigger "
                               f"({', '.join(r.demotion_triggers)}), not {trigger!r}")
        return self._move(belief_id, a, to, {"reason": "demotion", "trigger": trigger, "note": note})

    def _move(self, belief_id: str, a: dict, to: str, info: dict) -> dict:
        now = self.clock.now()
        history = orjson.loads(a["migration_history"] or "[]")
        entry = {"from": a["primary_stream"], "to": to, "at": now, **{k: v for k, v in info.items() if v is not None}}
        history.append(entry)
        sql.update_assignment(self.conn, belief_id, {
            "primary_stream": to, "migrated_from": a["primary_stream"], "migrated_at": now,
            "migration_history": canonicalize(history), "updated_at": now})
        return entry
