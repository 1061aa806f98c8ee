import datetime as dt
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from kenning.sources.timestamps import normalize_to_utc, parse_utc


def test_epoch_floats_floor_to_milliseconds():
    assert normalize_to_utc(1700000000.9996) == "2023-11-14T22:13:20.999Z"   # stays in its second
    assert normalize_to_utc(1700000000.123) == "2023-11-14T22:13:20.123Z"   # decimal text, not binary .12299…
    assert normalize_to_utc(1700000000) == "2023-11-14T22:13:20.000Z"
    assert normalize_to_utc(Decimal("1700000000.0009")) == "2023-11-14T22:13:20.000Z"
    assert normalize_to_utc(-1.5) == "1969-12-31T23:59:58.500Z"


def test_iso_strings_and_datetimes():
    assert normalize_to_utc("2024-03-01T10:00:00+02:00") == "2024-03-01T08:00:00.000Z"
    assert normalize_to_utc("2024-03-01T10:00:00Z") == "2024-03-01T10:00:00.000Z"
    assert normalize_to_utc("2024-03-01 10:00:00", source_tz="Europe/Berlin") == "2024-03-01T09:00:00.000Z"
    assert normalize_to_utc("1700000000.5") == "2023-11-14T22:13:20.500Z"
    assert normalize_to_utc(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)) == "2024-01-01T00:00:00.000Z"


def test_unreadable_values_give_none_never_raise():
    for bad in (None, "", "yesterday-ish", float("nan"), float("inf"), 1e20, True, [], {}, "2024-13-45"):
        assert normalize_to_utc(bad) is None


@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2100, 1, 1)))
def test_round_trip_format(d):
    d = d.replace(microsecond=(d.microsecond // 1000) * 1000, tzinfo=dt.timezone.utc)
    s = normalize_to_utc(d)
    assert len(s) == 24 and s.endswith("Z")
    assert parse_utc(s) == d
