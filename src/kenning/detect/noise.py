"""Noise suppression (seed 001 §2A.5.3): a pinned rule list marking code-like tokens ``CODE_LIKE_TOKEN``.

A rule sees the candidate (detector, surface, span) and the text around it, and returns its rule id
when the candidate looks like code rather than a thing the person talks about. The candidate is kept
(``is_eligible=0``) with the rule id in ``raw_candidate_json``. Rules and lists: docs/decisions.md E5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOISE_RULES_VERSION = "1"

_HEX_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_PREPROCESSOR = frozenset({"#include", "#define", "#ifdef", "#ifndef", "#endif", "#pragma", "#import", "#region",
                           "#endregion", "#undef", "#elif", "#else", "#error", "#warning", "#line", "#if"})
_CODEY_NAME = re.compile(r"_|\(\)|[a-z][A-Z].*\.|\.[a-z]+[A-Z]|::|->|=>")


@dataclass(frozen=True)
class NoiseRules:
    file_extensions: frozenset[str]
    object_prefixes: frozenset[str]
    code_handles: frozenset[str]

    @classmethod
    def from_config(cls, det_cfg) -> "NoiseRules":
        return cls(frozenset(e.lower() for e in det_cfg.code_file_extensions),
                   frozenset(p.lower() for p in det_cfg.code_object_prefixes),
                   frozenset(h.lower() for h in det_cfg.code_handles))

    def check(self, detector: str, surface: str, text: str, start: int, end: int) -> str | None:
        """The id of the first rule the candidate trips, or None."""
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        in_backticks = before == "`" and after == "`"
        if detector == "BARE_DOMAIN":
            labels = surface.lower().split(".")
            if after == "(":
                return "CALL_SYNTAX"
            if labels[-1] in self.file_extensions:
                return "FILE_EXTENSION_TLD"
            if labels[0] in self.object_prefixes:
                return "OBJECT_ATTRIBUTE"
            if in_backticks:
                return "INLINE_CODE"
            return None
        if detector == "HASHTAG":
            if _HEX_COLOR.match(surface):
                return "HEX_COLOR"
            if surface.lower() in _PREPROCESSOR:
                return "PREPROCESSOR_DIRECTIVE"
            if in_backticks:
                return "INLINE_CODE"
            return None
        if detector == "HANDLE":
            if surface.lower() in self.code_handles:
                return "CODE_DECORATOR"
            if after == "(" or in_backticks:
                return "CALL_SYNTAX" if after == "(" else "INLINE_CODE"
            return None
        if detector.startswith(("NER:", "LEXICON:")):
            if _CODEY_NAME.search(surface):
                return "CODE_IDENTIFIER"
            if after == "(":
                return "CALL_SYNTAX"
            if in_backticks:
                return "INLINE_CODE"
            return None
        return None
