"""DOC72 §34 experience, pure: the experience_records row as a dict, the UsageEvent model, the 20-event window
with older events folded into a summary that is never deleted, distributions and trends, and the α/β feeds
("20 successes → α+1; 3 consecutive failures → β+1"). The light form of Tier B/C nodes lives in the payload.

Docs/decisions.md K54–K59 record how the seed is read.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from kenning.config.models import KnowledgeExperienceConfig, NodeKind
from kenning.sources.timestamps import parse_utc

UsageType = Literal["accessed", "applied", "referenced", "executed", "invoked", "injected", "suggested", "rejected"]
Outcome = Literal["success", "failure", "corrected", "ignored", "adverse_ruling", "partial_success", "unknown"]
OverallTrend = Literal["growing", "stable", "declining", "shifting", "new"]
# §34.7 CanonicalOutcome, shared with extraction outcome events and feedback transforms.
CanonicalOutcome = Literal["success", "partial_success", "failure", "corrected", "ignored", "rejected",
                           "adverse_ruling", "promoted", "demoted", "unknown"]
CANONICAL_OUTCOMES: tuple[str, ...] = get_args(CanonicalOutcome)
ExperienceDepth = Literal["full", "light", "minimal"]

# §3.2 experience_records, without its key (target_node_id belongs to the store).
RECORD_COLUMNS = ("total_usage_count", "total_success_count", "total_failure_count", "total_correction_count",
                  "recent_usage_count", "recent_success_count", "recent_failure_count", "recent_correction_count",
                  "last_used_at", "variant_distribution", "context_distribution", "recent_events",
                  "older_event_summary", "overall_trend", "trend_signal")


class UsageEvent(BaseModel):
    """§34.3 UsageEvent. ``used_at`` is the seed's name; ``occurred_at`` is read as the same field (K58)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: str | None = None
    used_at: str = Field(validation_alias=AliasChoices("used_at", "occurred_at"))
    usage_type: UsageType
    context: str | None = None
    outcome: Outcome | None = None
    outcome_detail: str | None = None
    outcome_source_ref: str | None = None
    variant_used: str | None = None
    correction_detail: str | None = None
    session_ref: str | None = None
    agent_id: str | None = None
    outcome_chain_id: str | None = None  # §34A: the outcome chain this use belongs to

    @model_validator(mode="before")
    @classmethod
    def _one_time(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "used_at" in data and "occurred_at" in data:
            data = {k: v for k, v in data.items() if k != "occurred_at"}  # the seed's own name wins
        return data

    @field_validator("used_at")
    @classmethod
    def _canonical_time(cls, v: str) -> str:
        try:
            parse_utc(v)
        except (TypeError, ValueError):
            raise ValueError(f"used_at {v!r} is not a YYYY-MM-DDTHH:MM:SS.sssZ timestamp") from None
        return v


@dataclass(frozen=True)
class ExperienceUpdate:
    record: dict
    alpha_delta: float
    beta_delta: float
    reason: str
    # Events that left the 20-event window in this update: §34.6 "archived, not deleted" — the store keeps them.
    archived_events: list[dict] = field(default_factory=list)


def new_record() -> dict:
    """An empty experience_records row (§3.2 defaults: counts 0, overall_trend 'new')."""
    return {"total_usage_count": 0, "total_success_count": 0, "total_failure_count": 0, "total_correction_count": 0,
            "recent_usage_count": 0, "recent_success_count": 0, "recent_failure_count": 0,
            "recent_correction_count": 0, "last_used_at": None, "variant_distribution": [],
            "context_distribution": [], "recent_events": [], "older_event_summary": None, "overall_trend": "new",
            "trend_signal": None}


def experience_depth(tier: str, kind: str, cfg: KnowledgeExperienceConfig) -> ExperienceDepth:
    """§2.2 by tier, widened by §34.2 (procedures and composites keep a full record though they are Tier B, K54):
    A → full ExperienceRecord; B → light {usage_count, last_used_at, last_outcome}; C → minimal inline counts."""
    if tier == "A" or kind in cfg.full_record_kinds:
        return "full"
    return {"B": "light", "C": "minimal"}[tier]


def _parse_event(event: Mapping[str, Any] | UsageEvent, cfg: KnowledgeExperienceConfig | None) -> UsageEvent:
    ev = event if isinstance(event, UsageEvent) else UsageEvent.model_validate(dict(event))
    if cfg is not None and ev.outcome in cfg.negative_outcomes and not (ev.outcome_detail or "").strip():
        raise ValueError(f"a usage event with outcome {ev.outcome!r} must say why in outcome_detail "
                         f"(§34.5: every bad outcome captures WHY, not just THAT)")
    return ev


def _most_common(counts: Mapping[str, int]) -> str | None:
    return min(counts, key=lambda k: (-counts[k], k)) if counts else None


class _Stats:
    """Outcome and label counts over a run of events (or a folded summary)."""

    def __init__(self, cfg: KnowledgeExperienceConfig):
        self.cfg = cfg
        self.n = self.success = self.failure = self.correction = self.rated = 0
        self.variants: Counter[str] = Counter()
        self.contexts: Counter[str] = Counter()

    @classmethod
    def of(cls, events: Iterable[Mapping[str, Any]], cfg: KnowledgeExperienceConfig) -> _Stats:
        s = cls(cfg)
        for e in events:
            s.add(e)
        return s

    @classmethod
    def of_summary(cls, summary: Mapping[str, Any] | None, cfg: KnowledgeExperienceConfig) -> _Stats:
        s = cls(cfg)
        if summary:
            s.n, s.success = summary["total_count"], summary["success_count"]
            s.failure, s.correction, s.rated = (summary["failure_count"], summary["correction_count"],
                                                summary["rated_count"])
            s.variants.update(summary["variant_counts"])
            s.contexts.update(summary["context_counts"])
        return s

    def add(self, e: Mapping[str, Any]) -> None:
        o, c = e.get("outcome"), self.cfg
        self.n += 1
        self.success += o in c.success_outcomes
        self.failure += o in c.failure_outcomes
        self.correction += o in c.correction_outcomes
        self.rated += o is not None and o not in c.neutral_outcomes
        if e.get("variant_used"):
            self.variants[e["variant_used"]] += 1
        if e.get("context"):
            self.contexts[e["context"]] += 1

    @property
    def success_rate(self) -> float | None:
        return self.success / self.rated if self.rated else None


def _failure_step(streak: int, outcome: str | None, cfg: KnowledgeExperienceConfig) -> int:
    """The failure streak after one more outcome: failures extend it, neutral outcomes leave it, others end it."""
    if outcome in cfg.failure_outcomes:
        return streak + 1
    if outcome is None or outcome in cfg.neutral_outcomes:
        return streak
    return 0


def _trailing_failures(record: Mapping[str, Any], cfg: KnowledgeExperienceConfig) -> int:
    streak = (record.get("older_event_summary") or {}).get("trailing_failure_streak", 0)
    for e in record["recent_events"]:
        streak = _failure_step(streak, e.get("outcome"), cfg)
    return streak


def _fold(summary: dict | None, e: Mapping[str, Any], cfg: KnowledgeExperienceConfig) -> dict:
    """Add one event leaving the window to older_event_summary: counts only ever grow (§34.6 never deleted)."""
    s = _Stats.of_summary(summary, cfg)
    s.add(e)
    first = summary["date_range"]["from"] if summary else e["used_at"]
    streak = _failure_step(summary.get("trailing_failure_streak", 0) if summary else 0, e.get("outcome"), cfg)
    return {"total_count": s.n, "date_range": {"from": first, "to": e["used_at"]}, "success_rate": s.success_rate,
            "most_common_context": _most_common(s.contexts), "most_common_variant": _most_common(s.variants),
            "success_count": s.success, "failure_count": s.failure, "correction_count": s.correction,
            "rated_count": s.rated, "variant_counts": dict(sorted(s.variants.items())),
            "context_counts": dict(sorted(s.contexts.items())), "trailing_failure_streak": streak}


def _earlier_and_recent(rec: Mapping[str, Any], cfg: KnowledgeExperienceConfig) -> tuple[_Stats, _Stats]:
    """What trends compare: the folded summary against the window, or, before anything was folded, the older
    half of the window against the newer half (K57)."""
    window = rec["recent_events"]
    if rec.get("older_event_summary"):
        return _Stats.of_summary(rec["older_event_summary"], cfg), _Stats.of(window, cfg)
    half = len(window) // 2
    return _Stats.of(window[:half], cfg), _Stats.of(window[half:], cfg)


def _share_trend(label: str, attr: str, earlier: _Stats, recent: _Stats, tol: float) -> str:
    before = getattr(earlier, attr)[label] / earlier.n if earlier.n else 0.0
    now = getattr(recent, attr)[label] / recent.n if recent.n else 0.0
    return "increasing" if now - before > tol else "decreasing" if before - now > tol else "stable"


def _distribution(dist: Sequence[Mapping[str, Any]], label_key: str, label: str | None, used_at: str) -> list[dict]:
    out = [dict(d) for d in dist]
    if label:
        for d in out:
            if d[label_key] == label:
                d["count"] += 1
                break
        else:
            out.append({label_key: label, "count": 1})
        if label_key == "variant_label":
            next(d for d in out if d[label_key] == label)["last_used_at"] = used_at
    return sorted(out, key=lambda d: d[label_key])


def _overall_trend(rec: Mapping[str, Any], cfg: KnowledgeExperienceConfig) -> tuple[str, str | None]:
    if rec["total_usage_count"] < cfg.trend_min_events:
        return "new", None
    earlier, recent = _earlier_and_recent(rec, cfg)
    before_v, now_v = _most_common(earlier.variants), _most_common(recent.variants)
    if before_v and now_v and before_v != now_v:
        return "shifting", f"variant shifted from {before_v!r} to {now_v!r}"
    a, b = earlier.success_rate, recent.success_rate
    if a is None or b is None:
        return "stable", None
    if b - a > cfg.trend_tolerance:
        return "growing", f"success rate rose from {a:.2f} to {b:.2f}"
    if a - b > cfg.trend_tolerance:
        return "declining", f"success rate fell from {a:.2f} to {b:.2f}"
    return "stable", None


def apply_usage_event(record: Mapping[str, Any], event: Mapping[str, Any] | UsageEvent, *, kind: str,
                      cfg: KnowledgeExperienceConfig) -> ExperienceUpdate:
    """One UsageEvent into a full ExperienceRecord (§34.3–§34.6) and the α/β it earns (§34.4).

    Events are applied in time order (an earlier one is an error); an ``event_id`` already in the window is a
    no-op. A success that makes the total a multiple of 20 adds 1 to α; a failure that makes the streak of
    consecutive failures a multiple of 3 adds 1 to β (the streak then counts on from 0).
    """
    if kind not in get_args(NodeKind):
        raise ValueError(f"unknown node kind {kind!r}; known: {', '.join(get_args(NodeKind))}")
    ev = _parse_event(event, cfg)
    rec = {**new_record(), **copy.deepcopy(dict(record))}
    rec = {k: rec[k] for k in RECORD_COLUMNS}
    window: list[dict] = rec["recent_events"]
    if ev.event_id and any(e.get("event_id") == ev.event_id for e in window):
        return ExperienceUpdate(rec, 0.0, 0.0, f"event {ev.event_id} is already recorded")
    if window and ev.used_at < window[-1]["used_at"]:
        raise ValueError(f"usage event at {ev.used_at} is older than the last recorded one "
                         f"({window[-1]['used_at']}); apply events in time order")
    streak = _trailing_failures(rec, cfg)
    stored = ev.model_dump(exclude_none=True)
    stored.setdefault("event_id", f"use-{rec['total_usage_count'] + 1}")

    rec["total_usage_count"] += 1
    rec["total_success_count"] += ev.outcome in cfg.success_outcomes
    rec["total_failure_count"] += ev.outcome in cfg.failure_outcomes
    rec["total_correction_count"] += ev.outcome in cfg.correction_outcomes
    rec["last_used_at"] = ev.used_at
    alpha_delta = beta_delta = 0.0
    reasons = []
    if ev.outcome in cfg.success_outcomes and rec["total_success_count"] % cfg.alpha_every_successes == 0:
        alpha_delta = cfg.alpha_increment
        reasons.append(f"success number {rec['total_success_count']}: α +{alpha_delta:g}")
    streak = _failure_step(streak, ev.outcome, cfg)
    if ev.outcome in cfg.failure_outcomes and streak % cfg.beta_after_consecutive_failures == 0:
        beta_delta = cfg.beta_increment
        reasons.append(f"{cfg.beta_after_consecutive_failures} consecutive failures: β +{beta_delta:g}")

    window.append(stored)
    archived = []
    while len(window) > cfg.recent_window:
        old = window.pop(0)
        rec["older_event_summary"] = _fold(rec["older_event_summary"], old, cfg)
        archived.append(old)

    recent = _Stats.of(window, cfg)
    rec["recent_usage_count"], rec["recent_success_count"] = recent.n, recent.success
    rec["recent_failure_count"], rec["recent_correction_count"] = recent.failure, recent.correction
    earlier, newer = _earlier_and_recent(rec, cfg)
    variants = _distribution(rec["variant_distribution"], "variant_label", ev.variant_used, ev.used_at)
    for d in variants:
        d["recent_count"] = recent.variants[d["variant_label"]]
        d["trend"] = _share_trend(d["variant_label"], "variants", earlier, newer, cfg.trend_tolerance)
    contexts = _distribution(rec["context_distribution"], "context_label", ev.context, ev.used_at)
    for d in contexts:
        d["recent_count"] = recent.contexts[d["context_label"]]
    rec["variant_distribution"], rec["context_distribution"] = variants, contexts
    rec["overall_trend"], rec["trend_signal"] = _overall_trend(rec, cfg)
    return ExperienceUpdate(rec, alpha_delta, beta_delta, "; ".join(reasons), archived)


def light_experience(payload_fields: Mapping[str, Any], event: Mapping[str, Any] | UsageEvent, *,
                     minimal: bool = False) -> dict:
    """§34.2 light form (Tier B): {usage_count, last_used_at, last_outcome} in the payload; ``minimal`` (Tier C):
    usage_count and last_used_at only. Returns a new dict; α/β move only through full records (K54)."""
    ev = _parse_event(event, None)
    out = dict(payload_fields)
    out["usage_count"] = int(out.get("usage_count") or 0) + 1
    last = out.get("last_used_at")
    if last is None or ev.used_at >= last:
        out["last_used_at"] = ev.used_at
        if not minimal:
            out["last_outcome"] = ev.outcome
    return out
