"""Phase 1 — SourceContextClassifier (seed 000 §4.1): how much a source counts, and its context id.

1. ``mode`` from ``experience.metadata[mode_field]``, else heuristics (S3): text cues (roleplay, journaling,
   introspection), then ``heated`` when at least ``heated_min_signals`` of the three penalty signals fire, then the
   mode the source implies (a note → journaling, the "about me" profile → introspection, a chat → normal_chat),
   else ``unknown``.
2. base weight ``mode_weights[mode]``.
3. penalties: ``caps_penalty`` if more than ``caps_ratio`` of the letters are capitals (a lone "I" not counted,
   texts under ``min_letters_for_caps`` letters never), ``profanity_penalty`` if a listed word occurs,
   ``exclaim_penalty`` if "!" per word exceeds ``exclaim_density`` (S4).
4. VAD arousal penalty, only when ``vad.lexicon_path`` names a lexicon: ``weight -= mean arousal × arousal_weight``.
5. ``context_id = f"{conversation_id}:{mode}"``. The weight is clamped to [0, 1].
"""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path
from typing import Any, Mapping

from kenning.selfbelief.types import SourceContext

MODES = ("journaling", "introspection", "normal_chat", "roleplay", "heated", "unknown")


_LONE_I = re.compile(r"\bI\b")
_W = re.compile(r"\w+")


class VadLexiconError(ValueError):
    pass


@functools.lru_cache(maxsize=4)
def load_vad_lexicon(path: str) -> dict[str, float]:
    """word → arousal in [0, 1] from a CSV/TSV with a header naming ``word`` (or ``term``) and ``arousal``
    columns (the NRC VAD lexicon's layout), or three/four unnamed columns word, valence, arousal[, dominance]."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise VadLexiconError(f"cannot read the VAD lexicon {p}: {e.strerror}") from e
    delim = "\t" if "\t" in text.splitlines()[0] else ","
    rows = list(csv.reader(text.splitlines(), delimiter=delim))
    out: dict[str, float] = {}
    head = [h.strip().lower() for h in rows[0]] if rows else []
    if "arousal" in head:
        wi = head.index("word") if "word" in head else (head.index("term") if "term" in head else 0)
        ai = head.index("arousal")
        body = rows[1:]
    else:
        wi, ai, body = 0, 2, rows
    for r in body:
        try:
            out[r[wi].strip().lower()] = float(r[ai])
        except (IndexError, ValueError):
            continue
    if not out:
        raise VadLexiconError(f"the VAD lexicon {p} has no rows with a word and an arousal value")
    return out


class SourceContextClassifier:
    def __init__(self, cfg):
        self.cfg = cfg
        self.profanity = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in cfg.profanity) + r")\b", re.I) \
            if cfg.profanity else None
        self.cues = {mode: [c.lower() for c in cues] for mode, cues in cfg.mode_cues.items()}
        self.vad = load_vad_lexicon(cfg.vad.lexicon_path) if cfg.vad.lexicon_path else None

    def signals(self, text: str) -> dict[str, Any]:
        h = self.cfg.heuristic_fallback
        letters = [c for c in _LONE_I.sub("", text) if c.isalpha()]
        upper = sum(1 for c in letters if c.isupper())
        caps_ratio = upper / len(letters) if letters else 0.0
        words = _W.findall(text)
        exclaim = text.count("!") / max(1, len(words))
        return {
            "caps": len(letters) >= h.min_letters_for_caps and caps_ratio > h.caps_ratio,
            "caps_ratio": round(caps_ratio, 4),
            "profanity": bool(self.profanity and self.profanity.search(text)),
            "exclaim": exclaim > h.exclaim_density,
            "exclaim_density": round(exclaim, 4),
        }

    def infer_mode(self, text: str, source: str | None, sig: Mapping[str, Any]) -> tuple[str, str]:
        low = text.lower()
        for mode in ("roleplay", "journaling", "introspection"):
            for cue in self.cues.get(mode, []):
                if cue in low:
                    return mode, f"cue:{cue}"
        if sum(bool(sig[k]) for k in ("caps", "profanity", "exclaim")) >= self.cfg.heated_min_signals:
            return "heated", "signals"
        if source and source in self.cfg.source_modes:
            return self.cfg.source_modes[source], f"source:{source}"
        return "unknown", "none"

    def classify(self, text: str, *, conversation_id: str | None, metadata: Mapping[str, Any] | None = None,
                 source: str | None = None) -> SourceContext:
        cfg, h = self.cfg, self.cfg.heuristic_fallback
        sig = self.signals(text)
        given = (metadata or {}).get(cfg.mode_field)
        if isinstance(given, str) and given in MODES:
            mode, why = given, "metadata"
        else:
            mode, why = self.infer_mode(text, source, sig)
        weight = float(cfg.mode_weights[mode])
        penalties: dict[str, float] = {}
        if sig["caps"]:
            penalties["caps"] = h.caps_penalty
        if sig["profanity"]:
            penalties["profanity"] = h.profanity_penalty
        if sig["exclaim"]:
            penalties["exclaim"] = h.exclaim_penalty
        weight -= sum(penalties.values())
        if self.vad is not None:
            vals = [self.vad[w] for w in re.findall(r"[a-z']+", text.lower()) if w in self.vad]
            if vals:
                arousal = sum(vals) / len(vals)
                penalties["vad_arousal"] = round(arousal * cfg.vad.arousal_weight, 6)
                weight -= arousal * cfg.vad.arousal_weight
        weight = round(min(1.0, max(0.0, weight)), 6)
        context_id = f"{conversation_id or 'adhoc'}:{mode}"
        return SourceContext(mode, weight, context_id, {"mode_from": why, "penalties": penalties, **sig})
