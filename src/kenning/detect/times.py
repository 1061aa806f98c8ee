"""Time mentions (seed 001 §2A.7): pinned patterns, greedy non-overlapping selection, conservative resolution.

Each pattern has an id, a precedence (lower = stronger) and a confidence (the pinned scale, E16).
Absolute expressions ("2024-03-15", "March 15, 2024", "March 2024", "in 2021") resolve whatever the
message's timestamp quality. Relative ones ("yesterday", "last week", "3 days ago", "last Tuesday",
"the sunday before 25 May", a day and month without a year) resolve against the message's own
``created_at_utc`` only when its ``timestamp_quality`` is ``original``; otherwise they are stored
``unresolved`` with the reason. Calendar arithmetic happens in ``time.anchor_timezone`` and bounds are
stored in UTC. Semantics of each relative form: docs/decisions.md E15–E18.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from kenning.detect.scan import finditer_at, finditer_from
from kenning.detect.spans import Exclusions, surface_hash
from kenning.detect.cuewords import cue_ends, cue_words
# words a case-insensitive pattern matched are folded before lookups
from kenning.detect.textfold import first_digit, fold, fold_once
from kenning.sources.timestamps import format_utc

PATTERNS_VERSION = "2"  # 2: REL_IN/REL_UNIT no longer hidden by a too-narrow prefilter; matched words folded

_MON = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
        r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_MON_CI = "(?i:" + _MON + ")"
_MON_FULL = r"(?:January|February|March|April|June|July|August|September|October|November|December)"
_WD = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_WD_CI = "(?i:" + _WD + ")"
_ORD = r"(?:st|nd|rd|th)?"
_NUMWORD = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2}
_UNITS_AFTER = r"(?!\s*(?i:%|px|kb|mb|gb|tb|ms|km|kg|mi|lbs?|dollars|euros|usd|eur|users|people|items|rows|lines|words|" \
               r"times|calories|steps|points|tokens|bytes|records|pages|words)\b)"

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}


def _month(s: str) -> int:
    f = fold(s)
    return MONTHS[f if f in MONTHS else f[:3]]


# Every alternative of _MON starts with one of these (case-sensitive), every one of _MON_FULL|May is one of these.
_MON3 = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MON_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")
_WD_FOLDED = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASONS = ("spring", "summer", "autumn", "fall", "winter")

def _words(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(words) + ")"


# Shapes the patterns need in the text itself, each searched at most once per text (see Cues). Each is led by a
# literal or a digit or a capital, which re jumps to; the ISO one is the tail of \d{4}-\d{2}-\d{2}.
_DIGIT = re.compile(r"\d")
_SHAPES = {
    "four_digits": re.compile(r"\d\d\d\d"),
    "iso_date": re.compile(r"-\d\d-\d\d"),
    "year": re.compile(r"(?:19|20)\d\d"),                 # (?:19|20)\d{2}: ASCII digits, literally
    "colon": re.compile(":"),
    "slash_or_dot": re.compile(r"[/.]"),
    "month_abbr": re.compile("|".join(_MON3)),
    "month_name": re.compile("|".join(_MON_NAMES)),
    # DAY_MONTH's two forms, "March 5" and "5th of March", without the word boundaries and lookarounds
    "day_month": None,  # _DayMonthShape below
}
# The same two forms as one regex (kept as the definition tests compare _DayMonthShape with): its second branch
# opens with \d, which re cannot jump to, so searching it walked every text with a digit and a month abbreviation.
_DAY_MONTH_RX = re.compile(rf"{_words(_MON3)}[a-z]*\.?\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?{_words(_MON3)}")
_DAY_MONTH_FIRST = re.compile(rf"{_words(_MON3)}[a-z]*\.?\s+\d")
_MON3_AT = re.compile(_words(_MON3))
_ORDINALS = ("st", "nd", "rd", "th")


class _DayMonthShape:
    r"""``_DAY_MONTH_RX.search(text) is not None``, answered from the month abbreviations outward: "March 5" by a
    month-led regex re jumps to; "5th of March" by looking back from each abbreviation over whitespace, an
    optional "of" and whitespace, an optional ordinal, to a digit (``\s`` is str.isspace, ``\d`` str.isdecimal,
    as re defines them for text)."""

    @staticmethod
    def search(text: str) -> bool | None:
        if _DAY_MONTH_FIRST.search(text) is not None:
            return True
        for m in _MON3_AT.finditer(text):
            if _digit_before(text, _skip_space_back(text, m.start())):
                return True
            j = _skip_space_back(text, m.start())
            if j is not None and j >= 2 and text[j - 2:j] == "of" and _digit_before(text, _skip_space_back(text, j - 2)):
                return True
        return None


def _skip_space_back(text: str, end: int) -> int | None:
    """Where a run of one or more whitespace characters ending at ``end`` starts, or None if there is none."""
    j = end
    while j > 0 and text[j - 1].isspace():
        j -= 1
    return j if j < end else None


def _digit_before(text: str, end: int | None) -> bool:
    r"""Does ``\d(?:st|nd|rd|th)?`` end at ``end``?"""
    if end is None or end == 0:
        return False
    if text[end - 1].isdecimal():
        return True
    return end >= 3 and text[end - 2:end] in _ORDINALS and text[end - 3].isdecimal()


_SHAPES["day_month"] = _DayMonthShape
_DIGIT_LED = frozenset({"four_digits"})  # shapes whose every match begins with a digit
# A shape whose every match holds a match of another: "19xx"/"20xx" holds four digits; a full month name and both
# day-month forms hold a three-letter abbreviation. When the other is known absent, so is this one (no search).
_SHAPE_NEEDS = {"year": "four_digits", "month_name": "month_abbr", "day_month": "month_abbr"}


@dataclass(frozen=True, kw_only=True)
class Cues:
    """A cheap necessary condition for a pattern to match: what every one of its matches contains.

    Running 19 regexes over every text dominated stage 2A, yet most texts hold none of a pattern's cue words.
    A text without the cues cannot match, so skipping it changes no output. ``digit``: the match holds a
    decimal digit (most texts have none, so candidates() tests this first, once per text); ``shapes`` name
    entries of ``_SHAPES`` the text must contain (tested in order); ``folded`` groups of words are tested
    against the text's :func:`fold` (for the case-insensitive parts of a pattern), each group needing one
    member present.
    """

    digit: bool = False
    shapes: tuple[str, ...] = ()
    folded: tuple[tuple[str, ...], ...] = ()


class _TextFacts:
    """One text's folded copy and the answers to cue tests, computed on first use and shared by all patterns
    (several patterns ask for the same month names, weekdays or digit shapes).

    The folded cue words are looked up in one Aho–Corasick pass over the folded text (:mod:`kenning.detect.cuewords`),
    which reports every occurrence of every word — ``w in folded`` exactly — for a fraction of the cost of one
    substring scan per word (about forty words, several scanning a text end to end when absent)."""

    def __init__(self, text: str):
        self.text = text
        self.folded = fold_once(text)
        self.digit_at = first_digit(text)
        self.has_digit = self.digit_at >= 0
        self._memo: dict[Any, bool] = {}
        self._words: frozenset[str] | None = None

    def words(self) -> frozenset[str]:
        """The cue words (every word of every pattern's ``Cues.folded``) that occur in the folded text."""
        if self._words is None:
            self._words = cue_words(self.folded)
        return self._words

    def admit(self, cues: Cues) -> bool:
        if cues.digit and not self.has_digit:
            return False
        if cues.folded:  # set lookups once the words are known: before the shapes, some of which scan the text
            present = self.words()
            for words in cues.folded:
                if present.isdisjoint(words):
                    return False
        memo = self._memo
        for name in cues.shapes:
            found = memo.get(name)
            if found is None:
                if memo.get(_SHAPE_NEEDS.get(name)) is False:  # a shape holding one known absent: absent too
                    found = memo[name] = False
                else:
                    # a digit-led shape cannot begin before the text's first digit (N15)
                    if name in _DIGIT_LED:
                        found = self.digit_at >= 0 and _SHAPES[name].search(self.text, self.digit_at) is not None
                    else:
                        found = _SHAPES[name].search(self.text) is not None
                    memo[name] = found
            if not found:
                return False
        return True


@dataclass(frozen=True)
class StartWords:
    r"""Where a pattern's match can begin, from the cue-word pass's occurrences instead of a "starts" regex walking the
    folded text (N13): at every occurrence of one of ``words``, and at ``w`` of ``before`` wherever ``w`` then one
    or more whitespace characters (re's ``\s``: str.isspace) stand right before an occurrence of one of ``anchors``.
    Every word named must be in the cue vocabulary (kenning.detect.cuewords); tests/test_prefilters.py checks that
    these positions give finditer's matches."""

    words: tuple[str, ...]
    anchors: tuple[str, ...] = ()
    before: tuple[str, ...] = ()

    def positions(self, folded: str) -> list[int]:
        ends = cue_ends(folded)
        out = []
        for w in self.words:
            found = ends.get(w)
            if found:
                n = len(w) - 1
                out.extend(e - n for e in found)
        for a in self.anchors:
            found = ends.get(a)
            if not found:
                continue
            n = len(a) - 1
            for e in found:
                q = j = e - n
                while j > 0 and folded[j - 1].isspace():
                    j -= 1
                if j == q:
                    continue
                for b in self.before:
                    k = j - len(b)
                    if k >= 0 and folded.startswith(b, k):
                        out.append(k)
        out.sort()
        return out


@dataclass(frozen=True)
class Pattern:
    pattern_id: str
    precedence: int
    confidence: float
    regex: re.Pattern
    relative: bool
    cues: Cues
    group: int = 0          # which group is the span (0 = whole match)
    # A literal-led regex matching the folded text wherever a match can begin: the pattern is then tried only
    # there (scan.finditer_at), not at every position of a text that passed the cues.
    starts: re.Pattern | None = None
    at: StartWords | None = None  # or where the cue-word pass says a match can begin (N13)


_WD_RX = _words(_WD_FOLDED)
_MON3_RX = _words(tuple(m.lower() for m in _MON3))
_MON_NAMES_RX = _words(tuple(m.lower() for m in _MON_NAMES))
_REL_UNITS_RX = r"(?:day|week|month|year)"


def build_patterns(bare_year_confidence: float) -> list[Pattern]:
    P, C = Pattern, Cues
    pats = [
        P("ISO_DATETIME", 10, 0.95, re.compile(
            r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?"
            r"(?![\d:])"), False, C(digit=True, shapes=("iso_date", "colon")),
          starts=re.compile(r"\d{4}-\d\d-\d\d[t ]\d\d:")),
        P("WEEKDAY_REL_DATE", 12, 0.8, re.compile(
            rf"\b(?:(?i:the)\s+)?({_WD_CI})\s+(?i:(before|after))\s+(?:(?i:the)\s+)?"
            rf"(?:(\d{{1,2}}){_ORD}\s+(?:(?i:of)\s+)?({_MON_CI})|({_MON_CI})\s+(\d{{1,2}}){_ORD})(?:,?\s+(\d{{4}}))?\b"),
          True, C(digit=True, folded=(("before", "after"), _WD_FOLDED)),
          at=StartWords(_WD_FOLDED, _WD_FOLDED, ("the",))),
        P("ISO_DATE", 20, 0.95, re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-]|:\d)"), False,
          C(digit=True, shapes=("iso_date",)), starts=re.compile(r"\d{4}-\d\d-\d\d")),
        P("NAMED_DATE_MDY", 20, 0.9, re.compile(
            rf"\b({_MON})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})(?!\d)"), False,
          C(digit=True, shapes=("four_digits", "month_abbr"))),
        P("NAMED_DATE_DMY", 20, 0.9, re.compile(
            rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MON})\.?,?\s+(\d{{4}})(?!\d)"), False,
          C(digit=True, shapes=("four_digits", "month_abbr"))),
        P("NUMERIC_DATE", 25, 0.7, re.compile(r"(?<![\d/.-])(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?![\d/-]|\.\d)"),
          False, C(digit=True, shapes=("four_digits", "slash_or_dot")), starts=re.compile(r"\d\d?[/.]\d\d?[/.]\d{4}")),
        P("DAY_MONTH", 26, 0.7, re.compile(
            rf"\b(?:({_MON_FULL}|(?<=\s)May|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?\s+(\d{{1,2}}){_ORD}"
            rf"|(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MON}))\b(?!,?\s*\d)"), True,
          C(digit=True, shapes=("month_abbr", "day_month"))),
        P("MONTH_YEAR", 30, 0.9, re.compile(rf"\b({_MON})\.?(?:\s+of)?,?\s+(\d{{4}})(?!\d)"), False,
          C(digit=True, shapes=("four_digits", "month_abbr"))),
        P("SEASON_YEAR", 32, 0.75, re.compile(r"\b(?i:(spring|summer|autumn|fall|winter))(?:\s+of)?\s+(\d{4})(?!\d)"),
          False, C(digit=True, shapes=("four_digits",), folded=(_SEASONS,)),
          starts=re.compile(rf"{_words(_SEASONS)}(?:\s+of)?\s+\d{{4}}")),
        P("PART_YEAR", 34, 0.6, re.compile(r"\b(?i:(early|mid|late))[\s-]+(\d{4})(?!\d)"), False,
          C(digit=True, shapes=("four_digits",), folded=(("early", "mid", "late"),)),
          starts=re.compile(r"(?:early|mid|late)[\s-]+\d{4}")),
        P("YEAR_CUED", 40, 0.8, re.compile(
            r"\b(?i:(back\s+in|in|since|during|by|until|till|from|before|after|around|circa|through|throughout))\s+"
            r"((?:19|20)\d{2})(?![\w%]|[.,:/-]\d)" + _UNITS_AFTER), False, C(digit=True, shapes=("year",)),
          group=2, starts=re.compile(r"(?:back\s+in|in|since|during|by|until|till|from|before|after|around|circa"
                                     r"|through|throughout)\s+(?:19|20)\d\d")),
        P("REL_AGO", 45, 0.8, re.compile(
            r"(?i)\b(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of|"
            r"a\s+few|few|several)\s+(minute|hour|day|week|month|year)s?\s+ago\b"), True, C(folded=(("ago",),))),
        P("REL_IN", 46, 0.75, re.compile(
            r"(?i)\bin\s+(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of)"
            r"\s+(day|week|month|year)s?(?:'s?\s+time)?\b"), True, C(folded=(("day", "week", "month", "year"),)),
          starts=re.compile(rf"in\s+(?:\d|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\S*\s+"
                            rf"{_REL_UNITS_RX}|in\s+a\s+couple\s+of\s+{_REL_UNITS_RX}")),
        P("REL_DAY", 50, 0.9, re.compile(
            r"(?i)\b(the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|tomorrow|tonight|"
            r"this\s+morning|this\s+afternoon|this\s+evening|last\s+night)\b"), True,
          C(folded=(("yesterday", "today", "tomorrow", "tonight", "morning", "afternoon", "evening", "night"),)),
          at=StartWords(("yesterday", "today", "tomorrow", "tonight", "this", "last"), ("day",), ("the",))),
        P("REL_UNIT", 50, 0.85, re.compile(r"(?i)\b(last|next|this|previous|coming)\s+(week|month|year|weekend)\b"),
          True, C(folded=(("week", "month", "year"), ("last", "next", "this", "previous", "coming"))),
          at=StartWords(("last", "next", "this", "previous", "coming"))),
        P("REL_WEEKDAY", 52, 0.8, re.compile(rf"\b(?:(?i:(last|next|this|coming|on))\s+)?({_WD_CI})(s?)\b"), True,
          C(folded=(_WD_FOLDED,)), at=StartWords(_WD_FOLDED, _WD_FOLDED, ("last", "next", "this", "coming", "on"))),
        P("REL_MONTH", 54, 0.8, re.compile(rf"\b(?i:(last|next|this))\s+({_MON_FULL}|May)\b"), True,
          C(shapes=("month_abbr", "month_name"), folded=(("last", "next", "this"),)),
          starts=re.compile(rf"(?:last|next|this)\s+{_MON_NAMES_RX}")),
        P("MONTH_BARE", 80, 0.4, re.compile(rf"\b({_MON_FULL}|(?:(?<=\bin )|(?<=\bof )|(?<=since )|(?<=until )|(?<=\bby ))May)\b(?!\s*\d)"),
          True, C(shapes=("month_abbr", "month_name")), starts=re.compile(_MON_NAMES_RX)),
    ]
    if bare_year_confidence > 0:
        pats.append(P("YEAR_BARE", 90, bare_year_confidence, re.compile(
            r"(?<![\w$#£€.,:/+-])((?:19|20)\d{2})(?![\w%]|[.,/-]\d|:\w|s\b)" + _UNITS_AFTER), False,
            C(digit=True, shapes=("year",)), starts=_SHAPES["year"]))
    return pats


