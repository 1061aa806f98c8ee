"""The seam between the funnel (which decides *whether* and *how deeply* an observation is mined) and the miners
(which decide *what* it says). The funnel's queue drain calls every registered extractor for each observation it
dispatches; miners register themselves here. Keeping the seam this small lets either side change without the other.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import apsw

Depth = Literal["shallow", "deep"]


@dataclass(frozen=True)
class Observation:
    """One imported unit the funnel dispatched for extraction (a message, usually, with its conversation context)."""

    observation_id: str
    unit_kind: str                      # 'message' | 'conversation' | 'note_version' | 'mail' | 'calendar_event'
    text: str
    role: str | None = None             # 'user' | 'assistant' | ... for messages
    conversation_id: str | None = None
    message_id: str | None = None
    created_at: str | None = None       # ISO-8601 UTC, the unit's own time
    persistence_mode: str = "durable_graph"   # KnowledgePersistenceMode (§13.4); 'episodic_recall' never auto-promotes
    critical: bool = False              # critical lane (§22, corrections §10.5)
    context: tuple[dict[str, Any], ...] = ()   # neighbouring turns, oldest first: {'role','text','message_id'}
    surface: str = "chat"               # the intake surface: chat, note, email, calendar (I90–I92)
    meta: dict[str, Any] | None = None  # a calendar event's start, zone, RRULE… (its part metadata)


@dataclass
class ExtractionResult:
    """What one extractor did for one observation: the knowledge commits it produced and why it wrote nothing."""

    extractor: str
    commit_ids: list[str] = field(default_factory=list)
    items: int = 0
    skipped_reason: str | None = None
    model_call_ids: list[str] = field(default_factory=list)


@dataclass
class ExtractionContext:
    conn: apsw.Connection
    config: Any                         # kenning.config.models.Config
    depth: Depth
    now: str                            # frozen-clock ISO time of the run
    llm: Any | None = None              # configured model client, None when no model is configured


Extractor = Callable[[ExtractionContext, Observation], ExtractionResult]

EXTRACTORS: dict[str, Extractor] = {}


def register(name: str) -> Callable[[Extractor], Extractor]:
    def deco(fn: Extractor) -> Extractor:
        EXTRACTORS[name] = fn
        return fn
    return deco


# Cheap, rule-only cues a miner recognises in a user's turn ("here's how I …", "whenever …, …"): the funnel's shallow
# scoring counts a hit as an explicit user intent (§20A.4), so what a miner can read is never scored away (I33).
Cue = Callable[[str], bool]
CUES: dict[str, Cue] = {}


def register_cue(name: str, cue: Cue) -> None:
    CUES[name] = cue


def cues() -> dict[str, Cue]:
    registered()
    return dict(CUES)


# Reply cues read the ASSISTANT turn a user turn answers: a suggestion the miners decide on the user's next turn
# (§20B, I21) makes that next turn worth mining, whatever it says — accepting, turning down or moving on (I172).
REPLY_CUES: dict[str, Cue] = {}


def register_reply_cue(name: str, cue: Cue) -> None:
    REPLY_CUES[name] = cue


def reply_cues() -> dict[str, Cue]:
    registered()
    return dict(REPLY_CUES)


def registered() -> dict[str, Extractor]:
    """Extractors in registration order; importing ``kenning.intake.mining`` registers the miners."""
    try:
        importlib.import_module("kenning.intake.mining")  # registers on import, when present
    except ModuleNotFoundError:
        pass
    return dict(EXTRACTORS)
