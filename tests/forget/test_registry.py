"""The forget registry covers the schema: a table that can hold a person's words is either in the registry (it is
forgotten with its source) or declared to hold no user text — so a table added later cannot be forgotten about."""

from __future__ import annotations

from kenning.forget.registry import COLLECT, NO_USER_TEXT, REGISTRY, registered_tables, uncovered_tables
from kenning.store import forget as fsql
from kenning.store.connection import open_store


def _schema(tmp_path):
    conn = open_store(tmp_path / "v.db")
    try:
        return fsql.schema_tables(conn), conn
    except BaseException:
        conn.close()
        raise


def test_every_table_with_text_is_registered_or_declared_textless(tmp_path):
    tables, conn = _schema(tmp_path)
    conn.close()
    missing = uncovered_tables(tables)
    assert missing == [], (
        f"tables with text columns that `kenning forget` does not know: {missing}. Add a Delete/Step entry to "
        "kenning/forget/registry.py REGISTRY (how its rows key to forgotten messages/conversations), or list the "
        "table in NO_USER_TEXT if it holds no user text.")


def test_a_new_text_table_is_caught(tmp_path):
    tables, conn = _schema(tmp_path)
    conn.execute("CREATE TABLE mining_notes (note_id TEXT PRIMARY KEY, body TEXT)")
    conn.execute("CREATE TABLE mining_counts (n INTEGER, score REAL)")   # no text: not reported
    tables = fsql.schema_tables(conn)
    conn.close()
    assert uncovered_tables(tables) == ["mining_notes"]


def test_registry_names_real_tables_and_no_table_twice_as_textless(tmp_path):
    tables, conn = _schema(tmp_path)
    conn.close()
    names = {t["name"] for t in tables}
    assert registered_tables() <= names, registered_tables() - names
    assert not (registered_tables() & NO_USER_TEXT)
    assert NO_USER_TEXT <= names, NO_USER_TEXT - names
    kinds = [k for k, _ in COLLECT]
    assert len(kinds) == len(set(kinds)) and kinds[0] == "message"
    assert REGISTRY[-1].table in ("runs", "run_events")   # the stage log is redacted last
