"""§42A.2.6 Stage 1 — mention spans of one observation (a message), deterministic and bounded.

Two feeds (G2): the spans Kenning's own stages 2A/3 already resolved to an entity (their ``entity_mentions``), and
the seed's core span patterns run over the message text. The patterns run in the ``regex`` engine with a timeout
(G6): an observation whose patterns exceed ``regex_eval_timeout_ms`` keeps the spans found so far and is marked
degraded. Input is cut at ``max_input_text_chars``; at most ``max_mentions_per_observation`` spans are kept.
Nested spans (a narrower one inside a wider one) are both emitted; the narrower carries its parent, and every span
carries its group (the outermost span) so aggregation counts a nested group once."""

from __future__ import annotations

import re as _stdre
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import regex

from kenning.upkeep.bundles import stable_sha256

_ENTITY_CLASS = {"PERSON": "canonical_alias", "ORG": "organization_name", "PRODUCT": "product_or_model_reference",
                 "LOCATION": "canonical_alias"}


def normalize_for_lookup(text: str) -> str:
    """§42A.2.8 normalizeForLookup: trim, lower, [._-]+ → space, collapse spaces."""
    return _stdre.sub(r"\s+", " ", _stdre.sub(r"[._\-]+", " ", text.strip().lower())).strip()


@dataclass
class Span:
    start: int
    end: int
    text: str
    span_class: str
    origin: str  # "entity" (stages 2A/3) or "pattern"
    node_id: str | None = None  # set for entity spans (already resolved)
    key: str = ""
    is_nested: bool = False
    parent_key: str | None = None
    group_key: str = ""
    resolution: dict[str, Any] = field(default_factory=dict)

    @property
    def normalized(self) -> str:
        return normalize_for_lookup(self.text)


def compile_patterns(cfg: Any) -> list[tuple[str, Any]]:
    """The §42A.2.6 core table, in the seed's order (an earlier class wins an identical span)."""
    titles = "|".join(regex.escape(t) for t in cfg.role_title_prefixes)
    suffixes = "|".join(regex.escape(s) for s in cfg.organization_suffixes)
    generic = "|".join(regex.escape(t) for t in cfg.generic_document_terms)
    definite = "|".join(regex.escape(t) for t in cfg.definite_description_terms)
    cap = r"[A-Z][\w'&-]*"
    return [
        ("role_titled_person", regex.compile(rf"\b(?:{titles})\.?\s+{cap}(?:\s+[A-Z][\w'-]+)?")),
        ("organization_name", regex.compile(rf"\b(?:{cap}\s+(?:&\s+)?){{1,4}}(?:{suffixes})\b\.?")),
        ("specific_document_reference", regex.compile(
            r"\b(?:Exhibit|Appendix|Chapter|Section|Schedule)\s+[A-Z0-9]{1,4}\b"
            r"|\b[\w-]{1,60}\.(?:md|pdf|docx?|xlsx?|pptx?|txt|csv|key|pages)\b")),
        ("generic_document_reference", regex.compile(rf"\b[Tt]he\s+(?:{generic})\b")),
        ("definite_description", regex.compile(rf"\b[Tt]he\s+(?:{definite})\b")),
        ("canonical_alias", regex.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*){1,5}\b")),
        ("product_or_model_reference", regex.compile(r"\b[A-Z]{1,5}-\d{1,5}[A-Z]?\b|\b[A-Z][a-z]+-[A-Z]\s?\d\b")),
    ]


