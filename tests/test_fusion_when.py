"""RRF fusion (DOC72 §42A.3) and time expressions (query side and turn side)."""

from __future__ import annotations

import datetime as dt

import pytest

from kenning.retrieve.fusion import Candidate, RankedList, rrf
from kenning.retrieve.when import is_when_question, resolve_all, resolve_text


def _rl(name, keys, weight=1.0):
    return RankedList(name, [Candidate(k, 1.0) for k in keys], weight)


def test_rrf_doc72_example():
    fused = rrf([_rl("kw", "ABC"), _rl("vec", "BD")], k=60, cap=50)
    got = {f.key: round(f.score, 4) for f in fused}
    assert got == {"B": 1.0, "A": 0.5041, "D": 0.4959, "C": 0.4881}
    assert [f.key for f in fused] == ["B", "A", "D", "C"]
    b = fused[0]
    assert b.lanes["kw"]["rank"] == 2 and b.lanes["vec"]["rank"] == 1


def test_rrf_cap_weights_and_new_lanes():
    long = _rl("fts", [f"d{i}" for i in range(80)])
    fused = rrf([long], k=60, cap=50)
    assert len(fused) == 50  # per-lane cap
    # a later lane (e.g. assertion → evidence) is just one more ranked list; weight 0 switches it off
    extra = RankedList("assertion_evidence", [Candidate("d70", 0.9, evidence=[{"kind": "assertion", "id": "a1"}])])
    fused = rrf([long, extra], k=60, cap=50)
    d70 = next(f for f in fused if f.key == "d70")
    assert set(d70.lanes) == {"assertion_evidence"} and d70.evidence == [{"kind": "assertion", "id": "a1"}]
    off = rrf([long, RankedList("x", [Candidate("zz", 1)], 0.0)], k=60, cap=50)
    assert all(f.key != "zz" for f in off)
    heavy = rrf([_rl("a", "XY"), _rl("b", "YX", weight=2.0)])
    assert heavy[0].key == "Y"


A = dt.date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize("text,start,end,gran", [
    ("I went to a LGBTQ support group yesterday", "2023-05-07", "2023-05-07", "day"),
    ("I ran a charity race last Saturday", "2023-05-06", "2023-05-06", "day"),
    ("we went camping last weekend", "2023-05-06", "2023-05-07", "weekend"),
    ("my school event last week", "2023-05-01", "2023-05-07", "week"),
    ("I painted that sunrise last year", "2022-01-01", "2022-12-31", "year"),
    ("we met 3 days ago", "2023-05-05", "2023-05-05", "day"),
    ("I'm going camping in June", "2023-06-01", "2023-06-30", "month"),
    ("back in March, 2021 things were rough", "2021-03-01", "2021-03-31", "month"),
    ("on 21 December 2022 I donated my car", "2022-12-21", "2022-12-21", "day"),
])
def test_turn_times_relative_to_session(text, start, end, gran):
    iv = resolve_text(text, A)
    assert iv is not None and (iv.start.isoformat(), iv.end.isoformat(), iv.granularity) == (start, end, gran)


def test_no_time_in_plain_text():
    assert resolve_text("I may go there with my kids", A) is None
    assert resolve_text("Thanks, that means a lot!", A) is None


@pytest.mark.parametrize("query,start,end", [
    ("What did Melanie do in July 2023?", "2023-07-01", "2023-07-31"),
    ("When did Melanie go camping in June?", "2023-06-01", "2023-06-30"),
    ("what did my sister say last summer?", "2023-06-01", "2023-08-31"),
    ("the week before 9 June 2023", "2023-06-02", "2023-06-08"),
    ("The Friday before 15 July 2023", "2023-07-14", "2023-07-14"),
    ("two weekends before 17 July 2023", "2023-07-08", "2023-07-09"),
])
def test_query_times_relative_to_question_date(query, start, end):
    now = dt.date(2023, 10, 22)
    iv = resolve_all(query, now)[0]
    assert (iv.start.isoformat(), iv.end.isoformat()) == (start, end)


def test_when_questions():
    assert is_when_question("When did Caroline go to the LGBTQ support group?")
    assert is_when_question("Which month was John in Italy?")
    assert not is_when_question("What did Caroline research?")


def test_day_of_month_and_duration_until_now():
    import datetime as dt

    from kenning.retrieve.when import resolve_text

    a = dt.date(2023, 8, 17)
    assert resolve_text("I met my teammates on the 15th.", a).start.isoformat() == "2023-08-15"
    assert resolve_text("We talked on the 20th.", a).start.isoformat() == "2023-07-20"  # not yet this month
    iv = resolve_text("I've been playing for about four months now", dt.date(2023, 12, 6))
    assert (iv.start.isoformat(), iv.granularity) == ("2023-08-01", "month")
    assert resolve_text("I was there for 3 months", a) is None  # no "been": not a duration until now


@pytest.mark.parametrize("query,start,end,gran", [
    ("Which tournament did Nate win in the beginning of November 2022?", "2022-11-01", "2022-11-10", "span"),
    ("Which country was Tim visiting in the second week of November?", "2022-11-08", "2022-11-14", "week"),
    ("Was the first half of September 2022 a good month?", "2022-09-01", "2022-09-15", "span"),
    ("What did we do in early June?", "2023-06-01", "2023-06-10", "span"),
    ("our mid-July 2023 trip", "2023-07-11", "2023-07-20", "span"),
    ("What happened at the end of February 2023?", "2023-02-21", "2023-02-28", "span"),
    ("in the last week of August", "2023-08-25", "2023-08-31", "week"),
    ("When did Melanie go camping in June?", "2023-06-01", "2023-06-30", "month"),   # a whole month stays one
])
def test_query_part_of_month(query, start, end, gran):
    """R36: a part of a month named in a question narrows the month."""
    from kenning.retrieve.when import resolve_query

    iv = resolve_query(query, dt.date(2023, 10, 22))[0]
    assert (iv.start.isoformat(), iv.end.isoformat(), iv.granularity) == (start, end, gran)


def test_query_relative_time_anchors_on_an_explicit_date():
    """R36: "last Friday, on 23 January 2022" is the Friday before that date, not before the question date."""
    from kenning.retrieve.when import resolve_query

    now = dt.date(2022, 11, 10)
    last_friday, named = resolve_query("What did Joanna just finish last Friday on 23 January, 2022?", now)
    assert (last_friday.start.isoformat(), named.start.isoformat()) == ("2022-01-21", "2022-01-23")
    week, _ = resolve_query("What was Tim's writing issue last week, as mentioned on November 6, 2023?", now)
    assert (week.start.isoformat(), week.end.isoformat()) == ("2023-10-30", "2023-11-05")
    # without an explicit date the question date anchors; turns' own reading is unchanged
    assert resolve_query("What did Tim do last week?", now)[0].start.isoformat() == "2022-11-03"
    assert resolve_all("the second week of November", now)[0].granularity == "month"
