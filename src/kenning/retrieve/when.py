"""Time expressions → date intervals, relative to an anchor (the question date, or a turn's session date).

Used on both sides of retrieval: a query's "in May 2023" / "last summer" / "two weeks ago" selects turns
from that time; a turn's "yesterday" / "last Friday" / "the week before" resolved against its session date
is the time Kenning gives the event it tells (LoCoMo temporal accuracy). Issue 4's time detection will
store resolved expressions per message; :func:`resolve_text` is the rule set used until then.
Absolute dates are read with dateparser; relative phrases by the rules below (R8).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

D = dt.date
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}
_WEEKDAYS = {d: i for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                         "sunday"])}
_WD_SHORT = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2, "few": 3, "a few": 3,
        "several": 3}
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}


@dataclass(frozen=True)
class Interval:
    start: D            # first day, inclusive
    end: D              # last day, inclusive
    text: str           # the words it was read from
    granularity: str    # day | weekend | week | month | season | year | span

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def mid(self) -> D:
        return self.start + dt.timedelta(days=(self.end - self.start).days // 2)

    def contains(self, d: D) -> bool:
        return self.start <= d <= self.end

    def as_dict(self) -> dict:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "text": self.text,
                "granularity": self.granularity}


def _month_end(y: int, m: int) -> D:
    return (D(y + (m == 12), m % 12 + 1, 1) - dt.timedelta(days=1))


def month(y: int, m: int, text: str) -> Interval:
    return Interval(D(y, m, 1), _month_end(y, m), text, "month")


def year(y: int, text: str) -> Interval:
    return Interval(D(y, 1, 1), D(y, 12, 31), text, "year")


def day(d: D, text: str) -> Interval:
    return Interval(d, d, text, "day")


def week_before(a: D, text: str, weeks: int = 1) -> Interval:
    return Interval(a - dt.timedelta(days=7 * weeks), a - dt.timedelta(days=7 * (weeks - 1) + 1), text, "week")


def week_of(a: D, text: str) -> Interval:
    start = a - dt.timedelta(days=a.weekday())
    return Interval(start, start + dt.timedelta(days=6), text, "week")


def weekend_before(a: D, text: str, n: int = 1) -> Interval:
    """The n-th Saturday–Sunday wholly before ``a``."""
    sat = a - dt.timedelta(days=(a.weekday() - 5) % 7 or 7)
    if sat + dt.timedelta(days=1) >= a:
        sat -= dt.timedelta(days=7)
    sat -= dt.timedelta(days=7 * (n - 1))
    return Interval(sat, sat + dt.timedelta(days=1), text, "weekend")


def weekend_after(a: D, text: str) -> Interval:
    sat = a + dt.timedelta(days=(5 - a.weekday()) % 7 or 7)
    return Interval(sat, sat + dt.timedelta(days=1), text, "weekend")


def weekday_before(a: D, wd: int, text: str) -> Interval:
    return day(a - dt.timedelta(days=(a.weekday() - wd) % 7 or 7), text)


def weekday_after(a: D, wd: int, text: str) -> Interval:
    return day(a + dt.timedelta(days=(wd - a.weekday()) % 7 or 7), text)


def season(y: int, name: str, text: str) -> Interval:
    a, b = _SEASONS[name]
    if name == "winter":
        return Interval(D(y, 12, 1), _month_end(y + 1, 2), text, "season")
    return Interval(D(y, a, 1), _month_end(y, b), text, "season")


def _num(s: str) -> int | None:
    s = s.strip().lower()
    if s.isdigit():
        return int(s)
    return _NUM.get(s)


def _month_no(s: str) -> int | None:
    s = s.strip().lower().rstrip(".")
    if len(s) < 3:
        return None
    m = _MONTHS.get(s[:3])
    # "mar" must not match "march" only by prefix of unrelated words ("market"): require a month word
    if m is None or not re.fullmatch(r"(jan(uary|u?a?r?t?y)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|"
                                     r"aug(ust)?|sep(t|tember)?|oct(ober)?|nov(ember)?|dec(ember)?)", s):
        return None
    return m


_MONTH_RE = (r"(?:jan(?:uary|ury|uarty)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
             r"sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WD_RE = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
_NUM_RE = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|couple of|a few|few|several)"
# An absolute date: "8 May, 2023", "May 8, 2023", "8 May 2023", "May 8th", "21Janury, 2022"
_ABS_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:of\s+)?({_MONTH_RE})\.?,?\s*(\d{{4}})?\b", re.I)
_ABS_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s*(\d{{4}}))?\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s*(?:of\s+)?(\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|by|of|early|late|mid|this|last|next)\s+(?:-\s*)?({_MONTH_RE})\b", re.I)
_SEASON_RE = re.compile(r"\b(?:(last|this|next|the)\s+)?(spring|summer|fall|autumn|winter)(?:\s+(?:of\s+)?(\d{4}))?\b",
                        re.I)


# A part of a month named just before it: "early June", "the beginning of November 2022", "the second week of
# November", "the first half of September 2022" (query side, R36)
_PART_BEFORE = re.compile(r"\b(early|mid|late|(?:beginning|start|middle|end)\s+of|"
                          r"(?:first|second|third|fourth|last)\s+(?:week|half)\s+of)\s*-?\s*(?:the\s+)?$", re.I)


def part_of_month(y: int, mo: int, part: str, text: str) -> Interval:
    """The days of month ``mo`` that ``part`` names: early / beginning of → 1–10, mid / middle of → 11–20, late /
    end of → 21–end, first…fourth week of → days 1–7 … 22–28, last week of → the last 7 days, first / second half
    of → 1–15 / 16–end."""
    p = " ".join(part.lower().split())
    last = _month_end(y, mo).day
    if p.startswith(("first week", "second week", "third week", "fourth week")):
        n = ("first", "second", "third", "fourth").index(p.split()[0])
        return Interval(D(y, mo, 7 * n + 1), D(y, mo, 7 * n + 7), text, "week")
    if p.startswith("last week"):
        return Interval(D(y, mo, last - 6), D(y, mo, last), text, "week")
    a, b = ((1, 15) if p.startswith("first half") else (16, last) if p.startswith("second half") else
            (1, 10) if p.startswith(("early", "beginning", "start")) else
            (11, 20) if p.startswith(("mid", "middle")) else (21, last))
    return Interval(D(y, mo, a), D(y, mo, b), text, "span")


@lru_cache(maxsize=4096)
def parse_date(text: str, anchor_year: int | None = None, base: D | None = None) -> D | None:
    """An absolute calendar date in ``text`` ("8 May, 2023", "May 8 2023"); without a year, ``anchor_year``.
    A relative phrase dateparser still reads ("2 days ago") resolves against ``base`` (the day it was said), never
    the real clock; without a base it is not read at all (H1)."""
    m = _ABS_DMY.search(text)
    if m:
        mo = _month_no(m.group(2))
        y = int(m.group(3)) if m.group(3) else anchor_year
        if mo and y:
            try:
                return D(y, mo, int(m.group(1)))
            except ValueError:
                pass
    m = _ABS_MDY.search(text)
    if m:
        mo = _month_no(m.group(1))
        y = int(m.group(3)) if m.group(3) else anchor_year
        if mo and y:
            try:
                return D(y, mo, int(m.group(2)))
            except ValueError:
                pass
    if not any(c.isdigit() for c in text):
        # A year needs digits (REQUIRE_PARTS), so without any dateparser can only answer with a date relative to
        # the real clock ("yesterday", "a week ago") — not the absolute date asked for, and not reproducible — and
        # importing it costs a one-shot search ~0.2 s of start-up (issue 24 §4; decisions F9)
        return None
    import dateparser  # slow to import; only reached for unusual forms

    settings = {"STRICT_PARSING": True, "REQUIRE_PARTS": ["day", "month", "year"],
                # dateparser reads "2 days ago" / "in 3 weeks" against datetime.now() unless given a base: the
                # stored event date would then depend on when the import ran (H1)
                "RELATIVE_BASE": dt.datetime(*(base or D(2000, 1, 1)).timetuple()[:3])}
    if base is None:
        settings["PARSERS"] = ["custom-formats", "absolute-time"]
    d = dateparser.parse(text, settings=settings, languages=["en"])
    return d.date() if d else None


def _nearest_month(a: D, mo: int, future: bool) -> int:
    """The year of month ``mo`` nearest the anchor: this year's, unless it lies on the wrong side."""
    if future:
        return a.year if mo >= a.month else a.year + 1
    return a.year if mo <= a.month else a.year - 1


