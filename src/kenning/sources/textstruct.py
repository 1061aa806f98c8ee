"""Structure inside ``text_raw``: code fences, blockquotes, citation markers (seed 001 §1.8–1.9).

Offsets are code-point indices into the text, half-open ``[char_start, char_end)``.
"""

from __future__ import annotations

import re
from functools import lru_cache

# docs/decisions.md D9: any indentation, ``` or ~~~, any info string (c++, objective-c).
_BLOCKQUOTE = re.compile(r"^[ \t]*>[^\n]*$", re.MULTILINE)


_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


def code_fences(text: str) -> list[dict]:
    if "```" not in text and "~~~" not in text:
        return []
    ranges: list[dict] = []
    open_start = None
    fence_char, fence_len, language = "", 0, None
    for m in _FENCE_LINE.finditer(text):  # only lines that start with a fence marker matter
        marker, rest = m.group(1), m.group(2)
        if open_start is None:
            if marker[0] == "`" and "`" in rest:
                continue  # inline code like ```x``` on one line is not a fence opener
            open_start, fence_char, fence_len = m.start(), marker[0], len(marker)
            info = rest.strip()
            language = info.split()[0] if info else None
        elif marker[0] == fence_char and len(marker) >= fence_len and not rest.strip():
            ranges.append({"char_start": open_start, "char_end": m.end(), "language": language})
            open_start = None
    if open_start is not None:  # unclosed fence runs to the end of the text (seed 001 §1.8)
        ranges.append({"char_start": open_start, "char_end": len(text), "language": language})
    return ranges


def _inside(pos: int, ranges: list[dict]) -> bool:
    return any(r["char_start"] <= pos < r["char_end"] for r in ranges)


def blockquotes(text: str, fences: list[dict] | None = None) -> list[dict]:
    """One range per quoted line, newline excluded (the seed's example), lines inside fences skipped."""
    if ">" not in text:
        return []
    fences = fences or []
    return [
        {"char_start": m.start(), "char_end": m.end()}
        for m in _BLOCKQUOTE.finditer(text)
        if not (fences and _inside(m.start(), fences))
    ]


@lru_cache(maxsize=8)
def _citation_regex(patterns: tuple[str, ...]) -> re.Pattern | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def citation_markers(text: str, patterns: tuple[str, ...]) -> list[dict]:
    rx = _citation_regex(patterns)
    if rx is None or not ("】" in text or "\ue200" in text):
        return []
    return [{"char_start": m.start(), "char_end": m.end()} for m in rx.finditer(text)]
