"""UTC timestamps in the one stored form ``YYYY-MM-DDTHH:MM:SS.sssZ`` (seed 001 §1.5)."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
# Unix seconds outside these bounds are not plausible message times (and overflow datetime).
_MIN_EPOCH = Decimal(-62135596800)  # 0001-01-01
_MAX_EPOCH = Decimal(253402300799)  # 9999-12-31


def format_utc(d: dt.datetime) -> str:
    d = d.astimezone(UTC)
    return (f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}."
            f"{d.microsecond // 1000:03d}Z")


def _from_epoch_ms(ms: int) -> str | None:
    if not (_MIN_EPOCH * 1000 <= ms <= _MAX_EPOCH * 1000):
        return None
    return format_utc(_EPOCH + dt.timedelta(milliseconds=ms))


def _from_epoch(value: Decimal) -> str | None:
    if not (_MIN_EPOCH <= value <= _MAX_EPOCH):
        return None
    # Floor to whole milliseconds on the exact decimal value: never later than the event,
    # and 1699999999.9996 stays in its second (docs/decisions.md D6).
    return _from_epoch_ms(int((value * 1000).to_integral_value(rounding=ROUND_FLOOR)))


def _float_epoch(x: float) -> str | None:
    r = repr(x)
    if x >= 0 and "e" not in r:  # the common case, floored on the decimal text without Decimal
        ip, _, fp = r.partition(".")
        return _from_epoch_ms(int(ip) * 1000 + int((fp + "000")[:3]))
    return _from_epoch(Decimal(r))


def _tz(source_tz: str | None):
    if not source_tz or source_tz.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(source_tz)
    except Exception:
        return UTC


def normalize_to_utc(ts: Any, source_tz: str | None = None) -> str | None:
    """Unix seconds (int/float/Decimal/numeric string), datetime or ISO-8601 text → canonical UTC.

    Returns None on anything it cannot read; never raises.
    """
    try:
        if ts is None or isinstance(ts, bool):
            return None
        if isinstance(ts, dt.datetime):
            d = ts if ts.tzinfo else ts.replace(tzinfo=_tz(source_tz))
            return format_utc(d)
        if isinstance(ts, dt.date):
            return format_utc(dt.datetime(ts.year, ts.month, ts.day, tzinfo=_tz(source_tz)))
        if type(ts) is int:
            return _from_epoch_ms(ts * 1000)
        if isinstance(ts, (int, Decimal)):
            return _from_epoch(Decimal(ts))
        if isinstance(ts, float):
            if ts != ts or ts in (float("inf"), float("-inf")):
                return None
            return _float_epoch(ts)
        if isinstance(ts, str):
            s = ts.strip()
            if not s:
                return None
            try:
                return _from_epoch(Decimal(s))
            except InvalidOperation:
                pass
            if s.endswith(("Z", "z")):
                s = s[:-1] + "+00:00"
            d = dt.datetime.fromisoformat(s)
            if d.tzinfo is None:
                d = d.replace(tzinfo=_tz(source_tz))
            return format_utc(d)
    except (ValueError, OverflowError, TypeError, InvalidOperation):
        return None
    return None


def parse_utc(s: str) -> dt.datetime:
    """Inverse of format_utc for stored values."""
    if len(s) == 24 and s[-1] == "Z" and s[10] == "T" and s[19] == ".":
        return dt.datetime.fromisoformat(s[:-1]).replace(tzinfo=UTC)  # ~10× strptime, the same value
    return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def now_utc() -> str:
    return format_utc(dt.datetime.now(UTC))