# Relative phrases, most specific first. Each: (regex, builder(anchor, match) -> Interval | None)
def _rules():
    R = []

    def rule(pattern):
        def deco(fn):
            R.append((re.compile(pattern, re.I), fn))
            return fn
        return deco

    @rule(r"\b(?:the\s+)?(week|weekend|month|year)\s+(before|after|of)\s+(.{4,40})")
    def _relative_to_date(a, m):
        d = parse_date(m.group(3), a.year, a)
        if d is None:
            return None
        unit, rel, t = m.group(1).lower(), m.group(2).lower(), m.group(0)
        if unit == "week":
            return week_before(d, t) if rel == "before" else (week_of(d, t) if rel == "of" else
                                                               Interval(d + dt.timedelta(1), d + dt.timedelta(7), t, "week"))
        if unit == "weekend":
            return weekend_before(d, t) if rel == "before" else (weekend_after(d, t) if rel == "after" else
                                                                  weekend_after(d - dt.timedelta(days=3), t))
        if unit == "month":
            if rel == "before":
                pm = d.replace(day=1) - dt.timedelta(days=1)
                return month(pm.year, pm.month, t)
            return month(d.year, d.month, t)
        return year(d.year - 1 if rel == "before" else d.year, t)

    @rule(rf"\b(?:the\s+)?({_WD_RE})\s+(before|after|of)\s+(.{{4,40}})")
    def _weekday_rel_date(a, m):
        d = parse_date(m.group(3), a.year, a)
        wd = _weekday(m.group(1))
        if d is None or wd is None:
            return None
        rel = m.group(2).lower()
        return weekday_before(d, wd, m.group(0)) if rel != "after" else weekday_after(d, wd, m.group(0))

    @rule(rf"\b({_NUM_RE})\s+(weekends?|weeks?|days?|months?)\s+before\s+(.{{4,40}})")
    def _n_before_date(a, m):
        d = parse_date(m.group(3), a.year, a)
        n = _num(m.group(1))
        if d is None or n is None:
            return None
        return _ago(d, n, m.group(2).lower(), m.group(0))

    @rule(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+of\b|\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))")
    def _on_the_nth(a, m):
        """"on the 15th" (no month): the latest such day on or before the anchor."""
        n = int(m.group(1))
        if not 1 <= n <= 31:
            return None
        y, mo = a.year, a.month
        for _ in range(3):
            if n <= _month_end(y, mo).day and D(y, mo, n) <= a:
                return day(D(y, mo, n), m.group(0))
            y, mo = (y, mo - 1) if mo > 1 else (y - 1, 12)
        return None

    @rule(rf"\b(?:been|'ve)\b[^.?!]{{0,40}}?\bfor\s+(?:about|almost|nearly|around|roughly|over|more than|"
          rf"just under|just over)?\s*({_NUM_RE})\s+(months?|years?)(?:\s+now)?\b")
    def _for_n_now(a, m):
        """"I've been playing for about four months (now)": it started N months/years before the anchor."""
        n = _num(m.group(1))
        return _ago(a, n, m.group(2).lower(), m.group(0)) if n else None

    @rule(r"\b(yesterday|last night)\b")
    def _yesterday(a, m):
        return day(a - dt.timedelta(days=1), m.group(0))

    @rule(r"\b(today|tonight|this morning|this afternoon|this evening|earlier today|just now)\b")
    def _today(a, m):
        return day(a, m.group(0))

    @rule(r"\b(tomorrow)\b")
    def _tomorrow(a, m):
        return day(a + dt.timedelta(days=1), m.group(0))

    @rule(r"\bday before yesterday\b")
    def _dby(a, m):
        return day(a - dt.timedelta(days=2), m.group(0))

    @rule(rf"\b({_NUM_RE})\s+(weekends?|weeks?|days?|months?|years?)\s+ago\b")
    def _n_ago(a, m):
        n = _num(m.group(1))
        return _ago(a, n, m.group(2).lower(), m.group(0)) if n else None

    @rule(r"\b(last|past|this past|previous)\s+(weekend)\b")
    def _last_weekend(a, m):
        return weekend_before(a, m.group(0))

    @rule(r"\b(this|next|upcoming|coming)\s+(weekend)\b")
    def _this_weekend(a, m):
        return weekend_after(a - dt.timedelta(days=1), m.group(0))

    @rule(rf"\b(?:last|this past|past|on|this)\s+({_WD_RE})\b")
    def _last_wd(a, m):
        wd = _weekday(m.group(1))
        if wd is None:
            return None
        if m.group(0).lower().startswith("this ") and not m.group(0).lower().startswith("this past"):
            return None
        return weekday_before(a, wd, m.group(0))

    @rule(rf"\bnext\s+({_WD_RE})\b")
    def _next_wd(a, m):
        wd = _weekday(m.group(1))
        return weekday_after(a, wd, m.group(0)) if wd is not None else None

    @rule(rf"\b(last|past|previous)\s+week\b(?!\s+of\s+(?:the\s+month\s+of\s+)?{_MONTH_RE}\b)")
    def _last_week(a, m):
        return week_before(a, m.group(0))

    @rule(r"\b(this|earlier this)\s+week\b")
    def _this_week(a, m):
        return week_of(a, m.group(0))

    @rule(r"\bnext\s+week\b")
    def _next_week(a, m):
        return Interval(a + dt.timedelta(1), a + dt.timedelta(7), m.group(0), "week")

    @rule(r"\b(last|past|previous)\s+month\b")
    def _last_month(a, m):
        pm = a.replace(day=1) - dt.timedelta(days=1)
        return month(pm.year, pm.month, m.group(0))

    @rule(r"\b(this|earlier this)\s+month\b")
    def _this_month(a, m):
        return month(a.year, a.month, m.group(0))

    @rule(r"\bnext\s+month\b")
    def _next_month(a, m):
        nm = _month_end(a.year, a.month) + dt.timedelta(days=1)
        return month(nm.year, nm.month, m.group(0))

    @rule(r"\b(last|past|previous)\s+year\b")
    def _last_year(a, m):
        return year(a.year - 1, m.group(0))

    @rule(r"\bnext\s+year\b")
    def _next_year(a, m):
        return year(a.year + 1, m.group(0))

    @rule(r"\bthis\s+year\b")
    def _this_year(a, m):
        return year(a.year, m.group(0))

    return R