@dataclass(frozen=True)
class TimeCandidate:
    start: int
    end: int
    pattern: Pattern
    match: re.Match
    surface: str
    shash: str

    def sort_key(self) -> tuple:
        return (-(self.end - self.start), self.pattern.precedence, -self.pattern.confidence, self.start, -self.end,
                self.shash)


# ---------------------------------------------------------------------------------------------------------
# calendar helpers (all in the anchor timezone; results in UTC text)

def parse_stored_utc(s: str) -> dt.datetime:
    """``timestamps.parse_utc`` for the stored form ``YYYY-MM-DDTHH:MM:SS.sssZ``, through datetime.fromisoformat
    (Python 3.11 reads the "Z"), some forty times faster than strptime; equal results are tested."""
    return dt.datetime.fromisoformat(s)


def _utc(d: dt.datetime) -> str:
    return format_utc(d)


def _day_start(day: dt.date, tz: dt.tzinfo) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=tz)


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    k = year * 12 + (month - 1) + n
    return k // 12, k % 12 + 1


def _interval(a: dt.datetime, b: dt.datetime, gran: str) -> dict:
    return {"resolved_type": "interval", "valid_from_utc": _utc(a), "valid_to_utc": _utc(b),
            "resolution_granularity": gran}


def day_interval(day: dt.date, tz) -> dict:
    return _interval(_day_start(day, tz), _day_start(day + dt.timedelta(days=1), tz), "day")


