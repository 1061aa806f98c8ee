"""The §25.2 corpus tools through a real `kenning serve mcp` stdio subprocess (official MCP SDK client): the same
answers as the library, read-only annotations, and actionable tool errors."""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters

from kenning.intake.corpus.resume import CARD_TITLE
from tests.conftest import SRC, run_kenning
from tests.corpus.fixtures import AS_OF, write_chats


def test_corpus_tools_over_stdio(tmp_path):
    db = tmp_path / "m.db"
    cfg_file = tmp_path / "hash.yaml"
    cfg_file.write_text("embeddings:\n  backend: hash\n")
    cfg = ["--db", str(db), "--config", str(cfg_file)]
    chats = write_chats(tmp_path / "conversations.json")
    r = run_kenning("ingest", str(chats), "--as-of", AS_OF, "--llm", "none", "-q", *cfg)
    assert r.returncode == 0, r.stderr
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", *cfg],
                                   env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"})
    calls = [("search", "search_conversation_history", {"query": "laptop battery"}),
             ("scoped", "search_conversation_history", {"query": "tomatoes laptop", "entity_scope": "Berlin"}),
             ("related", "get_related_threads", {"entity_id": "Lisbon"}),
             ("resume", "resume_context", {"entity_id": "Lisbon"}),
             ("latest", "resume_context", {}),
             ("unknown", "resume_context", {"entity_id": "Atlantis"}),
             ("badlimit", "search_conversation_history", {"query": "x", "limit": 0})]

    async def session() -> dict:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            got = {key: await client.call_tool(name, args) for key, name, args in calls}
            return {"tools": tools, **got}

    got = anyio.run(session)
    for name in ("search_conversation_history", "get_related_threads", "resume_context"):
        assert got["tools"][name].annotations.read_only_hint is True
    search = got["search"].structured_content
    assert not got["search"].is_error and search["threads"][0]["thread_id"] == "conv-laptop"
    assert search["threads"][0]["score"] > 0
    assert [t["thread_id"] for t in got["scoped"].structured_content["threads"]] == ["conv-garden"]
    related = got["related"].structured_content
    assert [t["thread_id"] for t in related["threads"]] == ["conv-laptop"] and related["entity"]["canonical_name"] == "Lisbon"
    resume = got["resume"].structured_content
    assert resume["found"] and resume["card"].startswith(CARD_TITLE)
    assert "We decided to stay in Alfama" in resume["card"] and len(resume["decisions"]) == 2
    assert got["latest"].structured_content["thread"]["thread_id"] == "conv-laptop"
    assert got["unknown"].is_error and "no entity named 'Atlantis'" in got["unknown"].content[0].text
    assert got["badlimit"].is_error and "between 1 and 100" in got["badlimit"].content[0].text
    # the server never wrote: the vault's threads are exactly what ingest made
    r = run_kenning("threads", "--json", *cfg)
    assert r.returncode == 0 and '"count": 2' in r.stdout.replace('"count":2', '"count": 2')
