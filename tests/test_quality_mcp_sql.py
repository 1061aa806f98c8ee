"""The MCP `sql` tool reads views that leave incognito content out (decision H5; seed 003 §41.6, §13.4, §20A):
a real `kenning serve mcp` over stdio, a vault where one conversation was made incognito after import (its raw
text kept): the secret is unreadable by any route, other tables are refused with what may be read, and the usual
queries still answer."""

from __future__ import annotations

import json
import sys

import anyio
import apsw
from mcp import Client, StdioServerParameters

from chatgpt_fixtures import simple_chat, write_export
from tests.conftest import SRC

SECRET = "Nightjar7"


def _vault(cli, tmp_path):
    src = write_export(tmp_path / "c.json", [
        simple_chat("open-1", "Plans", [("user", "My goal is to learn Japanese. I live in Paris with my partner Sam."),
                                        ("assistant", "Great.")]),
        simple_chat("secret-1", "Private", [("user", f"My codename is {SECRET}. My goal is to visit Reykjavik."),
                                            ("assistant", "Noted.")], start=1_700_100_000.0)])
    db = tmp_path / "v.db"
    cli("ingest", str(src), "--as-of", "2024-01-01T00:00:00Z", db=db)
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    cid = conn.execute("SELECT conversation_id FROM conversations WHERE title='Private'").fetchall()[0][0]
    conn.close()
    cli("mode", "incognito", cid, db=db)
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    # the raw text is still in the vault (raw-only keeping), so the tool is what must hold it back
    assert conn.execute("SELECT count(*) FROM messages WHERE text_raw LIKE ?", (f"%{SECRET}%",)).fetchall()[0][0]
    n_open = conn.execute("SELECT count(*) FROM messages WHERE conversation_id<>?", (cid,)).fetchall()[0][0]
    conn.close()
    return db, cid, n_open


def _calls(db, calls):
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", "--db", str(db)],
                                   env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"})

    async def go():
        async with Client(params) as client:
            return {k: await client.call_tool("sql", {"sql": q}) for k, q in calls.items()}

    return anyio.run(go)


def test_incognito_text_cannot_be_read_and_normal_queries_work(tmp_path, cli):
    db, cid, n_open = _vault(cli, tmp_path)
    like = f"'%{SECRET}%'"
    got = _calls(db, {
        "goals": "SELECT canonical_name FROM nodes WHERE node_kind='goal' ORDER BY 1",
        "messages": "SELECT count(*) FROM messages",
        "secret_msg": f"SELECT count(*) FROM messages WHERE text_raw LIKE {like} OR conversation_id='{cid}'",
        "secret_conv": f"SELECT count(*) FROM conversations WHERE conversation_id='{cid}'",
        "secret_prov": f"SELECT count(*) FROM provenance_entries WHERE verbatim_excerpt LIKE {like}",
        "join": "SELECT p.verbatim_excerpt FROM provenance_entries p JOIN messages m USING (message_id) LIMIT 5",
        "main": f"SELECT text_raw FROM main.messages WHERE text_raw LIKE {like}",
        "cte": "WITH messages AS (SELECT * FROM main.messages) SELECT text_raw FROM messages",
        "cte_quoted": 'WITH "Messages"(a) AS (SELECT text_raw FROM main.messages) SELECT a FROM "Messages"',
        "subquery": f"SELECT (SELECT count(*) FROM main.messages WHERE text_raw LIKE {like}) FROM nodes LIMIT 1",
        "raw": "SELECT * FROM raw_archive LIMIT 1",
        "fts": "SELECT * FROM search_docs LIMIT 1",
        "schema": "SELECT sql FROM sqlite_schema",
        "pragma": "PRAGMA table_info(nodes)",
    })
    text = lambda k: got[k].content[0].text  # noqa: E731
    for k in ("goals", "messages", "secret_msg", "secret_conv", "secret_prov", "join", "pragma"):
        assert not got[k].is_error, (k, text(k))
    rows = lambda k: json.loads(text(k))["rows"]  # noqa: E731
    assert ["learn Japanese"] in rows("goals") and ["visit Reykjavik"] not in rows("goals")
    assert rows("messages") == [[n_open]]               # the open conversation's turns only
    assert rows("secret_msg") == [[0]] and rows("secret_conv") == [[0]] and rows("secret_prov") == [[0]]
    assert all(SECRET not in json.dumps(rows(k)) for k in got if not got[k].is_error)   # (the echoed SQL aside)
    for k in ("main", "cte", "cte_quoted", "subquery", "raw", "fts", "schema"):
        assert got[k].is_error, (k, text(k))
    assert "is not readable through this tool; it reads these views: nodes, aliases, edges" in text("main")
    assert "may not be named 'messages'" in text("cte")
