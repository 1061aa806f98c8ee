"""Text helpers for stage 4: the exclusion index and masking (§4.3.2, §4.4.2), sentences, words, object phrases.

Offsets are code points into ``text_raw``; masking is length-preserving, so every offset found in the masked
text is an offset into ``text_raw`` (no offset map is needed, §4.4.2).
"""

from __future__ import annotations

import re
from typing import Iterable

import orjson

WORD = re.compile(r"[\w'’]+")
_SENT_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n")
_ABBREV = frozenset("dr mr mrs ms st jr sr prof corp inc ltd co vs etc e.g i.e approx no fig ca mt ft".split())
_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}\"“”]+")
_DETERMINERS = frozenset("a an the some any this that these those my our your his her their its one another "
                         "several many few couple lots lot of own new".split())
_DANGLING = frozenset("and or & of to into with at for in about from by on than as near like around over".split())
_LEADING_DET_PHRASES = ("a few ", "a couple of ", "lots of ", "a lot of ", "my own ", "a new ", "some new ")


def ranges_of(raw_json: str | None) -> list[tuple[int, int]]:
    if not raw_json:
        return []
    return [(int(r["char_start"]), int(r["char_end"])) for r in orjson.loads(raw_json)]


def exclusion_ranges(fences_json: str | None, blockquotes_json: str | None, citations_json: str | None, *,
                     include_blockquotes: bool, include_citations: bool) -> list[tuple[int, int]]:
    """§4.3.2: fences (+ blockquotes when configured, + citation markers), sorted by start and merged."""
    found = ranges_of(fences_json)
    if include_blockquotes:
        found += ranges_of(blockquotes_json)
    if include_citations:
        found += ranges_of(citations_json)
    found = sorted((s, e) for s, e in found if e > s)
    merged: list[tuple[int, int]] = []
    for s, e in found:
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def excluded_length(ranges: Iterable[tuple[int, int]], n: int) -> int:
    return sum(min(e, n) - min(s, n) for s, e in ranges)


def mask(text: str, ranges: list[tuple[int, int]]) -> str:
    """§4.4.2 ``length_preserving``: excluded characters become spaces (line breaks stay, so a fenced block
    never glues two sentences together). Same length, same offsets."""
    if not ranges:
        return text
    parts = []
    pos = 0
    for s, e in ranges:
        s, e = max(s, pos), min(e, len(text))
        if s >= e:
            continue
        parts.append(text[pos:s])
        parts.append("".join("\n" if ch == "\n" else " " for ch in text[s:e]))
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """Sentences as [start, end) spans (end includes the closing punctuation). A period after a known
    abbreviation, or followed by a lower-case word, does not end a sentence."""
    out = []
    start = 0
    n = len(text)
    for m in _SENT_END.finditer(text):
        end = m.end()
        g = m.group(0)
        if g[0] == "." and not g.startswith(".."):
            j = m.start()
            k = max(text.rfind(" ", 0, j), text.rfind("\n", 0, j), text.rfind("\t", 0, j)) + 1
            if text[k:j].lower().strip("(\"'") in _ABBREV:
                continue
            q = end
            while q < n and text[q] in " \t":
                q += 1
            if q < n and text[q].islower():
                continue
        if end > start:
            out.append((start, end))
        start = end
    if start < n:
        out.append((start, n))
    return out


