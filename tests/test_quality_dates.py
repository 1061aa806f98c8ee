"""Relative time words resolve against the message's own date, never the real clock (decision H1)."""

import datetime as dt

import apsw

from chatgpt_fixtures import simple_chat, write_export
from vault_dump import dump
from kenning.retrieve.when import event_time, parse_date, resolve_text

SAID = dt.date(2023, 5, 10)


def test_parse_date_reads_relative_words_against_the_base_only():
    # dateparser would read these against datetime.now(); with a base they follow the base, without one: nothing
    assert parse_date("2 days ago", 2023, SAID) == dt.date(2023, 5, 8)
    assert parse_date("2 days ago", 2023, dt.date(2021, 1, 3)) == dt.date(2021, 1, 1)
    assert parse_date("in 3 weeks", 2023) is None and parse_date("2 days ago") is None
    assert parse_date("8 May, 2023") == dt.date(2023, 5, 8)


def test_the_rules_pass_the_said_date_down_to_dateparser():
    # "the week before <x>" hands <x> to parse_date; "2 days ago" there is the said date − 2, two anchors two answers
    a = resolve_text("the week before 2 days ago", SAID)
    b = resolve_text("the week before 2 days ago", dt.date(2020, 3, 4))
    assert (a.start, a.end) == (dt.date(2023, 5, 1), dt.date(2023, 5, 7))
    assert (b.start, b.end) == (dt.date(2020, 2, 24), dt.date(2020, 3, 1))
    iv = event_time("2 days ago I finally booked the dentist", SAID)
    assert iv.start == iv.end == dt.date(2023, 5, 8)


def _ingest(cli, tmp_path, name):
    start = dt.datetime(2023, 11, 14, 12, tzinfo=dt.timezone.utc).timestamp()
    src = write_export(tmp_path / "e.json", [simple_chat("c1", "Week", [
        ("user", "2 days ago I went climbing with Sam in Ljubljana"), ("assistant", "Nice!"),
        ("user", "The week before 2 days ago I had the flu")], start=start)])
    db = tmp_path / name
    cli("ingest", str(src), "--as-of", "2024-06-01T00:00:00Z", db=db)
    return db


def test_ingested_event_dates_follow_the_message_date_and_runs_agree(tmp_path, cli):
    a = _ingest(cli, tmp_path, "a.db")
    conn = apsw.Connection(str(a), flags=apsw.SQLITE_OPEN_READONLY)
    rows = dict(conn.execute("SELECT m.text_raw, d.event_start FROM search_docs d "
                             "JOIN messages m ON m.message_id = d.doc_id WHERE m.role = 'user'"))
    conn.close()
    assert rows["2 days ago I went climbing with Sam in Ljubljana"] == "2023-11-12"
    assert rows["The week before 2 days ago I had the flu"] <= "2023-11-12"   # from the message date, not 2026
    # a second import at another wall-clock time: the same vault, row for row (the frozen clock covers the rest)
    b = _ingest(cli, tmp_path, "b.db")
    skip = {"schema_migrations": {"applied_at_utc"}}
    assert dump(a, exclude_columns=skip) == dump(b, exclude_columns=skip)