def month_interval(year: int, month: int, tz, months: int = 1) -> dict:
    ny, nm = _add_months(year, month, months)
    return _interval(dt.datetime(year, month, 1, tzinfo=tz), dt.datetime(ny, nm, 1, tzinfo=tz), "month")


def year_interval(year: int, tz) -> dict:
    return _interval(dt.datetime(year, 1, 1, tzinfo=tz), dt.datetime(year + 1, 1, 1, tzinfo=tz), "year")


def week_interval(day: dt.date, tz) -> dict:
    monday = day - dt.timedelta(days=day.weekday())
    return _interval(_day_start(monday, tz), _day_start(monday + dt.timedelta(days=7), tz), "week")


def _unresolved(reason: str, **extra: Any) -> dict:
    return {"resolved_type": "unresolved", "valid_from_utc": None, "valid_to_utc": None,
            "resolution_granularity": None, "reason": reason, **extra}


def _num(s: str) -> int | None:
    s = re.sub(r"\s+", " ", fold(s))
    if s.isdigit():
        return int(s)
    return _NUMWORD.get(s)


@lru_cache(maxsize=4096)
def _dateparser_read(surface: str) -> str | None:
    import dateparser

    try:
        # Only absolute surfaces are cross-checked; a fixed base and no relative parser keep a missing part
        # from being filled in from datetime.now() (H1: the stored reading must not depend on the import's clock)
        d = dateparser.parse(surface, languages=["en"],
                             settings={"PREFER_DAY_OF_MONTH": "first", "REQUIRE_PARTS": ["year"],
                                       "RETURN_AS_TIMEZONE_AWARE": False,
                                       "RELATIVE_BASE": dt.datetime(2000, 1, 1),
                                       "PARSERS": ["custom-formats", "absolute-time"]})
    except Exception:
        return None
    return None if d is None else d.date().isoformat()