def _weekday(s: str) -> int | None:
    s = s.lower()
    return _WEEKDAYS.get(s, _WD_SHORT.get(s))


def _ago(a: D, n: int, unit: str, text: str) -> Interval:
    if unit.startswith("weekend"):
        return weekend_before(a, text, n)
    if unit.startswith("week"):
        d = a - dt.timedelta(days=7 * n)
        return Interval(d - dt.timedelta(days=3), d + dt.timedelta(days=3), text, "week")
    if unit.startswith("day"):
        return day(a - dt.timedelta(days=n), text)
    if unit.startswith("month"):
        y, mo = a.year, a.month - n
        while mo < 1:
            y, mo = y - 1, mo + 12
        return month(y, mo, text)
    return year(a.year - n, text)


_RULES = _rules()


def _absolute(text: str, a: D, future: bool, parts: bool = False) -> list[tuple[int, Interval]]:
    """(position, interval) of absolute dates, months, seasons and years in ``text``; with ``parts`` a month
    named after "early", "the beginning of", "the second week of", … is that part of it."""
    found: list[tuple[int, Interval]] = []
    taken: list[tuple[int, int]] = []

    def free(s: int, e: int) -> bool:
        return all(e <= ts or s >= te for ts, te in taken)

    for rx, kind in ((_ABS_DMY, "dmy"), (_ABS_MDY, "mdy")):
        for m in rx.finditer(text):
            if not free(m.start(), m.end()):
                continue
            mo = _month_no(m.group(2) if kind == "dmy" else m.group(1))
            dd = int(m.group(1) if kind == "dmy" else m.group(2))
            if mo is None or not (1 <= dd <= 31):
                continue
            y = int(m.group(3)) if m.group(3) else _nearest_month(a, mo, future)
            if kind == "mdy" and m.group(1).lower() == "may" and not m.group(3):
                continue  # "may 5" is too often the verb
            try:
                found.append((m.start(), day(D(y, mo, dd), m.group(0))))
                taken.append((m.start(), m.end()))
            except ValueError:
                pass

    def month_or_part(y: int, mo: int, at: int, end: int, words: str) -> Interval:
        """The month, or with ``parts`` the part of it that the words just before ``at`` name."""
        pm = _PART_BEFORE.search(text, max(0, at - 40), at) if parts else None
        if pm is not None and pm.end() == at:
            return part_of_month(y, mo, pm.group(1), text[pm.start():end])
        return month(y, mo, words)

    for m in _MONTH_YEAR.finditer(text):
        if free(m.start(), m.end()) and (mo := _month_no(m.group(1))):
            found.append((m.start(), month_or_part(int(m.group(2)), mo, m.start(), m.end(), m.group(0))))
            taken.append((m.start(), m.end()))
    for m in _SEASON_RE.finditer(text):
        if not free(m.start(), m.end()):
            continue
        rel, name, y = (m.group(1) or "").lower(), m.group(2).lower(), m.group(3)
        if y:
            yy = int(y)
        elif rel == "last":
            yy = a.year - 1 if (a.month, name) not in () else a.year
            # "last summer" said in winter 2023/24 is summer 2023
            s = season(a.year, name, "")
            yy = a.year if s.end < a else a.year - 1
        elif rel in ("this", "next"):
            s = season(a.year, name, "")
            yy = a.year if (rel == "this" or s.start > a) else a.year + 1
        else:
            continue  # a bare "summer" says too little
        found.append((m.start(), season(yy, name, m.group(0))))
        taken.append((m.start(), m.end()))
    for m in _MONTH_ONLY.finditer(text):
        if free(m.start(1), m.end(1)) and (mo := _month_no(m.group(1))):
            if m.group(1).lower() == "may" and m.group(0).lower().split()[0] not in ("in", "during", "since", "of",
                                                                                      "early", "late", "mid"):
                continue
            w = m.group(0).lower().split()[0]
            fut = future or w == "next"
            y = _nearest_month(a, mo, fut)
            if w == "last" and mo == a.month:
                y -= 1
            # "early June" / "the second week of November": the part word is this match's first word or before it
            at = m.start(1) if w in ("early", "late", "mid", "of") else m.start()
            found.append((m.start(), month_or_part(y, mo, at, m.end(), m.group(0))))
            taken.append((m.start(), m.end()))
    for m in _YEAR.finditer(text):
        if free(m.start(), m.end()):
            found.append((m.start(), year(int(m.group(1)), m.group(0))))
            taken.append((m.start(), m.end()))
    return found


