"""Extractive reading of one conversation (seed 003 §25.1, no model): the decisions taken in it (DecisionCheckpoints),
the items left open, and a short checkpoint summary. Pure functions over the thread's turns; no SQL.

Attribution follows §20B.1 (decision I54): a decision is the vault owner's own statement ("let's go with …",
"I decided …") or an assistant suggestion the owner accepts in the very next turn ("yes, let's do that") — then the
suggestion is the decision and the acceptance its reasoning. An unanswered suggestion is never a decision (silence is
not acceptance); a question or hypothetical never is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SENT = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.M)
OWNER_ROLES = ("user",)

_DECISION = re.compile(
    r"\b(?:let'?s|let us)\s+(?:go\s+with|use|do|pick|choose|book|take|stick\s+with|keep|buy|try)\b"
    r"|\b(?:i|we)(?:'ve|\s+have)?\s+decided\b"
    r"|\b(?:i|we)(?:'ll|\s+will)\s+(?:go\s+with|use|take|book|pick|choose|buy|stick\s+with|switch\s+to|move\s+to)\b"
    r"|\b(?:i'm|i\s+am|we're|we\s+are)\s+going\s+(?:with|to\s+go\s+with)\b"
    r"|\b(?:settled|agreed)\s+on\b|\bthe\s+plan\s+is\b|\bdecision\s*:|\bdecided\s*:"
    r"|\b(?:i|we)\s+(?:chose|picked|booked|signed|went\s+with)\b", re.I)
# Adoption, not acknowledgement (I54): "ok thx" or a bare "Perfect." after a draft does not adopt a suggestion.
_ACCEPT = re.compile(
    r"\b(?:let'?s\s+(?:do|go\s+with|use|try|book|take)\s+(?:that|it|this|those|these|the|your)|"
    r"i'?ll\s+(?:use|take|do|go\s+with|try|book|follow)\s+(?:that|it|this|those|these|the|your)|"
    r"sounds\s+(?:good|great|perfect)|go\s+with\s+(?:that|it|this)|yes,?\s+please|^\s*deal\b|that\s+works|"
    r"^\s*agreed\b)(?![^.!?]*\?)", re.I)
_REJECT = re.compile(r"^\s*(?:no\b|nope\b|not\s+(?:that|really)\b|i\s+don'?t\s+(?:think|like|want)\b|rather\s+not\b)",
                     re.I)
_SUGGEST = re.compile(r"\b(?:i\s+(?:suggest|recommend|would\s+(?:go|suggest|recommend))|i'?d\s+(?:go|suggest|"
                      r"recommend)|you\s+(?:could|might|should)|consider|option|how\s+about|what\s+about|try)\b", re.I)
_OPEN = re.compile(
    r"\b(?:still\s+(?:need|have)\s+to|need\s+to\s+(?:figure\s+out|decide|check|find\s+out|sort\s+out)|not\s+sure\s+"
    r"(?:if|whether|about|yet|how|what|which)|haven'?t\s+(?:decided|figured|settled)|open\s+question|todo\b|to\s+do\s*:|"
    r"remains?\s+to\s+be|undecided|\btbd\b|have\s+yet\s+to|(?:i|we)\s+(?:will|'ll)\s+have\s+to|waiting\s+(?:on|for)|"
    r"later\s*:|follow[- ]up)", re.I)
_HYPOTHETICAL = re.compile(r"^\s*(?:what\s+if|suppose|imagine|if\s+i\s+were|would\s+it\b|should\s+i\b)", re.I)
_BECAUSE = re.compile(r"\b(?:because|since|as|so\s+that)\b\s+(.+)$", re.I)
_TASK = re.compile(r"^\s*[-*]\s*\[\s\]\s*(.+)$", re.M)


@dataclass(frozen=True)
class Turn:
    message_id: str
    role: str
    author: str | None
    text: str
    at: str | None


@dataclass
class Decision:
    description: str
    reasoning: str
    message_id: str
    occurred_at: str | None
    accepted_from: str | None = None   # the assistant message whose suggestion was accepted


@dataclass
class Reading:
    decisions: list[Decision] = field(default_factory=list)
    unresolved: list[tuple[str, str]] = field(default_factory=list)   # (text, message_id)
    first_user: str | None = None
    last_user: str | None = None


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text or "") if s.strip()]


def clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _is_question(s: str) -> bool:
    return s.rstrip().endswith("?") or bool(_HYPOTHETICAL.match(s))


def _suggestion(text: str) -> str | None:
    """The concrete suggesting sentence of an assistant turn (not a lead-in such as "Here's what I'd suggest:"),
    or None: then there is nothing to accept."""
    for line in (text or "").splitlines():
        if line.lstrip().startswith("#"):
            continue
        for s in sentences(line):
            if s.endswith("?") or s.endswith(":") or not _SUGGEST.search(s):
                continue
            if len(_content_words(s)) >= 3 and not re.search(r"\bhere'?s\b", s, re.I):
                return s.lstrip("-*• ").strip()
    return None


_FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.S)
_STRUCTURE = re.compile(r"^\s*(#|[-*]\s*\[[ xX]\]|\|)")


def prose(text: str) -> str:
    """A turn's text without note front matter."""
    return _FRONT_MATTER.sub("", text or "", count=1)


