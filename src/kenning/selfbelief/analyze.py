"""Phases 1–6 on one text: what `kenning self analyze` prints and what the decomposer stores.

    from kenning.selfbelief.analyze import Analyzer
    an = Analyzer(config)                     # rules only; Analyzer(config, llm=client) uses the LLM atomizer
    res = an.analyze("I'm usually patient with my kids, but lately I've been snapping at them.")
    res.as_dict()   # {source_context, candidates, atoms, rejected}

Polarity comes from the epistemics rules (negation / aversion cues), never from the embedding and never from the
LLM alone (S9): the model layer measured that "i love my job" / "i hate my job" score *higher* than paraphrases,
so only a rules-decided polarity can keep them apart.
"""

from __future__ import annotations

from typing import Any, Mapping

import re

from kenning.config import Config
from kenning.selfbelief.atomizer import LLMAtomizer, RuleAtomizer
from kenning.selfbelief.canonicalizer import BeliefCanonicalizer
from kenning.selfbelief.deduper import BeliefAtomDeduper
from kenning.selfbelief.epistemics import EpistemicsLLMFallback, EpistemicsRulesEngine
from kenning.selfbelief.segmenter import BeliefSegmenter
from kenning.selfbelief.source_context import SourceContextClassifier
from kenning.selfbelief.types import Analysis, AnalyzedAtom, CanonicalAtom, EpistemicsResult
from kenning.selfbelief.validator import BeliefAtomValidator


_LETTERS = re.compile(r"[A-Za-z]")


def atomizer_backend(config: Config, llm_enabled: bool) -> str:
    b = config.self_beliefs.atomizer.backend
    if b == "auto":
        return "llm" if llm_enabled else "rules"
    if b == "llm" and not llm_enabled:
        return "rules"   # no model to ask: the rules stand in (the decomposer always works without a model)
    return b


class Analyzer:
    def __init__(self, config: Config, llm: Any = None):
        sb = config.self_beliefs
        self.config = config
        self.llm = llm if (llm is not None and getattr(llm, "enabled", False)) else None
        self.classifier = SourceContextClassifier(sb.source_context)
        self.segmenter = BeliefSegmenter.from_config(sb.segmenter)
        self.rules = RuleAtomizer.from_config(sb)
        self.backend = atomizer_backend(config, self.llm is not None)
        self.llm_atomizer = (LLMAtomizer(self.llm, model=sb.models.atomizer_model,
                                         max_per_call=sb.atomizer.max_candidates_per_call, fallback=self.rules)
                             if self.backend == "llm" and self.llm is not None else None)
        self.validator = BeliefAtomValidator(sb.validator)
        self.canonicalizer = BeliefCanonicalizer()
        self.deduper = BeliefAtomDeduper()
        self.epistemics = EpistemicsRulesEngine(sb.epistemics)
        self.epi_llm = EpistemicsLLMFallback(self.llm, sb.models.epistemics_model) if self.llm is not None else None

    def _mark_trailing_sarcasm(self, text: str, candidates, atoms, offset: int) -> None:
        """A sarcasm marker anywhere in a sentence, or right after it ("I'm SO organized. /s"), makes every clause
        of that sentence sarcastic (S44)."""
        sents = self.segmenter.sentences(text)
        marked = []
        for n, (s, e) in enumerate(sents):
            nxt = sents[n + 1][0] if n + 1 < len(sents) else len(text)
            after = text[e:min(nxt, e + 12)] if n + 1 >= len(sents) or not _LETTERS.search(text, e, nxt) else \
                text[e:nxt]
            if self.validator.sarcastic(text[s:e]) or self.validator.sarcastic(after) or (
                    n + 1 < len(sents) and self.validator.sarcastic(text[sents[n + 1][0]:sents[n + 1][1]])
                    and len(_LETTERS.findall(text, sents[n + 1][0], sents[n + 1][1])) <= 8):
                marked.append((s, e))
        hit = {c.idx for c in candidates if any(s <= c.span[0] - offset < e for s, e in marked)}
        for a in atoms:
            if a.source_idx in hit:
                a.signals["sarcasm"] = True

    def _mark_code_context(self, text: str, candidates, atoms, offset: int) -> None:
        """Every clause of a sentence that holds code or an error message is about that code (S44): "I ran
        `whoami` and it printed root, so I am root"."""
        coded = [(s, e) for s, e in self.segmenter.sentences(text) if self.validator.has_code(text[s:e])]
        if not coded:
            return
        hit = {c.idx for c in candidates if any(s <= c.span[0] - offset < e for s, e in coded)}
        for a in atoms:
            if a.source_idx in hit:
                a.signals["code_context"] = True

    def analyze(self, text: str, *, mode: str | None = None, conversation_id: str | None = None,
                metadata: Mapping[str, Any] | None = None, source: str | None = None, message_id: str | None = None,
                item_key: str = "", offset: int = 0) -> Analysis:
        """Phases 1–6. Spans are ``offset`` + positions in ``text`` (an experience's window in its message)."""
        meta = dict(metadata or {})
        if mode:
            meta[self.config.self_beliefs.source_context.mode_field] = mode
        ctx = self.classifier.classify(text, conversation_id=conversation_id, metadata=meta, source=source)   # 1
        candidates = self.segmenter.segment(text)                                                           # 2
        if offset:
            from kenning.selfbelief.types import ClaimCandidate
            candidates = [ClaimCandidate(c.text, (c.span[0] + offset, c.span[1] + offset), c.idx) for c in candidates]
        if self.llm_atomizer is not None and candidates:                                                    # 3
            result = self.llm_atomizer.atomize(candidates, message_id=message_id, item_key=item_key)
        else:
            result = self.rules.atomize(candidates)
        self._mark_trailing_sarcasm(text, candidates, result.atoms, offset)
        self._mark_code_context(text, candidates, result.atoms, offset)
        checked = self.validator.validate(result.atoms)                                                     # 4
        canon = [self.canonicalizer.canonicalize(a) for a in checked.valid]                                 # 5
        rules_of: dict[int, EpistemicsResult] = {}

        def rules_for(a: CanonicalAtom) -> EpistemicsResult:
            key = id(a)
            if key not in rules_of:
                rules_of[key] = self.epistemics.analyze(a.evidence, a.canonical_text, a.signals.get("clause"))
            return rules_of[key]

        dedup = self.deduper.dedup(canon, polarity_of=lambda a: rules_for(a).detected_polarity)
        atoms: list[AnalyzedAtom] = []
        for i, a in enumerate(dedup.deduped_atoms):                                                         # 6
            epi = rules_for(a)
            if epi.needs_llm_fallback and self.epi_llm is not None:
                epi = self.epi_llm.analyze(a.evidence, epi, message_id=message_id, item_key=f"{item_key}@{i}")
            if a.polarity != epi.detected_polarity:
                a.signals["atomizer_polarity"] = a.polarity
            conf = self.epistemics.cap(a.confidence, epi.frame.modality)
            atoms.append(AnalyzedAtom(a, epi.detected_polarity, conf, epi))
        analysis = Analysis(ctx, candidates, atoms, checked.invalid, dedup.duplicates_removed)
        analysis.errors = result.errors  # type: ignore[attr-defined]
        return analysis
