"""Valid-time assignment and eligibility (seed 001 §5.4–§5.5), one assertion at a time.

``assign(a, times, text, cfg)`` returns a :class:`Base`: the assertion's valid time, the decision flags the seed
pins (time_source, has_explicit_valid_time, fallback_blocked_reason, tiers), whether it is eligible for temporal
operations and why not. Nothing here reads other assertions, so the result is the same in every replay (T3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kenning.extract.text import sentence_bounds, sentence_of

ELIGIBLE_MODALITIES = ("state", "fact", "preference")


@dataclass
class Base:
    assertion_id: str
    message_id: str
    subject_entity_id: str
    subject_entity_type: str
    predicate_id: str
    predicate_label: str
    object_signature: str
    fact_key: str
    modality: str
    polarity: str
    confidence: float
    subject_tier: int | None
    object_tier: int | None
    user_grounded: bool
    order: tuple
    tx: str                                   # transaction time: when Kenning was told (T3)
    tx_source: str
    superseded_by: str | None                 # stage 4 correction link
    supersession_type: str | None
    aspect: str | None = None                 # stage 4's aspect: past | transition | habitual | future
    valid_time_type: str = "unknown"
    valid_from: str | None = None
    valid_to: str | None = None
    valid_until_hint: str | None = None
    time_source: str = "NONE"
    has_explicit: bool = False
    observed: bool = False                    # T40: valid time is when it was said, not a stated time
    eligible: bool = False
    reasons: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def best_tier(self) -> int:
        return min(self.subject_tier or 5, self.object_tier or 5)


def alignment(gap: int, proximity_chars: int, min_alignment: float) -> float:
    """T5 (seed B — the 0.1 floor): ``1 / (1 + gap·k)`` with k chosen so a time exactly ``proximity_chars`` away
    scores exactly ``min_alignment``. The seed's ``1/(1+gap)`` would fall below the 0.1 floor at 10 characters and
    make the 200-character window meaningless; this keeps its shape and both settings."""
    if gap > proximity_chars:
        return 0.0
    if proximity_chars <= 0 or min_alignment <= 0 or min_alignment >= 1:
        return 1.0 / (1.0 + gap)
    k = (1.0 / min_alignment - 1.0) / proximity_chars
    return 1.0 / (1.0 + gap * k)


def gap_between(a_start: int, a_end: int, t_start: int, t_end: int) -> int:
    if a_end >= t_start and t_end >= a_start:
        return 0
    return t_start - a_end if a_end < t_start else a_start - t_end


def _interpret(qtype: str | None, tm: dict, flags: list[str]) -> tuple[str, str | None, str | None, str | None]:
    """§5.4.4: (valid_time_type, valid_from, valid_to, valid_until_hint) from the qualifier and the chosen time."""
    t_from, t_to = tm["valid_from_utc"], tm["valid_to_utc"]
    is_interval = tm["resolved_type"] == "interval"
    if qtype == "during" and not is_interval:
        flags.append("DURING_INSTANT_DOWNGRADED")
        qtype = "at"
    if qtype == "since":
        return "interval", t_from, None, None
    if qtype == "until":
        flags.append("UNTIL_QUALIFIER_HINT_STORED")
        return "unknown", None, None, (t_to if is_interval and t_to else t_from)
    if is_interval:
        return "interval", t_from, t_to, None
    return "instant", t_from, None, None


def assign(a: dict, times: list[dict], text: str | None, cfg: Any, fallback_tx: str) -> Base:
    """``a``: the assertion row joined with its message (timestamp_quality, role, order keys) and entity type;
    ``times``: the message's time mentions; ``cfg``: ``pipeline.temporal_reasoning``."""
    flags: list[str] = []
    grounded = a["asserted_role"] == "user" or bool(a["has_user_corroboration"])
    said_at, said_source = a["asserted_at_utc"], "MESSAGE_TIME"
    if said_at is None and cfg.context_dated_by_conversation and a.get("conversation_created_at_utc") \
            and a.get("export_content_type") == "user_editable_context":
        # T41: the custom-instructions profile has no time of its own; it held when its conversation began
        said_at, said_source = a["conversation_created_at_utc"], "CONVERSATION_TIME"
    b = Base(
        assertion_id=a["assertion_id"], message_id=a["message_id"], subject_entity_id=a["subject_entity_id"],
        subject_entity_type=a["subject_entity_type"], predicate_id=a["predicate_id"],
        predicate_label=a["predicate_label"], object_signature=a["object_signature"], fact_key=a["fact_key"],
        modality=a["modality"], polarity=a["polarity"], confidence=float(a["confidence_final"]),
        subject_tier=a["subject_detection_tier"], object_tier=a["object_detection_tier"], user_grounded=grounded,
        order=(a["conversation_id"], a["order_index"], a["message_id"], a["assertion_id"]),
        tx=said_at or fallback_tx, tx_source=said_source if said_at else "INGEST_TIME",
        superseded_by=a["superseded_by_assertion_id"], supersession_type=a["supersession_type"],
        aspect=a.get("aspect"))
    t0 = [t for t in times if t["resolved_type"] in ("instant", "interval") and t["valid_from_utc"]]
    link: dict[str, Any] = {"candidates": [], "chosen": None}
    chosen = None
    qid = a["temporal_qualifier_id"]
    if qid is not None:
        chosen = next((t for t in t0 if t["time_mention_id"] == qid), None)
        if chosen is not None:
            b.time_source = "QUALIFIER_ID"
        else:
            flags.append("QUALIFIER_ID_MISSING_OR_UNRESOLVED")
    if chosen is None and t0:
        s, e = a["char_start"], a["char_end"]
        sentence = None
        if s is not None and cfg.proximity_same_sentence and text:
            sentence = sentence_of(sentence_bounds(text), s)
        scored = []
        for t in t0:
            if s is None:
                al = cfg.time_link_min_alignment if len(t0) == 1 else 0.0
                gap = None
            else:
                gap = gap_between(s, e, t["char_start"], t["char_end"])
                al = alignment(gap, cfg.time_link_proximity_chars, cfg.time_link_min_alignment)
                if sentence is not None and al > 0 and not (sentence[0] <= t["char_start"] < sentence[1]):
                    al = 0.0
                    gap = f"{gap} (other sentence)"
            link["candidates"].append({"time_mention_id": t["time_mention_id"], "surface": t["surface_text"],
                                       "gap": gap, "alignment": round(al, 6),
                                       "score": round(float(t["confidence"] or 0) * al, 6)})
            if al >= cfg.time_link_min_alignment and al > 0:
                scored.append((-(float(t["confidence"] or 0) * al), -al, t["char_start"], t["time_mention_id"], t))
        if scored:
            scored.sort(key=lambda x: x[:4])
            chosen = scored[0][4]
            b.time_source = "PROXIMITY"
    if chosen is not None:
        link["chosen"] = chosen["time_mention_id"]
        b.has_explicit = True
        b.valid_time_type, b.valid_from, b.valid_to, b.valid_until_hint = _interpret(
            a["temporal_qualifier_type"], chosen, flags)
    else:
        blocked = None
        if not cfg.fallback_valid_from_asserted:
            blocked = "FALLBACK_DISABLED"
        elif said_source == "CONVERSATION_TIME":
            pass
        elif a["timestamp_quality"] != "original":
            blocked = "TIMESTAMP_NOT_ORIGINAL"
            flags.append("FALLBACK_BLOCKED_TIMESTAMP_NOT_ORIGINAL")
        elif not a["asserted_at_utc"]:
            blocked = "ASSERTED_AT_NULL"
            flags.append("FALLBACK_BLOCKED_ASSERTED_AT_NULL")
        if blocked is None:
            b.valid_time_type, b.valid_from = "instant", said_at
            b.time_source = "ASSERTED_AT_FALLBACK" if said_source == "MESSAGE_TIME" else said_source
            flags.append("FALLBACK_ASSERTED_AT_USED_NONEXPLICIT")
        b.raw["fallback_blocked_reason"] = blocked
    if b.valid_time_type == "interval" and b.valid_to is not None and b.valid_from is not None \
            and b.valid_to <= b.valid_from:
        flags.append("VALID_TIME_NONPOSITIVE_INTERVAL")
        b.valid_time_type, b.valid_from, b.valid_to = "unknown", None, None
    # §5.5 eligibility
    reasons = []
    if b.modality not in ELIGIBLE_MODALITIES:
        reasons.append("MODALITY_EXCLUDED")
    if b.polarity != "positive":
        reasons.append("NEGATIVE_POLARITY")
    if b.confidence < cfg.threshold_close:
        reasons.append("CONFIDENCE_BELOW_THRESHOLD")
    if not grounded:
        reasons.append("NOT_USER_GROUNDED")
    if b.valid_from is None:
        reasons.append("VALID_FROM_NULL")
    b.observed = not b.has_explicit and b.valid_from is not None
    if not b.has_explicit and not (cfg.observed_states_eligible and b.observed):
        # T40: with observed states on, an undated claim holds at the time it was said
        reasons.append("NONEXPLICIT_TIME_SOURCE")
    b.reasons = reasons
    b.eligible = not reasons
    b.raw.update({"time_link": link, "time_source": b.time_source, "has_explicit_valid_time": b.has_explicit,
                  "qualifier_type": a["temporal_qualifier_type"], "flags": flags,
                  "subject_detection_tier": b.subject_tier, "object_detection_tier": b.object_tier,
                  "eligibility_reasons": reasons, "eligible": b.eligible, "user_grounded": grounded,
                  "transaction_time_source": b.tx_source,
                  "time_basis": "explicit" if b.has_explicit else "observed" if b.observed else None})
    b.raw.setdefault("fallback_blocked_reason", None)
    return b
