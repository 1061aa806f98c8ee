"""§20A.2 IntakeObservationEnvelope: what the funnel sees of one imported unit, whatever its source (I1, I2).

A source hands the funnel :class:`IntakeUnit`s — a chat message, a whole conversation, and (from other importers)
a note version, a mail or a calendar event — and :func:`build_envelope` makes the seed's envelope with its dedup
key = hash(surface + source_ref + source_version_id). The trigger is not part of the key: the same unit version
seen twice, by any trigger, is one observation."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from kenning.intake.policy import MemoryModeState
from kenning.intake.scoring import SURFACES, IntakeScoreFeatures

Actor = Literal["user", "agent", "system"]


@dataclass(frozen=True)
class IntakeUnit:
    """One imported unit, source-agnostic. ``source_version_id`` changes when the unit's content does (a message's
    text hash, a note version id, a mail's Message-ID), so an edit is a new observation and a re-import is not."""
    surface: str
    source_ref: str
    source_version_id: str | None
    actor: Actor
    unit_kind: str                     # 'message' | 'conversation' | 'note_version' | 'mail' | 'calendar_event'
    text: str
    created_at: str | None = None
    conversation_id: str | None = None
    message_id: str | None = None
    role: str | None = None
    critical_class: str | None = None  # a §24 CriticalEventClass when the unit is one
    focus: bool = False                # "learn from this" / Focus (§20B)
    title: str | None = None
    context: tuple[dict[str, Any], ...] = ()
    # A source's own dispatch rule, taken at the policy's step 6 in place of the score's decision: (decision,
    # reason code) — a note version's session-close rule (§20B.2), a calendar event's kind (§20B.15), a mail's
    # deadline from someone else (I90–I92). None: the score decides.
    rule: tuple[str, str] | None = None


@dataclass(frozen=True)
class IntakeObservationEnvelope:
    observation_id: str
    observed_at: str
    surface: str
    source_ref: str
    source_version_id: str | None
    actor: Actor
    memory_mode_snapshot: MemoryModeState
    features: IntakeScoreFeatures
    dedup_key: str
    unit: IntakeUnit = field(repr=False, compare=False)

    def row(self, run_id: str) -> dict[str, Any]:
        return {"observation_id": self.observation_id, "observed_at": self.observed_at, "surface": self.surface,
                "source_ref": self.source_ref, "source_version_id": self.source_version_id, "actor": self.actor,
                "memory_mode_snapshot": self.memory_mode_snapshot.as_dict(), "features": self.features.as_dict(),
                "dedup_key": self.dedup_key, "unit_kind": self.unit.unit_kind,
                "conversation_id": self.unit.conversation_id, "message_id": self.unit.message_id, "run_id": run_id}


def dedup_key(surface: str, source_ref: str, source_version_id: str | None) -> str:
    """The seed's stable hash(surface + source_ref + source_version_id); NUL-separated so no two splits collide."""
    return hashlib.sha256("\x00".join((surface, source_ref, source_version_id or "")).encode()).hexdigest()


def observation_id(key: str) -> str:
    return "obs_" + key[:32]


def content_version(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def build_envelope(unit: IntakeUnit, features: IntakeScoreFeatures, mode: MemoryModeState,
                   observed_at: str) -> IntakeObservationEnvelope:
    if unit.surface not in SURFACES:
        raise ValueError(f"unknown intake surface {unit.surface!r} for {unit.source_ref}; known: {', '.join(SURFACES)}")
    key = dedup_key(unit.surface, unit.source_ref, unit.source_version_id)
    return IntakeObservationEnvelope(observation_id(key), observed_at, unit.surface, unit.source_ref,
                                     unit.source_version_id, unit.actor, mode, features, key, unit)


# ---- chat: conversations and their turns as units ----------------------------------------------------------

ACTOR = {"user": "user", "assistant": "agent", "unknown": "agent", "tool": "system", "system": "system"}


def chat_units(conversation: dict[str, Any], messages: list[dict[str, Any]], config: Any, *, surface: str = "chat",
               unit_kind: str = "message", ref: str = "message") -> list[IntakeUnit]:
    """A conversation's turns as units (each with its preceding turns as context), then the conversation itself
    (the episodic unit, §25). Another participant than the owner is an 'agent' actor: not the owner's voice (I3).
    A mail thread is the same shape on the ``email`` surface: each mail a ``mail`` unit (I90)."""
    pats = config.intake.intent_patterns
    correction = re.compile(pats.correction, re.IGNORECASE)
    focus = re.compile(pats.focus, re.IGNORECASE)
    accept = re.compile(pats.accept, re.IGNORECASE)
    n_ctx = config.intake.context_turns
    units: list[IntakeUnit] = []
    prev: list[dict[str, Any]] = []
    for m in messages:
        text = m["text_raw"] or ""
        critical, is_focus = None, False
        if m["role"] == "user":
            last_agent = bool(prev) and prev[-1]["role"] != "user"
            if correction.search(text):
                critical = "user_correction"
            elif focus.search(text):
                critical, is_focus = "user_flagged_focus", True
            elif last_agent and accept.search(text):
                critical = "explicit_accepted_recommendation"
        units.append(IntakeUnit(
            surface=surface, source_ref=f"{ref}:{m['message_id']}", source_version_id=content_version(text),
            actor=ACTOR.get(m["role"], "system"), unit_kind=unit_kind, text=text, created_at=m["created_at_utc"],  # type: ignore[arg-type]
            conversation_id=m["conversation_id"], message_id=m["message_id"], role=m["role"],
            critical_class=critical, focus=is_focus, title=conversation.get("title"),
            context=tuple({"role": p["role"], "text": p["text_raw"] or "", "message_id": p["message_id"]}
                          for p in prev[-n_ctx:]) if n_ctx else ()))
        prev.append(m)
    users = any(m["role"] == "user" for m in messages)
    units.append(IntakeUnit(
        surface=surface, source_ref=f"conversation:{conversation['conversation_id']}",
        source_version_id=conversation.get("raw_sha256"), actor="user" if users else "system",
        unit_kind="conversation", text=conversation.get("title") or "",
        created_at=conversation.get("created_at_utc"), conversation_id=conversation["conversation_id"],
        title=conversation.get("title")))
    return units
