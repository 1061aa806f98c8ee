"""Context packets (seed 003 §42A.1 novelty gate, §29.8 goals, §5.6 flags): the budget and reservation rules, caps,
hub and generic-reference suppression, novelty within a session, token math, telemetry, truncation."""

from __future__ import annotations

import json
import math

import pytest

from kenning.config import load_config
from kenning.retrieve.context import Candidate, build_context, fill_gate, gate_hit_rate, mark_referenced
from kenning.retrieve.delivery import tokens
from kenning.store import knowledge_query as kq
from kenning.store.connection import open_store

from .delivery_fixtures import NOW, Graph, directive, goal, obligation, rich_graph

GATE = load_config().knowledge.delivery.gate


@pytest.fixture
def conn(tmp_path):
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()


def cands(source: str, n: int, tok: int, priority: float, prefix: str | None = None) -> list[Candidate]:
    out = []
    for i in range(n):
        name = f"{prefix or source}-{i:02d}"
        out.append(Candidate({"id": name, "canonical_name": name}, source, priority, tokens=tok))
    return out


def kept(**sources: list[Candidate]) -> dict[str, list[Candidate]]:
    return {s: sources.get(s, []) for s in ("work_context", "participants", "recent", "cross_context")}


# ---- the fill rules (§42A.1.4 steps 3–5), on candidates with known tokens -----------------------------------

def test_an_empty_source_releases_its_reservation_to_the_pool():
    f = fill_gate(kept(work_context=cands("work_context", 12, 10, 0.9),
                       cross_context=cands("cross_context", 3, 10, 0.1)), 100, GATE)
    assert f.released == 40  # participants had no candidates: its 40 reserved tokens went to the pool
    assert f.used == {"work_context": 70, "participants": 0, "recent": 0, "cross_context": 30}
    assert f.total == 100 and f.unused == 0


def test_a_source_with_candidates_keeps_its_reservation_even_at_the_lowest_priority():
    f = fill_gate(kept(work_context=cands("work_context", 12, 10, 0.9),
                       participants=cands("participants", 2, 20, 0.05),
                       cross_context=cands("cross_context", 3, 10, 0.1)), 100, GATE)
    assert f.released == 0
    assert f.used["participants"] == 40 and f.used["cross_context"] == 30 and f.used["work_context"] == 30


def test_each_source_is_capped_and_starvation_is_reported():
    f = fill_gate(kept(recent=cands("recent", 10, 20, 0.99), work_context=cands("work_context", 40, 10, 0.5)),
                  500, GATE)
    assert f.used["recent"] == 80  # recent_cap_tokens, though recent has the best priorities
    assert f.used["work_context"] == 300
    assert {"source": "recent", "requested_tokens": 200, "granted_tokens": 80} in f.starvation
    assert f.total == 380


def test_surplus_goes_to_the_best_remaining_candidate_of_any_source():
    # a reserved source that cannot fill its reservation leaves the rest to others
    f = fill_gate(kept(participants=cands("participants", 1, 10, 0.2),
                       work_context=cands("work_context", 30, 10, 0.5)), 120, GATE)
    assert f.unused == 30 and f.used["participants"] == 10 and f.used["work_context"] == 110
    # an item too big for what is left is skipped; the next smaller one still fits
    big = Candidate({"id": "big", "canonical_name": "big"}, "work_context", 0.9, tokens=50)
    small = cands("recent", 1, 5, 0.1)
    f = fill_gate(kept(work_context=[big] + cands("work_context", 1, 40, 0.8), recent=small), 95, GATE)
    assert [c.id for c in f.chosen] == ["big", "work_context-00", "recent-00"] and f.total == 95


def test_priority_order_across_sources_and_the_budget_bound():
    f = fill_gate(kept(work_context=cands("work_context", 5, 10, 0.3),
                       recent=cands("recent", 3, 10, 0.8)), 40, GATE)
    assert [c.source for c in f.chosen] == ["recent"] * 3 + ["work_context"]
    assert f.total == 40


def test_token_math_is_the_seeds_ceil_of_length_over_3_5():
    assert tokens("Anna (sister)", 3.5) == math.ceil(13 / 3.5) == 4
    assert tokens("", 3.5) == 0 and tokens("abcdefg", 3.5) == 2 and tokens("abcdefgh", 3.5) == 3


# ---- packets on a real store ---------------------------------------------------------------------------------

