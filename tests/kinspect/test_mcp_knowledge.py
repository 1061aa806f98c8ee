"""The knowledge tools of `kenning serve mcp` (context, knowledge_brief, neighbors, inspect_knowledge, sql): a real
server subprocess driven by the official MCP client, over stdio and over streamable HTTP on 127.0.0.1; each tool
answers what the library answers, bad arguments are tool errors, and the vault is unchanged."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time

import anyio
from mcp import Client, StdioServerParameters

from kenning.config.loader import load_config
from kenning.retrieve.inspect import inspect_knowledge
from kenning.retrieve.brief import knowledge_brief
from kenning.store.connection import open_store
from tests.conftest import SRC

from knowledge.delivery_fixtures import NOW

ENV = {"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
NEW_TOOLS = {"context", "knowledge_brief", "neighbors", "inspect_knowledge", "sql", "describe_knowledge_schema"}

CALLS = {
    "context": ("context", {"request": "plan the hike with Anna", "entity": "Anna", "now": NOW}),
    "ctx_s1": ("context", {"request": "plan the hike with Anna", "entity": "Anna", "session": "s1", "now": NOW}),
    "ctx_s1_again": ("context", {"request": "plan the hike with Anna", "entity": "Anna", "session": "s1",
                                 "now": NOW}),
    "brief": ("knowledge_brief", {"entity": "Anna", "now": NOW}),
    "neighbors": ("neighbors", {"entity": "Anna", "depth": 1, "now": NOW}),
    "neighbors2": ("neighbors", {"entity": "Anna", "depth": 2, "max_results": 3, "now": NOW}),
    "inspect": ("inspect_knowledge", {"query_type": "confidence_breakdown", "node": "Anna", "now": NOW}),
    "search": ("inspect_knowledge", {"query_type": "search_knowledge", "query": "Annie"}),
    "sql": ("sql", {"sql": "SELECT canonical_name FROM nodes WHERE node_kind = 'goal' ORDER BY 1"}),
    "schema": ("describe_knowledge_schema", {}),
    # refusals
    "sql_write": ("sql", {"sql": "DELETE FROM nodes"}),
    "sql_attach": ("sql", {"sql": "ATTACH ':memory:' AS x"}),
    "depth3": ("neighbors", {"entity": "Anna", "depth": 3}),
    "budget": ("context", {"request": "anything", "budget": 100000}),
    "unknown_node": ("knowledge_brief", {"entity": "Nobody at all", "now": NOW}),
    "bad_type": ("inspect_knowledge", {"query_type": "everything", "node": "Anna"}),
    "bad_now": ("knowledge_brief", {"entity": "Anna", "now": "someday"}),
    "limit": ("inspect_knowledge", {"query_type": "connected_nodes", "node": "Anna", "limit": 1000}),
}
ERRORS = {"sql_write": "DELETE is not allowed", "sql_attach": "ATTACH is not allowed",
          "depth3": "depth must be 1 or 2", "budget": "budget must be between 1 and 2000",
          "unknown_node": "Nobody at all", "bad_type": "unknown query type", "bad_now": "now 'someday'",
          "limit": "limit must be between 1 and 100"}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trips_over_stdio(anna):
    path, ids, _ = anna
    before = _digest(path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", "--db", str(path)],
                                   env=ENV)

    async def session() -> dict:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            got = {name: await client.call_tool(tool, args) for name, (tool, args) in CALLS.items()}
            return {"tools": tools, **got}

    got = anyio.run(session)
    assert NEW_TOOLS <= set(got["tools"]) and {"why", "search"} <= set(got["tools"])
    assert all(got["tools"][t].annotations.read_only_hint for t in NEW_TOOLS)
    for name in CALLS:
        if name not in ERRORS:
            assert not got[name].is_error, (name, got[name].content)
    for name, needle in ERRORS.items():
        assert got[name].is_error and needle in got[name].content[0].text, (name, got[name].content)

    config = load_config()
    c = open_store(path, readonly=True)
    try:
        assert got["brief"].structured_content["text"] == knowledge_brief(c, config, "Anna", now=NOW).text
        expected = inspect_knowledge(c, config, "confidence_breakdown", now=NOW, node="Anna")
        assert got["inspect"].structured_content["result_summary"] == expected["result_summary"]
    finally:
        c.close()
    packet = got["context"].structured_content
    assert packet["lines"] and packet["tokens_used"] <= 500 and packet["recorded"] is False
    # novelty within a session, kept by the server (the vault is not written, K18)
    first, again = got["ctx_s1"].structured_content, got["ctx_s1_again"].structured_content
    assert first["lines"] == packet["lines"]
    ids_of = lambda p: {i["id"] for items in p["sections"].values() for i in items}  # noqa: E731
    assert ids_of(first) and not ids_of(first) & ids_of(again)
    names = {r.get("canonical_name") or r.get("name") for r in got["neighbors"].structured_content["results"]}
    assert "Lisbon" in names
    assert len(got["neighbors2"].structured_content["results"]) <= 3
    assert got["search"].structured_content["result_data"]["hits"][0]["node_id"] == ids["Anna"]
    s = got["sql"].structured_content
    assert s["columns"] == ["canonical_name"] and s["rows"] == [["Help Anna move to Porto"],
                                                                 ["Hike the Rota Vicentina with Anna"]]
    assert got["schema"].structured_content["tables"][0]["table"] == "nodes"
    assert _digest(path) == before


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sql_over_streamable_http_on_loopback(anna):
    path, _, _ = anna
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve", "mcp", "--db", str(path), "--http",
                             f"127.0.0.1:{port}"], env={**os.environ, **ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start: {proc.stderr.read().decode()}")
                time.sleep(0.1)

        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                ok = await client.call_tool("sql", {"sql": "SELECT count(*) AS n FROM nodes", "max_rows": 5})
                brief = await client.call_tool("knowledge_brief", {"entity": "Anna", "now": NOW})
                return ok, brief

        ok, brief = anyio.run(session)
        assert not ok.is_error and ok.structured_content["columns"] == ["n"] and ok.structured_content["rows"][0][0] > 5
        assert not brief.is_error and brief.structured_content["text"].startswith("Anna")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
