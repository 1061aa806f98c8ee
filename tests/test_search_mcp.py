"""The MCP `search` tool (R61): a real `kenning serve mcp` subprocess over stdio, driven by the official MCP SDK
client, answers exactly what `kenning search --json` prints, and turns bad arguments into tool errors."""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client, StdioServerParameters

from tests.conftest import SRC, run_kenning

NOW = "2023-10-01"


def test_search_tool_answers_like_the_cli(tmp_path, transcript_file, hash_config_file):
    db = tmp_path / "m.db"
    cfg = ["--db", str(db), "--config", str(hash_config_file)]
    assert run_kenning("ingest", str(transcript_file), "--self", "Ana", *cfg).returncode == 0
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", *cfg],
                                   env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"})
    calls = {
        "turtle": {"query": "Who adopted a turtle?", "k": 3, "now": NOW},
        "summer": {"query": "What did Ben do by the lake in July 2023?", "now": NOW},
        "early": {"query": "Who adopted a turtle?", "as_of": "2023-06-01"},
        "entities": {"query": "Lisbon", "kinds": ["entity"], "now": NOW},
        "k0": {"query": "turtle", "k": 0},
        "kind": {"query": "turtle", "kinds": ["photo"]},
        "date": {"query": "turtle", "as_of": "someday"},
    }

    async def session() -> dict:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            got = {name: await client.call_tool("search", args) for name, args in calls.items()}
            return {"tools": tools, **got}

    got = anyio.run(session)
    tool = got["tools"]["search"]
    assert tool.annotations.read_only_hint is True
    assert {"query", "k", "as_of", "now", "kinds"} <= set(tool.input_schema["properties"])

    def cli(args: dict) -> dict:
        flags = [("--k", args.get("k")), ("--now", args.get("now")), ("--as-of", args.get("as_of"))]
        extra = [x for f, val in flags if val is not None for x in (f, str(val))]
        extra += [x for kind in args.get("kinds", []) for x in ("--kind", kind)]
        r = run_kenning("search", args["query"], *extra, "--json", *cfg)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    for name in ("turtle", "summer", "early", "entities"):
        res = got[name]
        assert not res.is_error, res.content
        assert res.structured_content == cli(calls[name]), name
    turtle = got["turtle"].structured_content
    assert len(turtle["hits"]) == 3 and turtle["hits"][0]["text"].startswith("Nice! I adopted a turtle")
    assert turtle["hits"][0]["speaker"] == "Ben" and turtle["hits"][0]["date"].startswith("2023-05")
    # the question's time is resolved and used as a lane
    summer = got["summer"].structured_content
    assert summer["parsed"]["times"] and any(l["lane"] == "time" for l in summer["lanes"])
    assert summer["hits"][0]["text"].startswith("We went camping by the lake")
    # as_of: nothing said after June 2023 is searched
    early = got["early"].structured_content["hits"]
    assert early[0]["text"].startswith("Nice! I adopted a turtle") and all(h["date"] < "2023-06-02" for h in early)
    ents = got["entities"].structured_content["hits"]
    assert ents and {h["kind"] for h in ents} == {"entity"} and ents[0]["evidence"][0]["name"] == "Lisbon"
    errors = (("k0", "between 1 and 100"), ("kind", "unknown kinds ['photo']"), ("date", "as_of 'someday' is not a date"))
    for name, needle in errors:
        assert got[name].is_error and needle in got[name].content[0].text, name
