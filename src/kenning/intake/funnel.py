"""The funnel (§20A.2 ASSESS): every unit → envelope → scoreImportance → resolveExtractionPolicy → one stored
IntakeDispatchDecision; shallow/deep/defer go to ``pending_extractions``, skips are audited with their reason
(never a silent skip). Source-agnostic: :func:`observe` takes any :class:`IntakeUnit` list; :func:`assess_chat`
feeds it the vault's conversations."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kenning.intake.budget import FIRST_WEEK_DAYS, DailyExtractionBudget, calibrating
from kenning.intake.envelope import IntakeObservationEnvelope, IntakeUnit, build_envelope, chat_units
from kenning.intake.features import FeatureRules, conversation_features
from kenning.intake.modes import IncognitoSet, incognito_conversations, path_incognito_basis
from kenning.intake.policy import (MemoryModeState, persistence_mode_for, queue_class_for,
                                   resolve_extraction_policy)
from kenning.intake.scoring import IntakeScoreFeatures, SurfaceWeightProfile, score_decision, score_importance
from kenning.store import intake as isql
from kenning.store import knowledge as ksql


def pending_id_for(idempotency_key: str) -> str:
    return "pe_" + hashlib.sha256(idempotency_key.encode()).hexdigest()[:32]


def extraction_id_for(*parts: Any) -> str:
    return "ex_" + hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:32]


@dataclass
class Funnel:
    """One intake run's state: rules, budget, the incognito set, the stage's clock time."""
    conn: Any
    config: Any
    now: str
    run_id: str
    model_configured: bool = False
    incognito: IncognitoSet = field(default_factory=IncognitoSet)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.rules = FeatureRules(self.config, isql.entity_aliases(self.conn))
        self.calibrating = calibrating(self.conn, self.config, self.now)
        self.budget = DailyExtractionBudget(self.conn, self.config, self.now,
                                            calibrating=calibrating(self.conn, self.config, self.now,
                                                                    FIRST_WEEK_DAYS))
        self.known = isql.known_dedup_keys(self.conn)

    def profile(self, surface: str) -> SurfaceWeightProfile:
        return SurfaceWeightProfile.from_config(self.config, surface, calibrating=self.calibrating)

    # ---- one observation -------------------------------------------------------------------------------------

    def dispatch(self, env: IntakeObservationEnvelope) -> dict[str, Any]:
        unit, mode = env.unit, env.memory_mode_snapshot
        profile = self.profile(env.surface)
        score = score_importance(env.features, profile)
        wanted = score_decision(score, profile)
        if unit.rule is not None:
            wanted = unit.rule[0]  # the source's own significance rule stands in for the score at step 6 (I90–I92)
        critical = unit.critical_class is not None
        critical_depth = "deep" if self.budget.critical_deep_ok() else "shallow"
        res = resolve_extraction_policy(mode=mode, event_class="critical" if critical else "normal",
                                        budget_ok=self.budget.deep_ok(env.surface), score_decision=wanted,
                                        focus_pressed=unit.focus, critical_depth=critical_depth)  # type: ignore[arg-type]
        decision, reasons = res.decision, [res.reason_code]
        if res.reason_code == "budget_deferred" and not self.model_configured:
            # No model: deep is the same rules as shallow, so waiting for a slot buys nothing (I6).
            decision = "shallow"
        if unit.rule is not None and res.reason_code in ("score_dispatch", "focus_override", "budget_deferred"):
            reasons.append(unit.rule[1])
        elif res.reason_code == "score_dispatch" and decision == "skip":
            reasons.append("below_shallow_threshold")
        if critical and res.allow:
            reasons.append(unit.critical_class)  # type: ignore[arg-type]
        incog = mode.mode == "incognito"
        row = {"observation_id": env.observation_id, "decision": decision,
               "queue_class": queue_class_for(decision, critical and res.allow),
               "reason_codes": reasons, "score": score,
               "persistence_mode": persistence_mode_for(decision, unit.unit_kind, incog),
               "created_at": self.now}
        isql.insert_observation(self.conn, env.row(self.run_id))
        isql.insert_decision(self.conn, row)
        self.known.add(env.dedup_key)
        self.counts[f"decision_{decision}"] += 1
        self.counts[f"reason_{res.reason_code}"] += 1
        if decision == "deep":
            self.budget.take_deep(critical=critical, surface=env.surface)
        if decision == "defer":
            self.budget.note_deferred()
        if decision == "skip":
            self.audit_skip(env, row)
        else:
            self.enqueue(env, decision, critical)
        return row

    def enqueue(self, env: IntakeObservationEnvelope, decision: str, critical: bool) -> None:
        q = self.config.intake.queue
        key = env.dedup_key
        added = isql.insert_pending(self.conn, {
            "pending_id": pending_id_for(key), "idempotency_key": key, "source_ref": env.source_ref,
            "from_version_id": None, "to_version_id": env.source_version_id, "queued_at": self.now,
            "updated_at": self.now, "priority": "critical" if critical else ("deferred" if decision == "defer"
                                                                           else "normal"),
            "retries": 0, "max_retries": q.max_retries, "max_age_hours": q.max_age_hours, "status": "queued",
            "error_code": None, "observation_id": env.observation_id,
            "depth": "shallow" if decision == "shallow" else "deep"})
        self.counts["queued"] += 1 if added else 0

    def audit_skip(self, env: IntakeObservationEnvelope, row: dict[str, Any]) -> None:
        """§38: a skip is audited with its reason, a fingerprint of its key terms and the entities it names — but
        an incognito skip keeps no fingerprint or names (nothing of its content is derived)."""
        incog = "incognito_mode" in row["reason_codes"]
        words = sorted(self.rules.words(env.unit.text))[:40] if not incog else []
        mentions = self.rules.hits.pop(env.source_ref, [])[:20] if not incog else []
        eid = extraction_id_for(env.observation_id, "skip")
        ksql.insert_audit(self.conn, {
            "extraction_id": eid, "surface": env.surface, "source_content_ref": env.source_ref,
            "extraction_prompt_version": self.config.intake.queue.rules_version,
            "significance_score": row["score"], "dispatch_decision": "skip",
            "skip_reason": ",".join(row["reason_codes"]), "error_code": None, "retry_count": 0,
            "skip_content_fingerprint": hashlib.sha256(" ".join(words).encode()).hexdigest()[:16] if words else None,
            "skip_entity_mentions": mentions, "items_extracted": 0, "items_promoted": 0,
            "items_filtered_by_write_gate": 0, "knowledge_commit_ids": [], "extracted_at": self.now})

    # ---- many ----------------------------------------------------------------------------------------------

    def observe(self, units: list[IntakeUnit], mode: MemoryModeState,
                features: list[IntakeScoreFeatures]) -> int:
        """Dispatch the units not seen before (same dedup key = same observation: a re-run adds nothing)."""
        n = 0
        for unit, feats in zip(units, features):
            env = build_envelope(unit, feats, mode, self.now)
            if env.dedup_key in self.known:
                self.counts["already_observed"] += 1
                continue
            self.dispatch(env)
            n += 1
        return n


def _features(funnel: Funnel, units: list[IntakeUnit], mode: MemoryModeState) -> list[IntakeScoreFeatures]:
    feats: list[IntakeScoreFeatures] = []
    seen: set[str] = set()
    for u in units:
        if mode.mode == "incognito":
            feats.append(IntakeScoreFeatures())  # nothing is computed from incognito content
            continue
        if u.unit_kind == "conversation":
            feats.append(conversation_features(feats))
            continue
        dup = u.unit_kind == "message" and isql.version_seen_elsewhere(funnel.conn, u.source_version_id or "",
                                                                       u.source_ref)
        feats.append(funnel.rules.features(u, seen_words=seen, duplicate=dup))
        seen |= funnel.rules.words(u.text)
    return feats


def _units(funnel: Funnel, conv: dict[str, Any]) -> list[IntakeUnit] | None:
    """The units of one conversation-like record by its source (I90–I92); None when its current version was
    observed already (the fast path of a re-run)."""
    from kenning.intake import sources
    from kenning.intake.envelope import dedup_key

    cid, kind = conv["conversation_id"], conv.get("source_kind")
    surface = {"mail": sources.MAIL_SURFACE, "calendar": sources.CALENDAR_SURFACE}.get(kind or "", "chat")
    if kind != "calendar" and dedup_key(surface, f"conversation:{cid}", conv["raw_sha256"]) in funnel.known:
        return None
    msgs = isql.message_units(funnel.conn, cid)
    if kind == "mail":
        return sources.mail_units(conv, msgs, funnel.config)
    if kind == "calendar":
        units = sources.calendar_units(conv, msgs, isql.part_metadata(funnel.conn, cid))
        return [u for u in units if dedup_key(u.surface, u.source_ref, u.source_version_id) not in funnel.known] \
            or None
    return chat_units(conv, msgs, funnel.config)


def _assess_notes(funnel: Funnel, convs: dict[str, dict[str, Any]]) -> None:
    """Every note version not observed yet — placeholders too, which have no conversation — one unit each, the
    session-close decision stage 1 took as its rule (I90). Incognito holds by the note's conversation or by the
    folder or import its file came from (I95)."""
    from kenning.intake import sources
    from kenning.intake.envelope import dedup_key

    for note_id in isql.note_ids(funnel.conn):
        conv = convs.get(note_id) or {"conversation_id": note_id, "title": None}
        versions = isql.note_versions_of(funnel.conn, note_id)
        msgs = isql.message_units(funnel.conn, note_id) if note_id in convs else []
        units = [sources.note_unit(conv, msgs[0] if msgs else None, v) for v in versions]
        fresh = [(u, v) for u, v in zip(units, versions)
                 if dedup_key(u.surface, u.source_ref, u.source_version_id) not in funnel.known]
        if not fresh:
            funnel.counts["notes_unchanged"] += 1
            continue
        mode = funnel.incognito.mode(note_id, funnel.now)
        if mode.mode != "incognito":
            paths = sorted({p for _, v in fresh for p in isql.source_paths_by_sha(funnel.conn, v["content_sha256"])})
            basis = path_incognito_basis(funnel.conn, funnel.config, paths)
            if basis:
                mode = MemoryModeState.incognito(funnel.now, "user", tuple(sorted(basis)))
        units = [u for u, _ in fresh]
        funnel.observe(units, mode, _features(funnel, units, mode))
        funnel.counts["units_note"] += len(units)


def assess_all(funnel: Funnel, progress: Any = None) -> None:
    """Every imported record through the funnel: a chat's turns and the conversation itself, a mail thread's mails
    and the thread, a calendar event, a note's versions. A record whose current version was observed already is
    passed over whole."""
    convs = isql.conversation_units(funnel.conn)
    _assess_notes(funnel, {c["conversation_id"]: c for c in convs if c.get("source_kind") == "note"})
    convs = [c for c in convs if c.get("source_kind") != "note"]
    for i, conv in enumerate(convs):
        units = _units(funnel, conv)
        if units is None:
            funnel.counts["conversations_unchanged"] += 1
            continue
        mode = funnel.incognito.mode(conv["conversation_id"], funnel.now)
        funnel.observe(units, mode, _features(funnel, units, mode))
        funnel.counts["conversations_assessed"] += 1
        funnel.counts[f"units_{conv.get('source_kind') or 'chat'}"] += len(units)
        if progress is not None and (i + 1) % 50 == 0:
            progress(records=i + 1, file="intake")


assess_chat = assess_all  # the name the chat-only funnel had


def make_funnel(conn: Any, config: Any, now: str, run_id: str, model_configured: bool) -> Funnel:
    return Funnel(conn, config, now, run_id, model_configured, incognito_conversations(conn, config))