# ---------------------------------------------------------------------------------------------------------

class TimeResolver:
    def __init__(self, anchor_timezone: str, *, dateparser_crosscheck: bool, disagreement_factor: float):
        self.tz_name = anchor_timezone
        self.tz = ZoneInfo(anchor_timezone) if anchor_timezone.upper() != "UTC" else dt.timezone.utc
        self.crosscheck = dateparser_crosscheck
        self.factor = disagreement_factor

    def resolve(self, c: TimeCandidate, anchor_utc: str | None, quality: str) -> tuple[dict, float]:
        """(resolution, confidence) for one selected candidate; the resolution dict goes to raw_parse_json."""
        p, g = c.pattern, c.match.groups()
        conf = p.confidence
        anchor_local = None
        if p.relative:
            if anchor_utc is None:
                return _unresolved("ANCHOR_MISSING"), conf
            if quality != "original":
                return _unresolved("ANCHOR_NOT_ORIGINAL", timestamp_quality=quality), conf
            anchor_local = parse_stored_utc(anchor_utc).astimezone(self.tz)
        try:
            res, conf = self._resolve(p.pattern_id, g, anchor_local, conf, c.surface)
        except (ValueError, OverflowError) as e:
            return _unresolved("INVALID_DATE", error=str(e)), conf
        return res, conf

    def _resolve(self, pid: str, g: tuple, anchor: dt.datetime | None, conf: float, surface: str) -> tuple[dict, float]:
        tz = self.tz
        if pid == "ISO_DATETIME":
            y, mo, d, hh, mm, ss, off = g
            base = dt.datetime(int(y), int(mo), int(d), int(hh), int(mm), int(ss or 0))
            if off:
                if off == "Z":
                    aware = base.replace(tzinfo=dt.timezone.utc)
                else:
                    sign = 1 if off[0] == "+" else -1
                    digits = off[1:].replace(":", "")
                    aware = base.replace(tzinfo=dt.timezone(sign * dt.timedelta(hours=int(digits[:2]),
                                                                                minutes=int(digits[2:]))))
            else:
                aware = base.replace(tzinfo=tz)
            return {"resolved_type": "instant", "valid_from_utc": _utc(aware), "valid_to_utc": None,
                    "resolution_granularity": "minute", "explicit_offset": off}, conf
        if pid == "ISO_DATE":
            return day_interval(dt.date(int(g[0]), int(g[1]), int(g[2])), tz), conf
        if pid in ("NAMED_DATE_MDY", "NAMED_DATE_DMY"):
            if pid == "NAMED_DATE_MDY":
                mon, day, year = g
            else:
                day, mon, year = g
            d = dt.date(int(year), _month(mon), int(day))
            res = day_interval(d, tz)
            return self._crosscheck(res, surface, d.isoformat(), conf)
        if pid == "NUMERIC_DATE":
            a, sep, b, year = int(g[0]), g[1], int(g[2]), int(g[3])
            if sep == ".":
                return {**day_interval(dt.date(year, b, a), tz), "order": "DMY"}, conf
            if a > 12 and b <= 12:
                return {**day_interval(dt.date(year, b, a), tz), "order": "DMY"}, conf
            if b > 12 and a <= 12:
                return {**day_interval(dt.date(year, a, b), tz), "order": "MDY"}, conf
            if a == b:
                return {**day_interval(dt.date(year, a, b), tz), "order": "either"}, conf
            return _unresolved("AMBIGUOUS_DAY_MONTH_ORDER", readings=[f"{year}-{a:02d}-{b:02d}",
                                                                       f"{year}-{b:02d}-{a:02d}"]), conf
        if pid == "MONTH_YEAR":
            res = month_interval(int(g[1]), _month(g[0]), tz)
            return self._crosscheck(res, surface, f"{int(g[1]):04d}-{_month(g[0]):02d}-01", conf)
        if pid == "SEASON_YEAR":
            season, year = fold(g[0]), int(g[1])
            start_month = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}[season]
            res = month_interval(year, start_month, tz, months=3)
            return {**res, "season": season, "hemisphere": "northern"}, conf * (0.8 if season == "winter" else 1.0)
        if pid == "PART_YEAR":
            part, year = fold(g[0]), int(g[1])
            start = {"early": 1, "mid": 5, "late": 9}[part]
            return {**month_interval(year, start, tz, months=4), "part": part}, conf
        if pid in ("YEAR_CUED", "YEAR_BARE"):
            year = int(g[-1])
            res = year_interval(year, tz)
            if pid == "YEAR_CUED":
                res["cue"] = re.sub(r"\s+", " ", fold(g[0]))
            return res, conf
        # ---- relative: anchor is the message time in the anchor timezone
        assert anchor is not None
        today = anchor.date()
        if pid == "REL_DAY":
            w = re.sub(r"\s+", " ", fold(g[0]))
            offset = {"the day before yesterday": -2, "yesterday": -1, "today": 0, "tonight": 0, "this morning": 0,
                      "this afternoon": 0, "this evening": 0, "tomorrow": 1, "the day after tomorrow": 2,
                      "last night": -1}[w]
            return {**day_interval(today + dt.timedelta(days=offset), tz), "offset_days": offset}, \
                conf * (0.8 if w == "last night" else 1.0)
        if pid in ("REL_AGO", "REL_IN"):
            n = _num(g[0])
            unit = fold(g[1])
            if n is None:
                return _unresolved("VAGUE_QUANTITY", quantity=g[0]), 0.5
            sign = -1 if pid == "REL_AGO" else 1
            if unit in ("minute", "hour"):
                delta = dt.timedelta(minutes=n) if unit == "minute" else dt.timedelta(hours=n)
                return {"resolved_type": "instant", "valid_from_utc": _utc(anchor + sign * delta),
                        "valid_to_utc": None, "resolution_granularity": "minute"}, conf
            if unit == "day":
                return day_interval(today + dt.timedelta(days=sign * n), tz), conf
            if unit == "week":
                return week_interval(today + dt.timedelta(days=sign * 7 * n), tz), conf * 0.8
            if unit == "month":
                y, m = _add_months(today.year, today.month, sign * n)
                return month_interval(y, m, tz), conf * 0.8
            return year_interval(today.year + sign * n, tz), conf * 0.8
        if pid == "REL_UNIT":
            mod, unit = fold(g[0]), fold(g[1])
            step = {"last": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[mod]
            if unit == "week":
                return week_interval(today + dt.timedelta(days=7 * step), tz), conf
            if unit == "weekend":
                monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7 * step)
                sat = monday + dt.timedelta(days=5)
                return {**_interval(_day_start(sat, tz), _day_start(sat + dt.timedelta(days=2), tz), "day"),
                        "weekend": True}, conf
            if unit == "month":
                y, m = _add_months(today.year, today.month, step)
                return month_interval(y, m, tz), conf
            return year_interval(today.year + step, tz), conf
        if pid == "REL_WEEKDAY":
            mod, wd, plural = fold(g[0] or ""), WEEKDAYS[fold(g[1])], g[2]
            if plural:
                return _unresolved("HABITUAL_WEEKDAY", weekday=g[1]), 0.4
            if mod in ("", "on"):
                return _unresolved("WEEKDAY_DIRECTION_UNKNOWN", weekday=g[1]), 0.5
            if mod == "last":
                back = (today.weekday() - wd) % 7 or 7
                day = today - dt.timedelta(days=back)
            elif mod in ("next", "coming"):
                fwd = (wd - today.weekday()) % 7 or 7
                day = today + dt.timedelta(days=fwd)
            else:  # this: the one in the anchor's ISO week
                day = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=wd)
            return day_interval(day, tz), conf
        if pid == "REL_MONTH":
            mod, mon = fold(g[0]), _month(g[1])
            if mod == "this":
                return month_interval(today.year, mon, tz), conf
            if mod == "last":
                year = today.year if mon < today.month else today.year - 1
            else:
                year = today.year if mon > today.month else today.year + 1
            return month_interval(year, mon, tz), conf
        if pid == "MONTH_BARE":
            return _unresolved("MONTH_WITHOUT_YEAR", month=g[0]), conf
        if pid == "DAY_MONTH":
            if g[0]:
                mon, day = g[0], g[1]
            else:
                day, mon = g[2], g[3]
            d = dt.date(today.year, _month(mon), int(day))
            return {**day_interval(d, tz), "year_from_anchor": today.year}, conf
        if pid == "WEEKDAY_REL_DATE":
            wd_name, rel, d1, m1, m2, d2, year = g
            day_n, mon = (d1, m1) if d1 else (d2, m2)
            y = int(year) if year else today.year
            ref = dt.date(y, _month(mon), int(day_n))
            wd = WEEKDAYS[fold(wd_name)]
            if fold(rel) == "before":
                back = (ref.weekday() - wd) % 7 or 7
                day = ref - dt.timedelta(days=back)
            else:
                fwd = (wd - ref.weekday()) % 7 or 7
                day = ref + dt.timedelta(days=fwd)
            return {**day_interval(day, tz), "reference_date": ref.isoformat(),
                    "year_from_anchor": None if year else today.year}, conf
        return _unresolved("NO_RESOLVER"), conf

    def _crosscheck(self, res: dict, surface: str, expected: str, conf: float) -> tuple[dict, float]:
        if not self.crosscheck:
            return res, conf
        read = _dateparser_read(surface)
        if read == expected:
            return {**res, "dateparser": "agree"}, conf
        return {**res, "dateparser": {"disagree": read}}, conf * self.factor