def detect(observation_id: str, text: str, entity_spans: list[Span], patterns: list[tuple[str, Any]],
           cfg: Any, known: Callable[[str], bool] | None = None,
           skip: list[tuple[int, int]] = ()) -> tuple[list[Span], bool]:
    """All spans of one observation, nested groups marked; returns (spans, degraded). ``known`` says whether a
    normalized text is a known alias (§42A.2.6A alias scan): the token runs inside a wider span that are known
    names become nested spans ("Mutable Instruments" inside "Mutable Instruments Plaits"). Pattern spans that touch
    a ``skip`` range (code fences) are dropped: code is not prose that names things (as stage 2A does)."""
    text = text[:cfg.max_input_text_chars]
    found: dict[tuple[int, int], Span] = {}
    for s in entity_spans:
        if s.end <= len(text) and s.start < s.end:
            found.setdefault((s.start, s.end), s)
    degraded = False
    drop = {w.lower() for w in cfg.leading_words_dropped}
    deadline = time.perf_counter() + cfg.regex_eval_timeout_ms / 1000
    for cls, pat in patterns:
        left = deadline - time.perf_counter()
        if left <= 0:
            degraded = True
            break
        try:
            for m in pat.finditer(text, timeout=left):
                start, end = m.span()
                if any(start < b and a < end for a, b in skip):
                    continue
                word = m.group(0)
                if cls == "canonical_alias":
                    first, _, rest = word.partition(" ")
                    if first.lower() in drop and rest:
                        start += len(first) + 1
                        word = rest
                        if " " not in word:
                            continue  # one capitalized word left: a name only if stages 2A/3 said so
                found.setdefault((start, start + len(word)), Span(start, start + len(word), word, cls, "pattern"))
        except TimeoutError:
            degraded = True
            break
    if known is not None:
        for s in [x for x in found.values() if x.origin == "pattern"]:
            for a, b in _token_runs(s.text):
                sub = s.text[a:b]
                key = (s.start + a, s.start + b)
                if key not in found and len(sub) >= 2 and known(normalize_for_lookup(sub)):
                    found[key] = Span(key[0], key[1], sub, "canonical_alias", "pattern")
    spans = sorted(found.values(), key=lambda s: (s.start, -s.end, s.span_class))
    spans = spans[:cfg.max_mentions_per_observation]
    _mark_nesting(observation_id, spans)
    return spans, degraded


def _token_runs(text: str, max_tokens: int = 6) -> list[tuple[int, int]]:
    """(start, end) of every strictly shorter contiguous run of tokens in ``text``."""
    toks = [(m.start(), m.end()) for m in _stdre.finditer(r"\S+", text)]
    out = []
    for i in range(len(toks)):
        for j in range(i, min(len(toks), i + max_tokens)):
            if j - i + 1 < len(toks):
                out.append((toks[i][0], toks[j][1]))
    return out


def _mark_nesting(observation_id: str, spans: list[Span]) -> None:
    open_: list[Span] = []  # enclosing spans, outermost first
    for s in spans:
        s.key = stable_sha256(f"{observation_id}|{s.start}|{s.end}|{s.span_class}")
        while open_ and open_[-1].end < s.end:
            open_.pop()
        while open_ and not (open_[-1].start <= s.start and s.end <= open_[-1].end):
            open_.pop()
        if open_:
            s.is_nested, s.parent_key, s.group_key = True, open_[-1].key, open_[0].group_key
        else:
            s.group_key = s.key
        open_.append(s)


def context_window(text: str, start: int, end: int, side: int) -> str:
    """§42A.2.10: the sentence holding the span plus the one before it (split on .!? + space + capital); else
    ±``side`` characters."""
    bounds = [0] + [m.end() for m in _stdre.finditer(r"[.!?]\s+(?=[A-Z])", text)] + [len(text) + 1]
    idx = max(i for i, b in enumerate(bounds[:-1]) if b <= start)
    lo = bounds[max(0, idx - 1)]
    hi = bounds[idx + 1] - 1 if idx + 1 < len(bounds) else len(text)
    if hi - lo > 1000 or hi <= lo:
        lo, hi = max(0, start - side), min(len(text), end + side)
    return text[lo:hi].strip()[:1000]


def entity_span_class(kenning_type: str | None, surface: str, title_prefixes: list[str]) -> str:
    first = surface.split(" ", 1)[0].rstrip(".")
    if kenning_type == "PERSON" and first in title_prefixes:
        return "role_titled_person"
    return _ENTITY_CLASS.get(kenning_type or "", "canonical_alias")