def sentence_of(bounds: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    lo, hi = 0, len(bounds) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        s, e = bounds[mid]
        if pos < s:
            hi = mid - 1
        elif pos >= e:
            lo = mid + 1
        else:
            return s, e
    return (0, 0) if not bounds else bounds[-1]


def words(text: str) -> set[str]:
    low = text.lower()
    if "’" in low:
        low = low.replace("’", "'")
    return set(WORD.findall(low))


def tokens(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    return [(start + m.start(), start + m.end(), m.group(0)) for m in _TOKEN.finditer(text[start:end])]


def strip_determiners(value: str) -> str:
    v = value.strip()
    low = v.lower()
    changed = True
    while changed and v:
        changed = False
        for ph in _LEADING_DET_PHRASES:
            if low.startswith(ph):
                v, low, changed = v[len(ph):].lstrip(), low[len(ph):].lstrip(), True
        first = low.split(" ", 1)[0]
        if first in _DETERMINERS and " " in v:
            v = v.split(" ", 1)[1].lstrip()
            low = v.lower()
            changed = True
    return v


def gerund(phrase: str, double: frozenset[str], adverbs: frozenset[str]) -> str:
    """The -ing form of a verb phrase: "run" → "running", "go swimming" → "swimming", "play guitar" →
    "playing guitar", "make pottery" → "making pottery"."""
    toks = phrase.split()
    while len(toks) > 1 and toks[0].lower() in adverbs:
        toks = toks[1:]
    if not toks:
        return phrase
    v = toks[0]
    low = v.lower()
    if low.endswith("ing") and len(low) > 4:
        return " ".join(toks)
    if low in ("be", "am", "is", "are"):
        g = "being"
    elif low in double:
        g = v + v[-1] + "ing"
    elif low.endswith("ie"):
        g = v[:-2] + "ying"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        g = v[:-1] + "ing"
    elif low.endswith("s") and not low.endswith("ss") and len(low) > 3:   # "runs" → "running"? keep simple
        base = v[:-1]
        g = base + (base[-1] + "ing" if base.lower() in double else "ing")
    else:
        g = v + "ing"
    return " ".join([g, *toks[1:]])


def trim_phrase(text: str, start: int, end: int, *, stop: frozenset[str], trailing: frozenset[str],
                cut_at: int | None = None, keep: frozenset[str] = frozenset(),
                allow_list: bool = False) -> tuple[int, int] | None:
    """Cut an object phrase [start, end) at the first stop word (after any leading determiners; "of" may join
    two content words; with ``allow_list``, "and"/"or" and commas may join items), at ``cut_at`` (a time mention
    inside it), and drop trailing filler words. Returns the new [start, end) or None if nothing is left."""
    if cut_at is not None and start < cut_at < end:
        end = cut_at
    toks = tokens(text, start, end)
    kept: list[tuple[int, int, str]] = []
    content = 0
    i = 0
    while i < len(toks):
        s, e, t = toks[i]
        low = t.lower().replace("’", "'").strip(".")
        if content == 0 and low in _DETERMINERS:
            kept.append((s, e, t))
            i += 1
            continue
        if low in keep:
            kept.append((s, e, t))
            content += 1
            i += 1
            continue
        if low in ("this", "that", "these", "those") and content and i + 1 < len(toks) and \
                toks[i + 1][2].lower() not in stop and toks[i + 1][2].lower() not in _DETERMINERS:
            kept.append((s, e, t))     # "dropped off that stuff": a determiner inside the phrase
            i += 1
            continue
        if low == "of" and content and i + 1 < len(toks) and toks[i + 1][2].lower() not in stop:
            kept.append((s, e, t))
            i += 1
            continue
        if allow_list and content and low in ("and", "or", "&"):
            kept.append((s, e, t))
            i += 1
            continue
        if low in stop:
            break
        if t.endswith(("-", "—", "–")) and len(t) > 1:   # "books- classics": a dash ends the phrase
            kept.append((s, e - 1, t[:-1]))
            content += 1
            break
        kept.append((s, e, t))
        content += 1
        # a comma right after this token ends the phrase unless items are being listed
        if not allow_list and e < len(text) and text[e:e + 1] in ",;:":
            break
        i += 1
    while kept and (kept[-1][2].lower().strip(".").replace("’", "'") in trailing
                    or kept[-1][2].lower() in _DANGLING or kept[-1][2].lower() in _DETERMINERS):
        kept.pop()
    if not kept or not any(t[2].lower() not in _DETERMINERS for t in kept):
        return None
    s, e = kept[0][0], kept[-1][1]
    while e > s and text[e - 1] in ".'’-&/":
        e -= 1
    return (s, e) if e > s else None


def split_list(text: str) -> list[str]:
    """Items of a coordinated phrase: "running and hiking", "French, German and Spanish"."""
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+", text)
    return [p.strip() for p in parts if p.strip()]
