"""Every reader of promoted edges honours §42A.2.12A canReadPromotedEdge and §13.4 incognito (G64): graph queries,
context packets, briefs, inspect, node pages, compiled truth and the MCP tools (over stdio), on the bundled
sample's promoted edge."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from kenning.knowledge.compiled import compiled_truth
from kenning.retrieve.inspect import inspect_knowledge
from kenning.knowledge.ops import KnowledgeWrite, UpdateEdge, UpdateNode
from kenning.knowledge.read import node_view
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock
from kenning.retrieve.graph_query import run_query
from kenning.store import intake as isql
from kenning.store import knowledge as ksql
from kenning.store import upkeep as usql
from kenning.store.connection import write_scope
from kenning.upkeep.edge_gate import EdgeGate
from kenning.upkeep.promotion import BacklinkRun
from tests.conftest import SRC
from tests.upkeep.conftest import AS_OF as _AS_OF

AS_OF = Clock.from_option(_AS_OF).now()  # the readers take the canonical form


@pytest.fixture
def edge(vault):
    (e, *_) = usql.promoted_edges(vault.conn)
    s, t = ksql.get_node(vault.conn, e["source_id"]), ksql.get_node(vault.conn, e["target_id"])
    return e, s, t


def _write(vault, *ops):
    KnowledgeWriter(vault.conn, vault.config, clock=Clock.from_option(AS_OF)).write(
        KnowledgeWrite(source_event="test", change_summary="visibility", ops=list(ops)))


def _readers(vault, s, t) -> dict[str, bool]:
    """Whether each reader shows the edge between s and t."""
    conn, cfg = vault.conn, vault.config
    name = t["canonical_name"]
    nb = run_query(conn, cfg, "entity_neighbors", now=AS_OF, entity_id=s["id"]).results
    packet = vault.context(f"what about {s['canonical_name']}", entity=s["id"], now=AS_OF, record=False).as_dict()
    brief = vault.brief(s["id"], now=AS_OF).text
    conn_agent = inspect_knowledge(conn, cfg, "connected_nodes", now=AS_OF, node=s["id"], audience="agent")
    conn_person = inspect_knowledge(conn, cfg, "connected_nodes", now=AS_OF, node=s["id"])
    page = node_view(conn, cfg, s["id"], now=AS_OF)
    compiled = compiled_truth(conn, cfg, s["id"], now=AS_OF)
    return {
        "graph_query": any(r["id"] == t["id"] for r in nb),
        "context": any(line.startswith(name) for line in packet["lines"]),
        "brief": name in brief,
        "inspect_agent": any(i["node_id"] == t["id"] for i in conn_agent["result_data"]["connected"]),
        "inspect_person": any(i["node_id"] == t["id"] for i in conn_person["result_data"]["connected"]),
        "node_page": any(x["other_id"] == t["id"] for x in page["edges"]),
        "compiled": name in compiled["markdown"],
    }


AGENT = ("graph_query", "context", "brief", "inspect_agent")
PERSON = ("inspect_person", "node_page", "compiled")


def test_a_local_only_edge_reaches_a_person_but_no_agent(vault, edge):
    e, s, t = edge
    before = _readers(vault, s, t)
    assert all(before.values()), before  # the sample's promoted edge is visible everywhere to begin with
    _write(vault, UpdateEdge(source_id=e["source_id"], relation_type=e["relation_type"], target_id=e["target_id"],
                             payload_set={"visibility_class": "local_only"}))
    after = _readers(vault, s, t)
    assert not any(after[k] for k in AGENT), after
    assert all(after[k] for k in PERSON), after
    # the same through a private endpoint: the node's scope, read now, hides the edge from agents
    _write(vault, UpdateEdge(source_id=e["source_id"], relation_type=e["relation_type"], target_id=e["target_id"],
                             payload_set={"visibility_class": "cloud_allowed"}),
           UpdateNode(id=t["id"], payload_set={"scope": "private"}))
    private = _readers(vault, s, t)
    assert not any(private[k] for k in ("graph_query", "brief", "inspect_agent")), private
    assert private["node_page"] and private["inspect_person"]


def test_a_blocked_edge_reaches_nobody(vault, edge):
    from fastapi.testclient import TestClient

    from kenning.serve.web.app import create_app

    e, s, t = edge
    page = lambda: TestClient(create_app(vault.path, now=AS_OF)).get(f"/node/{s['id']}").text  # noqa: E731
    assert f'href="/node/{t["id"]}"' in page()  # the web UI's node page lists the edge …
    _write(vault, UpdateEdge(source_id=e["source_id"], relation_type=e["relation_type"], target_id=e["target_id"],
                             payload_set={"visibility_class": "blocked"}))
    assert not any(_readers(vault, s, t).values())
    assert f'href="/node/{t["id"]}"' not in page()  # … until the edge is blocked


def test_an_edge_only_incognito_conversations_support_is_hidden_and_not_rescanned(vault, edge):
    e, s, t = edge
    bid = e["payload"]["evidence_bundle_id"]
    convs = sorted({m["work_context_id"] for m in usql.mentions_of_bundles(vault.conn, [bid])})
    assert EdgeGate(vault.conn, vault.config, "person").edges([e]) == [e]
    with write_scope(vault.conn):
        for c in convs:
            isql.set_mode_rule(vault.conn, "conversation", c, "incognito", AS_OF, "user")
    gate = EdgeGate(vault.conn, vault.config, "person")
    assert gate.edges([e]) == [] and gate.hidden == 1
    assert not any(_readers(vault, s, t).values())
    # and the back-link scan reads none of their messages again
    incognito_msgs = {r[0] for r in vault.conn.execute(
        f"SELECT message_id FROM messages WHERE conversation_id IN ({','.join('?' * len(convs))})", convs)}
    with write_scope(vault.conn):
        BacklinkRun(vault.conn, vault.config, Clock.from_option(AS_OF), sweep=True,
                    incognito_json=json.dumps(convs)).run()
    # a sweep forgets every scan mark and reads again: the incognito messages are passed over and stay unscanned,
    # so clearing the mode re-learns them (I70)
    scanned = [r[0] for r in vault.conn.execute(
        f"SELECT observation_id FROM backlink_observations WHERE observation_id IN ({','.join('?' * len(incognito_msgs))})",
        sorted(incognito_msgs))]
    assert incognito_msgs and scanned == []
    assert vault.conn.execute("SELECT count(*) FROM backlink_observations").fetchone()[0] > 0


def test_mcp_tools_read_promoted_edges_as_an_agent(vault, edge):
    e, s, t = edge
    _write(vault, UpdateEdge(source_id=e["source_id"], relation_type=e["relation_type"], target_id=e["target_id"],
                             payload_set={"visibility_class": "local_only"}))
    vault.conn.execute("PRAGMA wal_checkpoint")
    params = StdioServerParameters(command=sys.executable, env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"},
                                   args=["-m", "kenning", "serve", "mcp", "--db", str(vault.path)])

    async def session() -> dict:
        async with Client(params) as client:
            return {
                "neighbors": await client.call_tool("neighbors", {"entity": s["id"], "now": AS_OF}),
                "brief": await client.call_tool("knowledge_brief", {"entity": s["id"], "now": AS_OF}),
                "connected": await client.call_tool("inspect_knowledge", {"query_type": "connected_nodes",
                                                                          "node": s["id"], "now": AS_OF}),
                "context": await client.call_tool("context", {"request": f"about {s['canonical_name']}",
                                                              "entity": s["id"], "now": AS_OF}),
            }

    got = anyio.run(session)
    assert not any(r.is_error for r in got.values()), got
    assert t["id"] not in {r["id"] for r in got["neighbors"].structured_content["results"]}
    assert t["canonical_name"] not in got["brief"].structured_content["text"]
    assert t["id"] not in {i["node_id"] for i in got["connected"].structured_content["result_data"]["connected"]}
    assert not any(line.startswith(t["canonical_name"]) for line in got["context"].structured_content["lines"])
