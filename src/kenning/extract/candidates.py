"""Assertion candidates (seed 001 §4.4.3 record contract), their validation (§4.5) and ordering (§4.9).

A candidate is what an extractor (rules or the model) read in one message, before grounding: a subject
reference, a predicate label, an object reference (entity, literal or none), modality, polarity, a span and a
confidence. Grounding (kenning.extract.grounding) turns it into an ``assertions`` row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kenning.sources.jcs import canonicalize

MODALITIES = ("state", "fact", "preference", "intention", "question")
POLARITIES = ("positive", "negative")
VALUE_TYPES = ("string", "number", "boolean", "date", "json")
QUALIFIER_TYPES = ("at", "since", "until", "during")


@dataclass
class SubjectRef:
    """Who the claim is about, as written.

    kind: speaker (first person of the author), self (the vault owner: "you" in assistant text, "the user"),
    kin ("my sister" with no name), named (a name, possibly from "my sister Anna"), pronoun (he/she), entity (an
    entity id given by the model), text (free text from the model)."""

    kind: str
    text: str
    start: int | None = None
    end: int | None = None
    kin: str | None = None            # the kin word of "my sister (Anna)"
    owner: str | None = None          # whose kin: "speaker" or "self"
    name_start: int | None = None     # span of the name inside "my sister Anna"
    name_end: int | None = None
    plural: bool = False              # "we"
    elided: bool = False              # "Joined a travel club." — no subject written; the speaker

    def audit(self) -> dict[str, Any]:
        return {k: v for k, v in (("kind", self.kind), ("text", self.text), ("start", self.start), ("end", self.end),
                                  ("kin", self.kin), ("owner", self.owner), ("plural", self.plural or None),
                                  ("elided", self.elided or None))
                if v is not None}


@dataclass
class ObjectRef:
    """The object as written: kind entity | literal | entity_or_literal | none."""

    kind: str
    text: str | None = None
    start: int | None = None
    end: int | None = None
    type_hint: str | None = None       # entity type the slot expects (LOCATION, ORG, PERSON, …)
    value_type: str | None = None      # literal: string | number | boolean | date | json
    value: Any = None                  # literal value (normalized)
    entity_id: str | None = None       # the model may name an entity by id
    pro_form: bool = False             # "there", "here": resolved by coreference

    def audit(self) -> dict[str, Any]:
        out = {"kind": self.kind, "text": self.text, "start": self.start, "end": self.end,
               "type_hint": self.type_hint, "value_type": self.value_type, "value": self.value,
               "entity_id": self.entity_id, "pro_form": self.pro_form or None}
        return {k: v for k, v in out.items() if v is not None}


@dataclass
class Qualifier:
    type: str                          # at | since | until | during
    time_mention_id: str | None = None
    surface: str | None = None
    value: str | None = None           # an ISO value given by the model (§4.6.5 step 3)
    start: int | None = None
    end: int | None = None


@dataclass
class Candidate:
    message_id: str
    method: str                        # rule_based | llm
    source_id: str                     # pattern id, or "llm"
    subject: SubjectRef
    predicate_label: str
    obj: ObjectRef
    modality: str
    polarity: str
    char_start: int | None
    char_end: int | None
    confidence: float
    source_sha: str | None = None      # the pattern entry's hash / the model call's request hash
    priority: int = 1000
    exclusive: str | None = None
    fallback: bool = False
    qualifier: Qualifier | None = None
    quote: str | None = None
    aspect: str | None = None          # past | transition | habitual | future | None
    notes: dict[str, Any] = field(default_factory=dict)   # hedges, verb, side relation, model extras
    retraction: str | None = None      # emit a retraction of this type aimed at the positive form
    extra: bool = False                # a side claim (the kin relation inside a subject phrase)
    model: str | None = None
    llm_audit: list | None = None      # hybrid merge: the model candidates this rule candidate absorbed
    match_key: tuple | None = None     # candidates split from one match never clash with each other
    qualifier_default: str | None = None   # rules: the qualifier type a plain time cue gets (assigned later)

    @property
    def predicate_norm(self) -> str:
        from kenning.extract.registry import normalize_label

        return normalize_label(self.predicate_label)[1]

    def record(self) -> dict[str, Any]:
        """The run-invariant record of this candidate (goes into raw_assertion_json)."""
        rec: dict[str, Any] = {
            "method": self.method, "source": self.source_id, "source_sha": self.source_sha,
            "subject": self.subject.audit(), "predicate_label": self.predicate_label, "object": self.obj.audit(),
            "modality": self.modality, "polarity": self.polarity, "char_start": self.char_start,
            "char_end": self.char_end, "confidence": self.confidence,
        }
        if self.qualifier is not None:
            rec["qualifier"] = {k: v for k, v in self.qualifier.__dict__.items() if v is not None}
        if self.quote is not None:
            rec["quote"] = self.quote
        if self.aspect:
            rec["aspect"] = self.aspect
        if self.notes:
            rec["notes"] = self.notes
        if self.model:
            rec["model"] = self.model
        return rec

    def sort_key(self) -> tuple:
        """§4.9 within-message order: char_start NULLS LAST, char_start, char_end DESC, label, confidence DESC,
        sha256(JCS(candidate))."""
        return (self.char_start is None, self.char_start or 0, -(self.char_end or 0), self.predicate_norm,
                -self.confidence, hashlib.sha256(canonicalize(self.record()).encode()).hexdigest())


def validate(c: Candidate, text: str) -> tuple[bool, str | None, list[tuple[str, str]]]:
    """§4.5: required fields, enums, the object rule, span and quote checks, quote-to-offset resolution.
    Returns (valid, reason, warnings) and fixes spans in place (NULL on mismatch, set from a unique quote)."""
    warnings: list[tuple[str, str]] = []
    if not c.subject or not (c.subject.text or "").strip():
        return False, "SUBJECT_EMPTY", warnings
    if not (c.predicate_label or "").strip():
        return False, "PREDICATE_EMPTY", warnings
    if c.modality not in MODALITIES:
        return False, f"MODALITY_INVALID:{c.modality}", warnings
    if c.polarity not in POLARITIES:
        return False, f"POLARITY_INVALID:{c.polarity}", warnings
    o = c.obj
    if o.kind in ("entity", "entity_or_literal"):
        if not (o.text or o.entity_id):
            return False, "OBJECT_ENTITY_EMPTY", warnings
    elif o.kind == "literal":
        if o.value_type not in VALUE_TYPES or o.value is None:
            return False, "OBJECT_LITERAL_INVALID", warnings
    elif o.kind != "none":
        return False, f"OBJECT_KIND_INVALID:{o.kind}", warnings
    if not 0 <= c.confidence <= 1:
        return False, "CONFIDENCE_OUT_OF_RANGE", warnings
    if c.qualifier is not None and c.qualifier.type not in QUALIFIER_TYPES:
        c.qualifier = None
    n = len(text)
    if c.char_start is not None or c.char_end is not None:
        s, e = c.char_start, c.char_end
        if s is None or e is None or not (0 <= s < e <= n):
            warnings.append(("SPAN_INVALID", f"span [{s}, {e}) outside the text (length {n}); spans set NULL"))
            c.char_start = c.char_end = None
        elif c.quote is not None and not _quote_matches(c.quote, text[s:e]):
            warnings.append(("SPAN_QUOTE_MISMATCH", f"quote {c.quote[:60]!r} != text[{s}:{e}] "
                                                    f"{text[s:e][:60]!r}; spans set NULL"))
            c.char_start = c.char_end = None
    if c.char_start is None and c.quote:
        hits = _find_all(text, c.quote)
        if len(hits) == 1:
            c.char_start, c.char_end = hits[0], hits[0] + len(c.quote)
        else:
            warnings.append(("QUOTE_OFFSET_UNRESOLVED", f"quote {c.quote[:60]!r} found {len(hits)} times; spans "
                                                        "stay NULL"))
    return True, None, warnings


def _quote_matches(quote: str, surface: str) -> bool:
    return quote == surface or " ".join(quote.split()) == " ".join(surface.split())


def _find_all(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i >= 0 and needle:
        out.append(i)
        i = text.find(needle, i + 1)
    return out
