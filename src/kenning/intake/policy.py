"""§13.4 memory modes and §20A.6 ``resolveExtractionPolicy`` in the seed's strict order (I6, I7).

1. incognito → skip (Focus cannot override)      reason ``incognito_mode``
2. suppress_extraction → skip                     ``extraction_disabled``
3. privilege / legal hold → skip                  ``privilege_block``
4. critical event class → the critical lane       ``critical_lane``
5. budget exceeded → defer                        ``budget_deferred``
6. significance dispatch                          ``score_dispatch``
7. Focus raises the step-6 result to deep         ``focus_override``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

KnowledgePersistenceMode = Literal["accessible_only", "episodic_recall", "candidate_graph", "durable_graph"]
PERSISTENCE_MODES: tuple[str, ...] = ("accessible_only", "episodic_recall", "candidate_graph", "durable_graph")
Decision = Literal["skip", "shallow", "deep", "defer"]
ReasonCode = Literal["incognito_mode", "extraction_disabled", "privilege_block", "critical_lane", "budget_deferred",
                     "score_dispatch", "focus_override"]
CRITICAL_EVENT_CLASSES = ("user_correction", "court_order_detected", "task_failure", "candor_critical_finding",
                          "explicit_accepted_recommendation", "user_flagged_focus")


@dataclass(frozen=True)
class MemoryModeState:
    """§13.4 MemoryModeState, as snapshotted into each envelope."""
    mode: Literal["normal", "matter_only", "personal_only", "incognito"] = "normal"
    activated_at: str = ""
    activated_by: Literal["user", "policy"] = "policy"
    ttl_minutes: int | None = None
    suppress_extraction: bool = False
    suppress_injection: bool = False
    suppress_cross_scope_linking: bool = False
    excluded_matter_ids: tuple[str, ...] = ()
    # Kenning addition: why the mode holds (e.g. 'conversation', 'title_pattern', 'source', 'folder').
    basis: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "activated_at": self.activated_at, "activated_by": self.activated_by,
                "ttl_minutes": self.ttl_minutes, "suppress_extraction": self.suppress_extraction,
                "suppress_injection": self.suppress_injection,
                "suppress_cross_scope_linking": self.suppress_cross_scope_linking,
                "excluded_matter_ids": list(self.excluded_matter_ids), "basis": list(self.basis)}

    @classmethod
    def incognito(cls, at: str, by: str, basis: tuple[str, ...]) -> "MemoryModeState":
        return cls(mode="incognito", activated_at=at, activated_by=by, suppress_extraction=True,  # type: ignore[arg-type]
                   suppress_injection=True, suppress_cross_scope_linking=True, basis=basis)


@dataclass(frozen=True)
class ExtractionPolicyResult:
    allow: bool
    decision: Decision
    reason_code: ReasonCode


def resolve_extraction_policy(*, mode: MemoryModeState, event_class: Literal["critical", "normal"], budget_ok: bool,
                              score_decision: Literal["skip", "shallow", "deep"], focus_pressed: bool,
                              privileged: bool = False, critical_depth: Literal["shallow", "deep"] = "deep"
                              ) -> ExtractionPolicyResult:
    """The seed's ``resolveExtractionPolicy``. ``privileged`` is step 3's privilege/legal-hold input (the seed
    leaves where it comes from to DOC1; chat has none, I7). ``critical_depth`` is how deep the critical lane can
    go right now: its reserved slots decide (I9) — the critical lane itself is never deferred."""
    if mode.mode == "incognito":
        return ExtractionPolicyResult(False, "skip", "incognito_mode")
    if mode.suppress_extraction:
        return ExtractionPolicyResult(False, "skip", "extraction_disabled")
    if privileged:
        return ExtractionPolicyResult(False, "skip", "privilege_block")
    if event_class == "critical":
        return ExtractionPolicyResult(True, critical_depth, "critical_lane")
    wanted = "deep" if focus_pressed else score_decision
    # Step 5 only bites where budget is spent: deep work. Shallow is rules, free, so it never waits (I6).
    if wanted == "deep" and not budget_ok:
        return ExtractionPolicyResult(True, "defer", "budget_deferred")
    if focus_pressed and score_decision != "deep":
        return ExtractionPolicyResult(True, "deep", "focus_override")
    return ExtractionPolicyResult(score_decision != "skip", score_decision, "score_dispatch")


def persistence_mode_for(decision: str, unit_kind: str, incognito: bool) -> KnowledgePersistenceMode:
    """What may become of an observation's content (§20A.1, I3): incognito → accessible only (raw, never learned);
    a conversation as a whole → episodic recall (the corpus; never auto-promoted); deep → durable graph;
    shallow or deferred → candidate graph; skipped → accessible only."""
    if incognito:
        return "accessible_only"
    if unit_kind == "conversation":
        return "episodic_recall"
    return {"deep": "durable_graph", "shallow": "candidate_graph", "defer": "candidate_graph"}.get(
        decision, "accessible_only")  # type: ignore[return-value]


def queue_class_for(decision: str, critical: bool) -> str:
    """§20A.2 queue_class: the critical lane, deep work, shallow or deferred work, and skips (background)."""
    if critical:
        return "critical_non_drop"
    if decision == "deep":
        return "high_priority"
    if decision in ("shallow", "defer"):
        return "normal"
    return "background"
