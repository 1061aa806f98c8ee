"""Times in the ledger: transaction time as canonical UTC instants, valid time at the source's precision,
and `since`/`until` windows (docs/decisions.md W6, W7)."""

from __future__ import annotations

import datetime as dt
import re

from kenning.sources.timestamps import format_utc, normalize_to_utc, parse_utc

_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_MONTH = re.compile(r"^\d{4}-\d{2}$")
_ISO_YEAR = re.compile(r"^\d{4}$")
_ISO_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


class TimeValueError(ValueError):
    pass


def parse_instant(value: object, what: str = "time") -> str:
    """An ISO date or date-time → ``YYYY-MM-DDTHH:MM:SS.sssZ`` (a date means its UTC midnight)."""
    if isinstance(value, str):
        s = value.strip()
        if _ISO_DAY.match(s) or _ISO_INSTANT.match(s):
            ts = normalize_to_utc(s)
            if ts is not None:
                return ts
    raise TimeValueError(f"{what} {value!r} is not an ISO date or date-time (e.g. 2026-04-15)")


def parse_valid_time(value: object, what: str = "valid time") -> str:
    """Valid time keeps the source's precision: YYYY, YYYY-MM, YYYY-MM-DD, or a canonical instant."""
    if isinstance(value, str):
        s = value.strip()
        if _ISO_YEAR.match(s) or _ISO_MONTH.match(s):
            month = int(s[5:7]) if len(s) == 7 else 1
            if 1 <= month <= 12:
                return s
        elif _ISO_DAY.match(s):
            try:
                dt.date.fromisoformat(s)
                return s
            except ValueError:
                pass
        elif _ISO_INSTANT.match(s):
            ts = normalize_to_utc(s)
            if ts is not None:
                return ts
    raise TimeValueError(f"{what} {value!r} is not an ISO date (YYYY, YYYY-MM, YYYY-MM-DD or a date-time)")


def _start_of(s: str) -> dt.datetime:
    s = s.strip()
    if _ISO_YEAR.match(s):
        return dt.datetime(int(s), 1, 1, tzinfo=dt.timezone.utc)
    if _ISO_MONTH.match(s):
        return dt.datetime(int(s[:4]), int(s[5:7]), 1, tzinfo=dt.timezone.utc)
    return parse_utc(parse_instant(s))


def _end_exclusive(s: str) -> dt.datetime:
    s = s.strip()
    start = _start_of(s)
    if _ISO_YEAR.match(s):
        return start.replace(year=start.year + 1)
    if _ISO_MONTH.match(s):
        return start.replace(year=start.year + (start.month == 12), month=start.month % 12 + 1)
    if _ISO_DAY.match(s):
        return start + dt.timedelta(days=1)
    return start + dt.timedelta(milliseconds=1)


def window(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """(since_instant, until_exclusive_instant) for "current at or after since / at or before until".

    A date names its whole period: until=2026-04 ends before 2026-05-01, since=2026-04-30 starts at its midnight.
    """
    try:
        lo = format_utc(_start_of(since)) if since else None
        hi = format_utc(_end_exclusive(until)) if until else None
    except (TimeValueError, ValueError) as e:
        raise TimeValueError(f"since/until must be ISO dates (YYYY, YYYY-MM, YYYY-MM-DD or a date-time): {e}") from e
    return lo, hi


def day(ts: str | None) -> str | None:
    """Display form: the date alone when the instant is a UTC midnight."""
    if ts is None:
        return None
    return ts[:10] if ts.endswith("T00:00:00.000Z") else ts