def test_packet_lines_tokens_and_telemetry(conn):
    g = rich_graph(conn)
    p = build_context(conn, g.config, "Should I call Anna tonight?", now=NOW)
    d = p.as_dict()
    ent = p.sections["entities"]
    assert ent[0]["line"] == "Anna (person)" and p.primary["name"] == "Anna"
    assert "Lisbon (lives in)" in d["lines"] and "me (← has sister)" in d["lines"]
    for items in p.sections.values():
        for item in items:
            assert item["tokens"] == math.ceil(len(item["line"]) / 3.5)
    assert d["tokens_used"] == sum(i["tokens"] for i in ent) <= 500
    for name in ("total_candidates_before_filter", "total_candidates_after_filter", "source_token_share",
                 "unused_reserved_tokens", "reservation_released_tokens", "starvation_events",
                 "hub_nodes_suppressed", "generic_refs_excluded", "schema_version", "observation_id"):
        assert name in d and name in d["telemetry"]
    assert d["reservation_released_tokens"] == 40 + 30  # nobody else named, no cross-context candidate
    stored = kq.get_packet(conn, p.packet_id)
    assert stored["lines"] == p.lines and stored["telemetry"]["tokens_used"] == d["tokens_used"]
    assert stored["gate_node_ids"] == [i["id"] for i in ent]


def test_goals_obligations_and_directives_join_the_packet(conn):
    g = rich_graph(conn)
    g.node("Prefers trains over flights", "memory_directive", payload=directive("Prefers trains over flights"))
    g.node("Never book red-eye flights", "memory_directive",
           payload=directive("Never book red-eye flights", priority="absolute", memory_type="constraint"))
    g.node("Renew passport", "obligation", payload=obligation("Renew passport", "2026-05-01T00:00:00Z"))
    g.node("Pay Anna back", "obligation", payload=obligation("Pay Anna back", "2026-03-12T00:00:00Z",
                                                              status="completed"))
    p = build_context(conn, g.config, "book trains to see Anna", now=NOW)
    directives = [i["line"] for i in p.sections["directives"]]
    assert "Preference: Prefers trains over flights" in directives  # the request's words match it
    assert "Constraint: Never book red-eye flights" in directives  # absolute: applies to every request
    goals = p.sections["goals"]
    assert sum(i["tokens"] for i in goals) <= 100
    # §29.8: primary-entity match ranks first among goals never referenced
    assert goals[0]["name"] == "Hike the Rota Vicentina with Anna"
    obls = [i["line"] for i in p.sections["obligations"]]
    assert obls == ["Due 2026-03-15: Send Anna the hiking maps"]  # completed, and beyond 14 days, left out


def test_goal_injection_stays_within_100_tokens_most_recently_referenced_first(conn):
    g = Graph(conn)
    g.person("Henderson")
    for i in range(6):
        g.node(f"Goal {i} for Henderson", "goal", payload=goal(
            "Resolve the Henderson matter favourably and on time " * 2, linked_entity_ids=[g.ids["Henderson"]],
            last_referenced_at=f"2026-03-0{i + 1}T00:00:00Z"))
    p = build_context(conn, g.config, "Henderson", now=NOW)
    goals = p.sections["goals"]
    assert goals and sum(i["tokens"] for i in goals) <= 100
    assert goals[0]["name"] == "Goal 5 for Henderson"  # the most recently referenced


def test_hubs_and_generic_references_are_suppressed(conn):
    cfg = load_config(overrides={"knowledge": {"store": {"event_log": "off"},
                                               "delivery": {"gate": {"suppress_hub_nodes_above_edge_count": 3}}}})
    g = Graph(conn, cfg)
    g.person("Anna")
    g.person("Hubert")
    for i in range(3):
        g.person(f"friend {i}")
        g.edge("Hubert", "domain_knows", f"friend {i}")
    g.edge("Anna", "domain_knows", "Hubert")  # Hubert now has 4 current edges: above 3
    g.node("the document", "work_product")
    g.edge("Anna", "referenced_in", "the document")
    g.person("Bea")
    g.edge("Anna", "domain_knows", "Bea")
    p = build_context(conn, cfg, "Anna", now=NOW)
    names = [i["name"] for i in p.sections["entities"]]
    assert "Bea" in names and "Hubert" not in names and "the document" not in names
    assert p.telemetry["hub_nodes_suppressed"] == 1 and p.telemetry["generic_refs_excluded"] == 1


def test_the_seed_hub_threshold_is_more_than_150_current_edges(conn):
    g = Graph(conn)
    assert g.config.knowledge.delivery.gate.suppress_hub_nodes_above_edge_count == 150
    g.person("Anna")
    for i in range(150):
        g.person(f"p{i}")
    ops_rel = "domain_knows"
    g.edge("Anna", ops_rel, "p0")
    for i in range(1, 150):
        g.edge("p0", ops_rel, f"p{i}")
    # p0: Anna + 149 others = 150 edges — not a hub
    assert "p0" in [i["name"] for i in build_context(conn, g.config, "Anna", now=NOW, record=False)
                    .sections["entities"]]
    g.person("extra")
    g.edge("p0", ops_rel, "extra")  # 151: a hub
    p = build_context(conn, g.config, "Anna", now=NOW, record=False)
    assert "p0" not in [i["name"] for i in p.sections["entities"]] and p.telemetry["hub_nodes_suppressed"] == 1


