"""Faster equivalents the stages use must give exactly what the originals give."""

from __future__ import annotations

import datetime as dt
import random

from kenning.detect.times import parse_stored_utc
from kenning.sources.timestamps import format_utc, parse_utc


def test_parse_stored_utc_equals_parse_utc():
    rng = random.Random(1)
    start = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)
    span_ms = int((dt.datetime(9999, 12, 31, tzinfo=dt.timezone.utc) - start) / dt.timedelta(milliseconds=1))
    samples = [format_utc(start + dt.timedelta(milliseconds=rng.randrange(span_ms))) for _ in range(20000)]
    samples += ["2024-02-29T23:59:59.999Z", "1970-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z"]
    for s in samples:
        a, b = parse_utc(s), parse_stored_utc(s)
        assert a == b and a.utcoffset() == b.utcoffset() and a.microsecond == b.microsecond, s


def test_jcs_number_keeps_the_jcs_text():
    from kenning.detect.entities import _jcs_number
    from kenning.sources.jcs import canonicalize

    for x in (0.0, -0.0, 1.0, 0.5, 0.123456789, 1e-7, 3.0, 0.999999999):
        assert canonicalize({"v": _jcs_number(x)}) == canonicalize({"v": x}), x