# Cheap gate: a text without any of these words holds no expression the rules read.
_ANY_TIME = re.compile(rf"\b(?:yesterday|today|tonight|tomorrow|ago|months?|years?|last|past|this|next|upcoming|coming|previous|"
                       rf"week|weekend|month|year|{_WD_RE}|{_MONTH_RE}|spring|summer|fall|autumn|winter|before|"
                       rf"after|night|now|morning|afternoon|evening)\b|\b\d{{4}}\b|\b\d{{1,2}}(?:st|nd|rd|th)\b", re.I)


def resolve_all(text: str, anchor: D, *, future: bool = False, parts: bool = False) -> list[Interval]:
    """Every time expression in ``text`` resolved against ``anchor``, in text order (``parts``: see
    :func:`_absolute`)."""
    if not _ANY_TIME.search(text):
        return []
    found: list[tuple[int, Interval]] = []
    taken: list[tuple[int, int]] = []
    for rx, fn in _RULES:
        for m in rx.finditer(text):
            if any(not (m.end() <= s or m.start() >= e) for s, e in taken):
                continue
            iv = fn(anchor, m)
            if iv is not None:
                found.append((m.start(), iv))
                taken.append((m.start(), m.end()))
    masked = list(text)
    for s, e in taken:
        masked[s:e] = " " * (e - s)
    found += _absolute("".join(masked), anchor, future, parts)
    found.sort(key=lambda x: x[0])
    return [iv for _, iv in found]