# ---------------------------------------------------------------------------------------------------------

@dataclass
class TimeMention:
    start: int
    end: int
    surface: str
    surface_hash: str
    pattern_id: str
    precedence: int
    confidence: float
    resolution: dict
    overlapped: list
    relative: bool


class TimeDetector:
    def __init__(self, config: Any):
        tcfg = config.entities.time_mentions
        self.patterns = build_patterns(tcfg.bare_year_confidence)
        self.resolver = TimeResolver(config.time.anchor_timezone, dateparser_crosscheck=tcfg.dateparser_crosscheck,
                                     disagreement_factor=tcfg.dateparser_disagreement_factor)
        self.version = {"patterns": PATTERNS_VERSION, "ids": [p.pattern_id for p in self.patterns]}

    def candidates(self, text: str) -> list[TimeCandidate]:
        out = []
        facts = _TextFacts(text)
        for p in self.patterns:
            if p.cues.digit and not facts.has_digit or not facts.admit(p.cues):  # the first test saves a call
                continue
            if p.at is not None:
                found = finditer_from(p.regex, text, p.at.positions(facts.folded))
            elif p.starts is not None:
                found = finditer_at(p.regex, text, p.starts, facts.folded)
            else:
                found = p.regex.finditer(text)
            for m in found:
                s, e = m.span(p.group)
                if e > s:
                    out.append(TimeCandidate(s, e, p, m, text[s:e], surface_hash(text[s:e])))
        return out

    def detect(self, text: str, exclusions: Exclusions, anchor_utc: str | None, quality: str,
               stats: dict, cands: list[TimeCandidate] | None = None) -> list[TimeMention]:
        """The time mentions of a text; ``cands`` may hold its ``candidates(text)``, computed before (and not
        changed here: the stage reuses them for a repeated text)."""
        if cands is None:
            cands = self.candidates(text)
        if not cands:
            return []
        kept = []
        for c in cands:
            if exclusions and exclusions.hit(c.start, c.end):
                stats["time_candidates_excluded"] = stats.get("time_candidates_excluded", 0) + 1
                continue
            kept.append(c)
        kept.sort(key=TimeCandidate.sort_key)
        winners: list[tuple[TimeCandidate, list]] = []
        for c in kept:
            clash = next((w for w in winners if c.start < w[0].end and w[0].start < c.end), None)
            if clash is not None:
                clash[1].append([c.pattern.pattern_id, c.start, c.end])
                stats["time_candidates_overlapped"] = stats.get("time_candidates_overlapped", 0) + 1
                continue
            winners.append((c, []))
        out = []
        for c, lost in sorted(winners, key=lambda w: w[0].start):
            res, conf = self.resolver.resolve(c, anchor_utc, quality)
            out.append(TimeMention(c.start, c.end, c.surface, c.shash, c.pattern.pattern_id, c.pattern.precedence,
                                   round(min(1.0, max(0.0, conf)), 6), res, lost, c.pattern.relative))
        return out