def _said(text: str) -> list[str]:
    """Sentences of running text (not headings, task boxes or table rows): what a summary quotes."""
    return [s for line in text.splitlines() if not _STRUCTURE.match(line) for s in sentences(line)]


def read_thread(turns: list[Turn], max_chars: int = 240) -> Reading:
    out = Reading()
    turns = [Turn(t.message_id, t.role, t.author, prose(t.text), t.at) for t in turns]
    for i, t in enumerate(turns):
        if t.role not in OWNER_ROLES or not t.text:
            continue
        sents = [s for s in sentences(t.text) if not s.lstrip().startswith("#")]
        said = _said(t.text)
        if out.first_user is None and said:
            out.first_user = clip(said[0], max_chars)
        if said:
            out.last_user = clip(said[-1], max_chars)
        prev = turns[i - 1] if i > 0 else None
        accepted = False
        head = " ".join(sents[:2])
        if prev is not None and prev.role == "assistant" and prev.text and sents and _ACCEPT.search(head) \
                and not _REJECT.match(sents[0]):
            offer = _suggestion(prev.text)
            quote = sents[0] if _ACCEPT.search(sents[0]) else head
            if offer:
                out.decisions.append(Decision(clip(offer, max_chars), clip(f"accepted: {quote}", max_chars),
                                              t.message_id, t.at,
                                              accepted_from=prev.message_id))
                accepted = True
        for j, s in enumerate(sents):
            if _is_question(s):
                if _OPEN.search(s) or (i == len(turns) - 1):
                    out.unresolved.append((clip(s.lstrip("-*• "), max_chars), t.message_id))
                continue
            if _DECISION.search(s) and not (accepted and j < 2):
                m = _BECAUSE.search(s)
                reason = m.group(1) if m else "stated by the user"
                out.decisions.append(Decision(clip(s, max_chars), clip(reason, max_chars), t.message_id, t.at))
            elif _OPEN.search(s):
                out.unresolved.append((clip(s.lstrip("-*• "), max_chars), t.message_id))
        for task in _TASK.findall(t.text):
            item = clip(task, max_chars)
            if all(item != u for u, _ in out.unresolved):
                out.unresolved.append((item, t.message_id))
    # A later decision settles an open item it names (three shared content words or more).
    settled = []
    for text, mid in out.unresolved:
        words = _content_words(text)
        if any(len(words & _content_words(d.description)) >= 3 for d in out.decisions
               if _after(turns, d.message_id, mid)):
            continue
        settled.append((text, mid))
    out.unresolved = _dedupe(settled)
    return out


_STOP = frozenset("the a an and or but to of in on for with at by from is are was be it this that i we you my our "
                  "your me us do did does not no yes so if as just still need have has had will would should could "
                  "let let's lets go".split())


def _content_words(s: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", s.lower()) if w not in _STOP and len(w) > 2}


def _after(turns: list[Turn], later: str, earlier: str) -> bool:
    order = {t.message_id: i for i, t in enumerate(turns)}
    return order.get(later, -1) > order.get(earlier, -1)


def _dedupe(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen, out = set(), []
    for text, mid in items:
        k = text.casefold()
        if k not in seen:
            seen.add(k)
            out.append((text, mid))
    return out


def extractive_summary(title: str, reading: Reading, turn_count: int, max_chars: int) -> str:
    """Where things stood, in one short paragraph built from the thread's own words."""
    bits = [f"{title}."] if title else []
    if reading.first_user:
        bits.append(f"Started with: \"{reading.first_user}\"")
    if reading.decisions:
        bits.append(f"Decided: {reading.decisions[-1].description}")
    if reading.unresolved:
        bits.append(f"Still open: {reading.unresolved[0][0]}")
    shown = {reading.first_user, *(d.description for d in reading.decisions[-1:]),
             *(u for u, _ in reading.unresolved[:1])}
    if reading.last_user and reading.last_user not in shown:
        bits.append(f"Last said: \"{reading.last_user}\"")
    return clip(" ".join(bits), max_chars)


__all__ = ["Decision", "Reading", "Turn", "clip", "extractive_summary", "read_thread", "sentences"]