_EXPLICIT_DAY = re.compile(rf"{_ABS_DMY.pattern}|{_ABS_MDY.pattern}", re.I)


def resolve_query(text: str, now: D) -> list[Interval]:
    """A question's time expressions (R36): as :func:`resolve_all` against the question date, with two readings of
    questions. A part of a month narrows it ("in the beginning of November 2022" → 1–10 November). A relative
    expression in a question that also names a calendar date is relative to that date, not to the question date:
    "What did Joanna finish last Friday, on 23 January 2022?" → Friday 21 January 2022."""
    found = resolve_all(text, now, parts=True)
    explicit = [iv for iv in found if iv.granularity == "day" and re.search(r"\d{4}", iv.text)
                and _EXPLICIT_DAY.search(iv.text)]
    relative = [iv for iv in found if not re.search(r"\d", iv.text)]
    if not explicit or not relative:
        return found
    again = {iv.text: iv for iv in resolve_all(text, explicit[0].start, parts=True) if not re.search(r"\d", iv.text)}
    return [again.get(iv.text, iv) if iv in relative else iv for iv in found]


_FUTURE = re.compile(r"\b(will|going|gonna|planning|plan to|plans to|next|upcoming|soon|can't wait)\b", re.I)


def resolve_text(text: str, anchor: D) -> Interval | None:
    """The time a turn's event happened: its first time expression resolved against the turn's date
    (a month named without a year is the coming one when the turn speaks of plans)."""
    found = resolve_all(text, anchor, future=bool(_FUTURE.search(text)))
    return found[0] if found else None


