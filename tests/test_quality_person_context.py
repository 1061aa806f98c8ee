"""`kenning context "before I talk to Sam"` on the bundled sample (decision H4): a person-scoped packet carries the
person (aliases), open obligations and goals naming them, directives mentioning them, current facts, recent
conversations with them and what you said about them — each with its evidence quote — via the CLI and the MCP
`context` tool, within the budget."""

from __future__ import annotations

import datetime as dt
import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from chatgpt_fixtures import simple_chat, write_export
from tests.conftest import SRC, run_cli

AS_OF = "2025-01-10T00:00:00Z"
REQUEST = "What should I keep in mind before I talk to Sam?"


@pytest.fixture(scope="module")
def sam_vault(tmp_path_factory):
    """The demo's vault (the bundled sample), plus one chat where the user names Sam in an obligation, a goal and
    a standing wish."""
    root = tmp_path_factory.mktemp("sam")
    db = root / "kenning.db"
    run_cli("demo", db=db, timeout=1200)
    start = dt.datetime(2025, 1, 5, 9, tzinfo=dt.timezone.utc).timestamp()
    src = write_export(root / "sam.json", [simple_chat("sam-1", "Sam and the contract", [
        ("user", "I have to send Sam the Initech contract by January 20."), ("assistant", "Noted."),
        ("user", "My goal is to visit Lisbon with Sam next spring."), ("assistant", "Lovely."),
        ("user", "Please never schedule calls with Sam before 9am."), ("assistant", "Understood.")], start=start)])
    run_cli("ingest", str(src), "--as-of", AS_OF, db=db, timeout=600)
    return db


def _check(packet: dict) -> None:
    person = packet["sections"]["person"]
    parts = {i["part"] for i in person}
    assert {"person", "fact", "thread", "said"} <= parts, parts
    line = lambda part: next(i for i in person if i["part"] == part)["line"]  # noqa: E731
    assert line("person").startswith("About Sam (person")
    # what Sam is named in: in the person part, or already in the general sections (not repeated), with a quote
    items = person + [i for k in ("directives", "goals", "obligations") for i in packet["sections"][k]]
    named = {what: next(i for i in items if what in i["line"]) for what in (
        "send Sam the Initech contract", "visit Lisbon with Sam", "Sam before 9am")}
    for what, item in named.items():
        assert what in item["evidence"]["quote"] and item["evidence"]["message_id"], item
    assert len([i for i in items if "send Sam the Initech contract" in i["line"]]) == 1
    assert any(i["part"] == "fact" and "Sam works at Initech" in i["line"] for i in person)
    assert any(i["part"] == "thread" and "“Feedback for a designer”: open: follow-up next week" in i["line"]
               for i in person)
    assert any(i["part"] == "said" and "Sam says I'm stubborn" in i["line"] for i in person)
    # every line of the person part but the header and threads quotes the person's own words, dated
    for i in person:
        if i["part"] not in ("person", "thread"):
            assert i["evidence"]["quote"] and i["evidence"]["message_id"] and i["evidence"]["at"], i
            assert f"“{i['evidence']['quote']}”" in i["line"]
    assert packet["packet_tokens"] <= packet["budget"] and packet["person_tokens"] <= 260
    assert all(i["line"] in packet["lines"] for i in person)


def test_the_cli_packet_about_sam(sam_vault):
    packet = json.loads(run_cli("context", REQUEST, "--json", "--as-of", AS_OF, db=sam_vault).stdout)
    assert packet["primary_entity"]["name"] == "Sam"
    _check(packet)
    # the person part only takes what the budget leaves after the other sections
    small = json.loads(run_cli("context", REQUEST, "--json", "--budget", "120", "--as-of", AS_OF, db=sam_vault).stdout)
    t = small["section_tokens"]
    assert 0 < t["person"] <= 120 - sum(v for k, v in t.items() if k not in ("person", "prior_context"))
    assert small["person_items_left_out"] > 0


def test_the_mcp_context_tool_gives_the_same_person_part(sam_vault):
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "serve", "mcp", "--db",
                                                                 str(sam_vault)],
                                   env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"})

    async def call() -> dict:
        async with Client(params) as client:
            res = await client.call_tool("context", {"request": REQUEST, "now": AS_OF})
            assert not res.is_error, res.content
            return json.loads(res.content[0].text)

    _check(anyio.run(call))
