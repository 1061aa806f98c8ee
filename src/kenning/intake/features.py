"""Shallow, rule-only IntakeScoreFeatures for a unit (§20A.4, I4): regexes, alias matching and word overlap — no
model, a few microseconds per unit. Each feature is 0–1 as the seed asks; the mapping is a decision (I4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kenning.intake.envelope import IntakeUnit
from kenning.intake.scoring import IntakeScoreFeatures

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]{2,}")
# Words that say nothing new however often they appear (novelty counts content words only).
_STOP = frozenset("the and for that this with have has had was were are you your yours what which when where who "
                  "how why not but can could would should will shall about from into onto just also very really "
                  "there their they them then than some any all our ours its it's i'm i've i'll let's okay yes"
                  .split())

INTENT = {"user_correction": 1.0, "user_flagged_focus": 1.0, "explicit_accepted_recommendation": 0.90}
ASK_INTENT = 0.80
DECIDE_INTENT = 0.75  # a user's own decision, goal, commitment or standing order (I4)
# A turn a registered miner recognises (a stated goal, deadline, procedure, standing order, directive) is the user
# telling the assistant something durable about themselves: explicit intent at the seed's override level (I33).
CUE_INTENT = 0.90
# Rules read a unit's first SCAN_CHARS characters: what a turn is about shows early, and a pasted document must
# not make the funnel slow (shallow is < 100 ms per observation, §20A.2).
SCAN_CHARS = 4000


@dataclass
class FeatureRules:
    config: Any
    aliases: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        c = self.config.intake
        self.domain = [(re.compile(p.pattern, re.IGNORECASE), p.weight) for _, p in sorted(c.high_value_patterns.items())]
        self.privacy = [(re.compile(p.pattern, re.IGNORECASE), p.risk) for _, p in sorted(c.privacy_patterns.items())]
        self.action = re.compile(c.action_pattern, re.IGNORECASE)
        self.ask = re.compile(c.intent_patterns.ask)
        self.decide = re.compile(c.intent_patterns.decide, re.IGNORECASE)
        self.min_chars = c.min_chars
        self.max_alias_words = min(4, max((a.count(" ") + 1 for a in self.aliases), default=1))
        # Only n-grams starting with an alias's first word can match: one set lookup rules most positions out.
        self.first_words = {a.split(" ", 1)[0] for a in self.aliases}
        self.hits: dict[str, list[str]] = {}  # source_ref → aliases named (for the skip audit)
        from kenning.intake.extractors import cues, reply_cues

        self.cues = list(cues().values())   # what the registered miners can read counts as intent (I33)
        self.reply_cues = list(reply_cues().values())

    def answers_suggestion(self, unit: IntakeUnit) -> bool:
        """A user turn whose meaning is in the turn before it, which the miners read as its context (I172): right
        after an assistant turn that suggests something the miners read (the §20B decision on it — accepted,
        rejected, contested or uncontested — is taken on this turn) or asks the user something (the answer is the
        user's own statement: "honestly? to get my pilot's licence"), or right after the user's own turn a miner's
        cue recognised (steps or a rule carried on in a second message)."""
        if unit.actor != "user" or not unit.context:
            return False
        prev = unit.context[-1]
        before = (prev.get("text") or "")[:SCAN_CHARS]
        if not before.strip():
            return False
        if prev.get("role") == "assistant":
            return before.rstrip().endswith("?") or any(c(before) for c in (*self.reply_cues, *self.cues))
        return prev.get("role") == "user" and any(c(before) for c in self.cues)

    def words(self, text: str) -> set[str]:
        return {w for w in _WORD.findall(text.lower()) if w not in _STOP}

    def named(self, text: str) -> list[str]:
        """Known entities named in the text (alias matching, §20A.2 shallow)."""
        if not self.aliases:
            return []
        toks = re.findall(r"[\w'\-]+", text.lower())
        hits = set()
        for i, tok in enumerate(toks):
            if tok not in self.first_words:
                continue
            for n in range(1, self.max_alias_words + 1):
                g = " ".join(toks[i:i + n])
                if g in self.aliases:
                    hits.add(g)
        return sorted(hits)

    def features(self, unit: IntakeUnit, *, seen_words: set[str], duplicate: bool) -> IntakeScoreFeatures:
        text = (unit.text or "")[:SCAN_CHARS]
        answers = unit.critical_class is None and self.answers_suggestion(unit)
        if len(text.strip()) < self.min_chars and unit.critical_class is None and not answers:
            # "ok", "thanks": nothing to learn; duplication_risk 1 keeps it out of the funnel visibly (I4).
            return IntakeScoreFeatures(duplication_risk=1.0)
        intent = INTENT.get(unit.critical_class or "", 0.0)
        if answers:
            intent = CUE_INTENT   # it decides the suggestion before it (I172)
        elif not intent and unit.actor == "user" and self.ask.search(text):
            intent = ASK_INTENT
        elif not intent and unit.actor == "user" and any(c(text) for c in self.cues):
            intent = CUE_INTENT
        elif not intent and unit.actor == "user" and self.decide.search(text):
            intent = DECIDE_INTENT
        words = self.words(text)
        novelty = round(len(words - seen_words) / len(words), 6) if words else 0.0
        domain = min(1.0, round(sum(w for p, w in self.domain if p.search(text)), 6))
        action = 0.8 if unit.actor == "user" and self.action.search(text) else 0.0
        privacy = max((r for p, r in self.privacy if p.search(text)), default=0.0)
        named = self.named(text)
        self.hits[unit.source_ref] = named
        return IntakeScoreFeatures(
            explicit_user_intent=intent, novelty_score=novelty, domain_impact_score=domain,
            entity_centrality_score=min(1.0, round(0.34 * len(named), 6)), action_strength_score=action,
            matter_link_confidence=0.0,  # chat has no work contexts (matters) to link to yet
            duplication_risk=1.0 if duplicate else 0.0, privacy_risk=privacy)


def conversation_features(parts: list[IntakeScoreFeatures]) -> IntakeScoreFeatures:
    """A conversation unit carries the strongest signal of its turns (the corpus entry is as significant as the
    most significant thing said in it); duplication is the weakest, privacy the strongest."""
    if not parts:
        return IntakeScoreFeatures(duplication_risk=1.0)
    return IntakeScoreFeatures(
        explicit_user_intent=max(p.explicit_user_intent for p in parts),
        novelty_score=max(p.novelty_score for p in parts),
        domain_impact_score=max(p.domain_impact_score for p in parts),
        entity_centrality_score=max(p.entity_centrality_score for p in parts),
        action_strength_score=max(p.action_strength_score for p in parts),
        matter_link_confidence=max(p.matter_link_confidence for p in parts),
        duplication_risk=min(p.duplication_risk for p in parts),
        privacy_risk=max(p.privacy_risk for p in parts))
