"""`kenning serve mcp` as a real subprocess, driven by the official MCP SDK client over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import anyio
import pytest
from .conftest import SRC
from mcp import Client, StdioServerParameters

NEW, OLD = "b-2026-04-15-acme-auth-001", "b-2026-01-10-acme-auth-001"


def env() -> dict[str, str]:
    return {"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}


@pytest.fixture
def served_db(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", "2026-04-20T00:00:00Z", db=db)
    return db


def strip_times(ans: dict) -> dict:
    for key in ("current_beliefs", "history", "contradicting_beliefs", "answers"):
        for b in ans.get(key, []):
            for s in b["supporting_sources"]:
                s.pop("verified_at", None)
    return ans


def test_why_over_a_real_stdio_session(served_db):
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", "--db", str(served_db)],
                                   env=env())

    async def session() -> dict:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            why = await client.call_tool("why", {"query": "Acme OAuth refresh endpoint"})
            april = await client.call_tool("why", {"query": "Acme OAuth refresh endpoint", "since": "2026-03",
                                                   "until": "2026-03"})
            hist = await client.call_tool("belief_history", {"belief_id": NEW})
            listed = await client.call_tool("beliefs_list", {"topic": "auth", "current_only": True})
            missing = await client.call_tool("belief_history", {"belief_id": "b-nope"})
            bad_date = await client.call_tool("why", {"query": "auth", "since": "whenever"})
            return {"tools": tools, "why": why, "april": april, "hist": hist, "listed": listed, "missing": missing,
                    "bad_date": bad_date}

    got = anyio.run(session)
    assert set(got["tools"]) == {"why", "beliefs_list", "belief_history", "search", "context", "knowledge_brief",
                                 "neighbors", "inspect_knowledge", "sql", "describe_knowledge_schema",
                                 "search_conversation_history", "get_related_threads", "resume_context"}
    for t in got["tools"].values():
        assert t.annotations.read_only_hint is True
    assert {"query", "workspace", "since", "until", "include_history"} <= set(got["tools"]["why"].input_schema["properties"])
    why = got["why"]
    assert not why.is_error
    ans = why.structured_content
    assert [b["belief_id"] for b in ans["current_beliefs"]] == [NEW]
    assert [b["belief_id"] for b in ans["history"]] == [OLD]
    assert ans["supersession_chain"] == [OLD, NEW]
    assert ans["current_beliefs"][0]["supporting_sources"][0]["verified_against_source"] is True
    assert "/auth/v2/refresh" in why.content[0].text   # the same answer as text for clients without structure

    from kenning.api import Vault

    with Vault.open(served_db, readonly=True) as v:
        assert strip_times(ans) == strip_times(v.why("Acme OAuth refresh endpoint"))
    assert got["april"].structured_content["as_of"]["belief_ids"] == [OLD]
    assert [e["belief_id"] for e in got["hist"].structured_content["chain"]] == [OLD, NEW]
    assert got["listed"].structured_content["total"] == 3
    assert got["missing"].is_error and "no belief b-nope" in got["missing"].content[0].text
    assert got["bad_date"].is_error and "ISO" in got["bad_date"].content[0].text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_why_over_streamable_http_on_loopback(served_db):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve", "mcp", "--db", str(served_db), "--http",
                             f"127.0.0.1:{port}"], env={**os.environ, **env()}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
                time.sleep(0.1)

        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await client.call_tool("why", {"query": NEW})

        result = anyio.run(session)
        assert not result.is_error
        assert result.structured_content["match_type"] == "belief_id"
        assert result.structured_content["supersession_chain"] == [OLD, NEW]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_http_refuses_non_loopback_and_missing_vault(kenning, served_db, tmp_path):
    proc = kenning("serve", "mcp", "--http", "0.0.0.0:8765", db=served_db, check=False)
    assert proc.returncode == 1 and "loopback" in proc.stderr
    proc = kenning("serve", "mcp", db=tmp_path / "none.db", check=False)
    assert proc.returncode == 1 and "no vault" in proc.stderr