def test_recent_means_changed_in_the_last_14_days(conn):
    g = Graph(conn)
    g.person("Old Friend", at="2026-02-01T00:00:00.000Z")
    g.person("New Friend", at="2026-03-05T00:00:00.000Z")
    p = build_context(conn, g.config, "nothing named here", now=NOW)
    recent = [i["name"] for i in p.sections["entities"] if i["source"] == "recent"]
    assert recent == ["New Friend"]


def test_novelty_within_a_session(conn):
    g = rich_graph(conn)
    first = build_context(conn, g.config, "Should I call Anna tonight?", now=NOW, session="s1")
    again = build_context(conn, g.config, "Should I call Anna tonight?", now=NOW, session="s1")
    given = {i["id"] for items in first.sections.values() for i in items}
    assert given and not given & {i["id"] for items in again.sections.values() for i in items}
    assert again.telemetry["novelty_suppressed"] == len(first.sections["entities"])
    other = build_context(conn, g.config, "Should I call Anna tonight?", now=NOW, session="s2")
    assert other.lines == first.lines  # another session starts fresh
    assert kq.session_items(conn, "s1") == given


def test_gate_hit_rate_from_later_requests_and_explicit_marks(conn):
    g = rich_graph(conn)
    first = build_context(conn, g.config, "Should I call Anna tonight?", now=NOW, session="s")
    n = len(first.sections["entities"])
    build_context(conn, g.config, "and what about Marco?", now=NOW, session="s")
    assert kq.get_packet(conn, first.packet_id)["referenced_node_ids"] == [g.ids["Marco"]]
    assert mark_referenced(conn, first.packet_id, [g.ids["Lisbon"]]) == pytest.approx(2 / n)
    rate = gate_hit_rate(conn, g.config, session="s")
    # the second packet gave nothing new (its gate is empty), so it does not count
    assert rate["packets"] == 1 and rate["referenced"] == 2 and rate["gate_hit_rate"] == pytest.approx(2 / n)


def test_conflict_flags_from_the_conflict_score(conn):
    g = Graph(conn)
    g.person("Anna")
    g.person("Carla")
    g.person("Dora")
    g.edge("Anna", "domain_knows", "Carla")
    g.edge("Anna", "domain_knows", "Dora")
    g.evidence("Carla", 12, 12)  # α = β = 14: balance 1, mass 28/50 = 0.56 → caution
    g.evidence("Dora", 17, 17)   # α = β = 19: mass 0.76 → distinguish
    lines = build_context(conn, g.config, "Anna", now=NOW).lines
    assert "[caution] Carla (knows)" in lines and "[distinguish] Dora (knows)" in lines


def test_a_tiny_budget_and_the_entity_option(conn):
    g = rich_graph(conn)
    p = build_context(conn, g.config, "something", now=NOW, entity="Lisbon", budget=10)
    assert p.primary["name"] == "Lisbon" and p.telemetry["tokens_used"] <= 10
    assert p.sections["entities"][0]["line"] == "Lisbon (place)"


def test_truncation_past_the_ceiling(conn):
    g = rich_graph(conn)
    cfg = load_config(overrides={"knowledge": {"store": {"event_log": "off"}, "delivery": {"query_ceilings": {
        "context": {"p50_ms": 0.000001, "p95_ms": 0.000001, "ceiling_ms": 0.000001}}}}})
    p = build_context(conn, cfg, "Should I call Anna tonight?", now=NOW)
    assert p.telemetry["truncated"] and "ceiling" in p.telemetry["truncation_reason"]
    assert p.sections["goals"] == [] and p.sections["obligations"] == []  # later steps were skipped


def test_same_input_same_packet(tmp_path):
    outs = []
    for name in ("a", "b"):
        c = open_store(tmp_path / f"{name}.db")
        g = rich_graph(c)
        d = build_context(c, g.config, "Should I call Anna tonight?", now=NOW, session="s").as_dict()
        d.pop("latency_ms"), d["telemetry"].pop("latency_ms")
        outs.append(json.dumps(d, sort_keys=True))
        c.close()
    assert outs[0] == outs[1]


def test_context_cli_json_and_text(tmp_path, cli):
    db = tmp_path / "v.db"
    c = open_store(db)
    rich_graph(c)
    c.close()
    d = json.loads(cli("context", "Should I call Anna tonight?", "--as-of", NOW, "--session", "x", "--json",
                       db=db).stdout)
    assert d["lines"][0] == "Anna (person)" and d["tokens_used"] > 0 and d["recorded"]
    text = cli("context", "Should I call Anna tonight?", "--as-of", NOW, "--session", "x", db=db).stdout
    assert "nothing new" in text  # the same session: everything was given already
    bad = cli("context", "x", "--entity", "Nobody", "--as-of", NOW, db=db, check=False)
    assert bad.returncode == 2 and "no node 'Nobody'" in bad.stdout + bad.stderr
