"""A small node store built through the single writer, for the delivery tests (graph queries, context, brief)."""

from __future__ import annotations

from typing import Any

from kenning.config import load_config
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS
from kenning.knowledge.ops import CreateEdge, CreateNode, Evidence, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock

T0 = "2026-03-01T10:00:00.000Z"
NOW = "2026-03-10T10:00:00.000Z"


class Graph:
    """Nodes by name → id, written one commit at a time (so every node has real α/β, aliases, FTS rows)."""

    def __init__(self, conn, config=None):
        self.conn = conn
        self.config = config or load_config(overrides={"knowledge": {"store": {"event_log": "off"}}})
        self.ids: dict[str, str] = {}

    def writer(self, at: str = T0) -> KnowledgeWriter:
        return KnowledgeWriter(self.conn, self.config, clock=Clock(at))

    def node(self, name: str, kind: str = "world_entity", *, payload: dict[str, Any] | None = None,
             aliases: tuple[str, ...] = (), at: str = T0, provenance: tuple[ProvenanceIn, ...] = (),
             evidence: tuple[str, ...] = ()) -> str:
        res = self.writer(at).write(KnowledgeWrite(source_event="test", change_summary=f"create {name}", ops=[
            CreateNode(node_kind=kind, canonical_name=name, payload=payload or EXAMPLE_PAYLOADS[kind],
                       aliases=tuple({"alias": a} for a in aliases), provenance=provenance, evidence=evidence)]))
        self.ids[name] = res.node_ids[0]
        return res.node_ids[0]

    def person(self, name: str, **kw) -> str:
        return self.node(name, payload={"entity_type": "person", "description": kw.pop("description", "a person")},
                         **kw)

    def edge(self, a: str, rel: str, b: str, *, at: str = T0, confidence: float = 0.8) -> None:
        self.writer(at).write(KnowledgeWrite(source_event="test", change_summary=f"{a} {rel} {b}", ops=[
            CreateEdge(source_id=self.ids[a], relation_type=rel, target_id=self.ids[b], confidence=confidence)]))

    def evidence(self, name: str, support: int, against: int, at: str = T0) -> None:
        ops = [Evidence(id=self.ids[name], event_type="confirmed_by_user") for _ in range(support)]
        ops += [Evidence(id=self.ids[name], event_type="confirmed_by_user", contradicts=True) for _ in range(against)]
        self.writer(at).write(KnowledgeWrite(source_event="test", change_summary="evidence", ops=ops))


def goal(text: str, **extra: Any) -> dict[str, Any]:
    return {"goal_description": text, **extra}


def obligation(text: str, due: str, status: str = "pending", **extra: Any) -> dict[str, Any]:
    return {"obligation_description": text, "status": status,
            "deadline": {"date": due, "type": "courtesy", "consequence_of_missing": "late", "extendable": True},
            **extra}


def directive(summary: str, priority: str = "default", memory_type: str = "preference") -> dict[str, Any]:
    return {"memory_type": memory_type, "summary": summary, "assertion_class": "preference",
            "applies_when": ["always"], "scope": "global", "source_certainty": "user_explicitly_stated",
            "priority_class": priority}


def quote(text: str, when: str, n: int) -> ProvenanceIn:
    return ProvenanceIn(entry_type="conversation_statement", source_ref=f"test:{n}", created_at=when,
                        source_description=f"you in “Chat {n}” ({when[:10]})", verbatim_excerpt=text,
                        evidence_event="learned_from_chat")


def rich_graph(conn, config=None) -> Graph:
    """Anna with family, places, a workplace, concepts, goals, an obligation, a procedure and quoted sources."""
    g = Graph(conn, config)
    g.person("Anna", aliases=("Annie",), description="your sister, a nurse in Lisbon",
             provenance=tuple(quote(t, w, i) for i, (t, w) in enumerate([
                 ("My sister Anna lives in Lisbon and works nights at the hospital.", "2026-01-05T09:00:00.000Z"),
                 ("Anna is thinking about moving to Porto next year.", "2026-02-11T09:00:00.000Z"),
                 ("Anna said the night shifts are exhausting her.", "2026-02-20T09:00:00.000Z"),
                 ("Anna and I want to hike the Rota Vicentina together.", "2026-02-27T09:00:00.000Z")])))
    g.node("me", payload={"entity_type": "person", "description": "the vault owner"})
    for name, etype in [("Lisbon", "place"), ("Porto", "place"), ("Hospital de Santa Maria", "organization"),
                        ("Marco", "person"), ("Rota Vicentina", "place")]:
        g.node(name, payload={"entity_type": etype, "description": f"a {etype}"})
    g.edge("me", "domain_has_sister", "Anna")
    g.edge("Anna", "domain_lives_in", "Lisbon")
    g.edge("Anna", "domain_works_at", "Hospital de Santa Maria")
    g.edge("Anna", "domain_has_partner", "Marco")
    g.edge("Anna", "domain_plans_to_visit", "Rota Vicentina")
    g.node("night shift", "domain_concept", payload={"concept_name": "night shift", "definition":
                                                     "Working overnight hours, as Anna does at the hospital",
                                                     "applies_in": ["Anna's work"]})
    g.edge("Anna", "addresses_concept", "night shift")
    g.node("Hike the Rota Vicentina with Anna", "goal",
           payload=goal("Walk the Rota Vicentina with Anna in the spring", linked_entity_ids=[g.ids["Anna"]],
                        primary_entity_id=g.ids["Anna"], time_horizon="spring 2026"))
    g.node("Help Anna move to Porto", "goal",
           payload=goal("Help Anna find a flat in Porto", linked_entity_ids=[g.ids["Anna"]]))
    g.node("Send Anna the hiking maps", "obligation",
           payload=obligation("Send Anna the hiking maps", "2026-03-15T12:00:00Z",
                              linked_entity_refs=[g.ids["Anna"]]))
    g.node("Book the Lisbon trip", "procedure", payload={
        "canonical_name": "Book the Lisbon trip", "description": "How you book a visit to Anna",
        "use_conditions": ["visiting Anna"], "source": "manual_demonstration",
        "steps": [{"step_index": 1, "intent": "Compare flights to Lisbon", "capability_area": "travel"}],
        "environment": {"app_entity_id": "app-browser", "app_name": "Browser", "platform": "mac"}})
    g.edge("Book the Lisbon trip", "applies_to", "Anna")
    return g