_WHEN_Q = re.compile(r"^\s*(when|what (date|day|time|year|month|week)|which (year|month|week|day)|how long ago|"
                     r"in which (year|month|week))\b", re.I)


def is_when_question(query: str) -> bool:
    return bool(_WHEN_Q.search(query))


def from_mention(m: dict) -> Interval | None:
    """A stage 2A time mention (kenning.detect.times, stored in ``time_mentions``) as a day interval: the vault's
    own resolution of a turn's time expression (``valid_to_utc`` is exclusive; an instant is its day)."""
    a = m.get("valid_from_utc")
    if not a:
        return None
    start = D.fromisoformat(a[:10])
    b = m.get("valid_to_utc")
    if b:
        t = dt.datetime.fromisoformat(b.replace("Z", "+00:00")) - dt.timedelta(microseconds=1)
        end = max(start, t.date())
    else:
        end = start
    gran = m.get("resolution_granularity") or "day"
    return Interval(start, end, m.get("surface_text") or "", "day" if gran == "minute" else gran)


def event_time(text: str | None, said: D | None, mentions: list[dict] | None = None) -> Interval | None:
    """The time a turn's event happened (R17): the first time expression stage 2A resolved (kenning.detect),
    else — for what 2A leaves unresolved on purpose (relative words on an imputed timestamp, seed 001 §2A.7.2:
    every transcript turn, whose time is its session's) — :func:`resolve_text` against the day it was said."""
    for m in mentions or []:
        iv = from_mention(m)
        if iv is not None:
            return iv
    if text and said:
        return resolve_text(text, said)
    return None
