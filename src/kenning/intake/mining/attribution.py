"""§20B attribution: who said it and with what authority decides whether a mined item is written and how.

- the user's fact, decision or correction → a directive-level write (the kind's §6.1 starting state);
- the user's question or hypothetical → nothing;
- an assistant suggestion the user accepts in a following turn → a directive-level write with dual provenance
  (the assistant's message and the user's acceptance);
- an assistant suggestion the user lets stand (the next user turn neither accepts, contests nor rejects it)
  → written at ``suggested`` only, as an observation;
- contested → no write; rejected → no write, the rejected option is recorded (``mining_rejected_options``).
Silence is never acceptance: only words of acceptance in the user's own following turn count (I21)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from kenning.intake.extractors import Observation

Authority = Literal["directive", "recommendation", "observation"]

_QUESTION_START = re.compile(
    r"^\s*(?:(?:who|what|when|where|why|how|which)\s+(?:is|are|was|were|do|does|did|should|would|could|can|will|"
    r"shall|has|have|about)\b|(?:should|shall|could|would|can|do|does|did|is|are|was|were|will|have|has)\s+"
    r"(?:i|you|we|it|they|he|she|there|this|that|my)\b|any\s+idea|i\s+wonder)", re.I)
_HYPOTHETICAL = re.compile(
    r"\b(?:what\s+if|suppose\b|supposing|hypothetically|imagine|if\s+i\s+(?:were|was|had|ever)|say\s+i\b|"
    r"in\s+theory|would\s+it\s+make\s+sense|i\s+might|maybe\s+i(?:'ll|\s+will|\s+should)?|i'?m\s+wondering|"
    r"thinking\s+about\s+whether|not\s+sure\s+(?:if|whether))", re.I)

_ACCEPT = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|yes|yep|yeah|sure|great|perfect|excellent|awesome|sounds\s+good|sounds\s+great|"
    r"good\s+idea|love\s+it|agreed|deal|that\s+works|works\s+for\s+me|done|nice)\b[\s,!.—-]*)+"
    r"(?:(?:let'?s|i'?ll|we'?ll|i\s+will|go\s+ahead|do\s+(?:that|it)|use\s+that|i'?m\s+going\s+to|please)\b.*)?$"
    r"|\b(?:let'?s\s+(?:do|go\s+with|use)\s+(?:that|this|it|those|your)|i'?ll\s+(?:use|take|go\s+with|"
    r"follow|adopt)\s+(?:that|this|it|those|your)|go\s+with\s+(?:that|this|your)|that'?s\s+(?:exactly\s+)?what\s+"
    r"i(?:'ll|\s+will)\s+do|i'?ll\s+do\s+(?:that|it|exactly\s+that)|make\s+(?:that|it)\s+a\s+rule|"
    r"adopt(?:ing)?\s+(?:that|this|it))\b", re.I)
_REJECT = re.compile(
    r"^\s*(?:no\b(?!\s*,?\s*i\s+meant)|nope|nah|not\s+really)\b"
    r"|\b(?:let'?s\s+not|i'?d\s+rather\s+not|i\s+don'?t\s+(?:like|want|think\s+so)|that\s+won'?t\s+work|"
    r"i\s+won'?t\s+(?:do|use)\s+(?:that|this|it)|i'?ll\s+pass|skip\s+(?:that|it)|not\s+(?:a\s+fan|for\s+me)|"
    r"bad\s+idea|don'?t\s+do\s+that|please\s+don'?t|i\s+reject|not\s+a\s+good\s+fit|doesn'?t\s+(?:work|suit)\s+"
    r"(?:for\s+)?me)\b", re.I)
_CONTEST = re.compile(
    r"\b(?:are\s+you\s+sure|i'?m\s+not\s+sure|not\s+convinced|hmm+|but\s+(?:what|why|how|wouldn'?t|isn'?t|"
    r"doesn'?t)|i\s+doubt|that\s+seems\s+(?:wrong|off|risky)|why\s+would|maybe\s+not)\b", re.I)
_SUGGESTION = re.compile(
    r"\b(?:i\s+(?:suggest|recommend|propose)|you\s+(?:could|might|should|may\s+want\s+to)|how\s+about|"
    r"why\s+not|consider|try\b|one\s+option|here'?s\s+(?:a|one|how)|a\s+good\s+(?:approach|way)|"
    r"i'?d\s+(?:suggest|recommend)|from\s+now\s+on|i'?ll\s+always|going\s+forward|whenever|every\s+\w+day|steps?\b|"
    r"\b1[.)]\s|"
    r"a\s+(?:quick|simple|good|easy|better)\s+(?:way|approach|method|routine)|(?:maybe\s+)?a\s+rule\s+like)", re.I)


_CORRECTION = re.compile(
    r"^\s*(?:(?:oh|oops|sorry|wait|hmm)[,.!\s]+)*(?:actually\b|no,?\s+i\s+meant\b|i\s+meant\b|correction\s*:|"
    r"scratch\s+that\b|i\s+was\s+wrong\b|let\s+me\s+correct\b|to\s+correct\s+myself\b|i\s+misspoke\b|"
    r"sorry,?\s+(?:i\s+meant|it'?s|that\s+should\s+be)\b)", re.I)


def is_correction(text: str) -> bool:
    """§10.5: the user correcting what was said ("actually …", "no, I meant …"); goes on the critical lane."""
    return bool(_CORRECTION.search(text or ""))


def is_question(text: str) -> bool:
    t = text.strip()
    return t.endswith("?") or bool(_QUESTION_START.match(t))


def is_hypothetical(text: str) -> bool:
    return bool(_HYPOTHETICAL.search(text))


def user_statement_kind(sentence: str) -> str:
    """'question' | 'hypothetical' | 'statement' for one user sentence (§20B: only statements are written)."""
    if is_question(sentence):
        return "question"
    if is_hypothetical(sentence):
        return "hypothetical"
    return "statement"


Reaction = Literal["accepted", "rejected", "contested", "uncontested"]


def reaction(user_text: str) -> Reaction:
    """How the user's turn answers the assistant turn before it. Rejection wins over acceptance ("ok, but no")."""
    head = user_text.strip()[:300]
    if _REJECT.search(head):
        return "rejected"
    if _CONTEST.search(head) or (is_question(head) and not _ACCEPT.search(head)):
        return "contested"
    if _ACCEPT.search(head):
        return "accepted"
    return "uncontested"


def is_suggestion(assistant_text: str) -> bool:
    return bool(_SUGGESTION.search(assistant_text))


@dataclass(frozen=True)
class AgentTurn:
    """The assistant turn the user's observation answers, and how it was answered."""
    message_id: str | None
    text: str
    reaction: Reaction


def answered_agent_turn(obs: Observation) -> AgentTurn | None:
    """For a user message: the assistant turn right before it (the last context turn) and the user's reaction.
    An assistant message itself is decided on the user's next turn, never on its own (silence ≠ acceptance)."""
    if obs.role != "user" or not obs.context:
        return None
    prev: dict[str, Any] = obs.context[-1]
    if prev.get("role") != "assistant" or not (prev.get("text") or "").strip():
        return None
    return AgentTurn(prev.get("message_id"), prev.get("text") or "", reaction(obs.text))
