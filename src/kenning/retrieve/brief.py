"""The knowledge brief (seed 003 §41.4): "What do you know about Henderson?" in 200–300 tokens — related entities,
concepts, goals, procedures, obligations, recent activity, confidence and what is stale.

Deterministic text from the node store, no model at render time: every section's items are ranked, then added
one per section per round while the brief stays within max_tokens (``ceil(len / 3.5)``), so a rich node fills
its 200–300 tokens with the best of every section and a sparse one says what it has."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge import said
from kenning.knowledge.confidence import half_life_for
from kenning.knowledge.read import current_breakdown
from kenning.retrieve.delivery import Deadline, as_utc, hint, relation_label, tokens
from kenning.retrieve.graph_query import entity, goal_line, goals_for, rank_goals
from kenning.sources.timestamps import parse_utc
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq
from kenning.knowledge.edge_gate import EdgeGate, gated_ended_edges, gated_neighbors

_OWN_SECTION = {"goal", "obligation", "domain_concept", "procedure", "standing_procedure"}
# (key, label) in reading order; the order is also the order items are added each round.
SECTIONS = (("related", "Related"), ("goals", "Goals"), ("obligations", "Obligations"), ("concepts", "Concepts"),
            ("procedures", "Procedures"), ("history", "No longer"), ("activity", "Recent activity"),
            ("stale", "Stale"))


@dataclass
class Brief:
    node: dict[str, Any]
    text: str
    tokens: int
    sections: dict[str, list[str]]
    confidence: dict[str, Any]
    stale: list[dict[str, Any]]
    truncated: bool = False
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "text": self.text, "tokens": self.tokens, "sections": self.sections,
                "confidence": self.confidence, "stale": self.stale, "truncated": self.truncated,
                "skipped_sections": self.skipped}


def knowledge_brief(conn: apsw.Connection, config: Config, node: str, *, now: str,
                    gate: EdgeGate | None = None) -> Brief:
    """The brief for the node ``node`` names (id, id prefix, exact name or alias)."""
    return build_brief(conn, config, entity(conn, node), now=now, gate=gate)


def build_brief(conn: apsw.Connection, config: Config, node: dict[str, Any], *, now: str,
                deadline: Deadline | None = None, gate: EdgeGate | None = None) -> Brief:
    """``gate``: how promoted edges are read (G64); a brief is text for a model unless a caller says otherwise."""
    gate = gate or EdgeGate(conn, config, "agent")
    now = as_utc(now)
    b = config.knowledge.delivery.brief
    cpt = config.knowledge.delivery.gate.chars_per_token
    scan = config.knowledge.delivery.neighbor_scan_limit
    nid = node["id"]
    items: dict[str, list[str]] = {k: [] for k, _ in SECTIONS}
    skipped: list[str] = []
    stale: list[dict[str, Any]] = []
    breakdown = current_breakdown(conn, config, node, now)

    def late(section: str) -> bool:
        if deadline is not None and deadline.expired():
            skipped.append(section)
            return True
        return False

    neighbours = gated_neighbors(gate, nid, limit=b.max_related * 3, scan_limit=scan)
    for n in neighbours:
        if n["node_kind"] not in _OWN_SECTION and len(items["related"]) < b.max_related:
            items["related"].append(f"{n['canonical_name']} ({hint(n['relation_type'], n['direction'])})")
        _note_stale(config, n, now, stale)
    if not late("goals"):
        goals = rank_goals(goals_for(conn, config, [nid], limit=config.knowledge.delivery.goals.max_items,
                                     gate=gate), nid)
        items["goals"] = [goal_line(g, short=True)[len("Goal: "):] for g in goals]
        for g in goals:
            _note_stale(config, g, now, stale)
    if not late("obligations"):
        obls = {n["id"]: n for n in neighbours if n["node_kind"] == "obligation"}
        for n in kq.linked_by_payload(conn, "obligation", [nid], limit=config.knowledge.delivery.obligations.max_items):
            obls.setdefault(n["id"], n)
        for n in sorted(obls.values(), key=lambda n: (_due(n) or "9", n["id"])):
            due = _due(n)
            status = (n.get("payload") or {}).get("status")
            when = f"due {due[:10]}" + (", overdue" if due and due < now and status not in ("completed", "waived")
                                        else "") if due else "no date"
            items["obligations"].append(f"{n['canonical_name']} ({when}{', ' + status if status else ''})")
            _note_stale(config, n, now, stale)
    if not late("concepts"):
        concepts = {n["id"]: n for n in neighbours if n["node_kind"] == "domain_concept"}
        phrase = '"' + node["canonical_name"].replace('"', '""') + '"'
        for n in kq.fts_match(conn, phrase, limit=5, kinds=["domain_concept"]):
            if n["id"] != nid:
                concepts.setdefault(n["id"], n)
        items["concepts"] = [n["canonical_name"] for n in concepts.values()]
    if not late("procedures"):
        procs = {n["id"]: n for n in neighbours if n["node_kind"] in ("procedure", "standing_procedure")}
        if node["node_kind"] == "application":
            for n in kq.procedures_of_app(conn, nid, limit=b.max_related):
                procs.setdefault(n["id"], n)
        items["procedures"] = [n["canonical_name"] for n in procs.values()]
    if not late("history"):
        for e in gated_ended_edges(gate, nid, limit=b.max_history):
            label = relation_label(e["relation_type"])
            span = f"{(e['start_date'] or '')[:10]} to {(e['end_date'] or '')[:10]}"
            who = f"{e['canonical_name']} {label} this" if e["direction"] == "in" else f"{label} {e['canonical_name']}"
            items["history"].append(f"{who} ({span})")
    if not late("activity"):
        prov = kq.provenance_summary(conn, nid, limit=b.max_activity)
        threads = kq.threads_of_nodes(conn, [nid], limit=50)
        if prov.get("n"):
            items["activity"].append(f"{prov['n']} source(s) in {len(threads)} conversation(s), "
                                     f"first {(prov['first'] or '')[:10]}, last {(prov['last'] or '')[:10]}")
        for p in prov["latest"]:
            quote = (p.get("verbatim_excerpt") or "").strip().replace("\n", " ")
            where = p.get("source_description") or p["entry_type"]
            items["activity"].append(f"{where}" + (f": “{quote[:110]}”" if quote else ""))
    _note_stale(config, node, now, stale, itself=True)
    items["stale"] = [s["text"] for s in stale]
    conf = {"confidence_now": round(breakdown["confidence"], 4), "confidence_stored": round(node["confidence"], 4),
            "alpha": node["alpha"], "beta": node["beta"], "beta_mean": round(breakdown["beta_mean"], 4),
            "decay": round(breakdown["decay"], 4), "age_days": round(breakdown["age_days"], 1),
            "conflict_score": round(breakdown["conflict_score"], 4), "conflict_flag": breakdown.get("flag"),
            "lifecycle_state": node["lifecycle_state"], "staleness_state": node["staleness_state"]}
    # when it was last said, beside the decayed value (H3): 0.00 "now" on a 2023 quote is age, not doubt
    last = said.last_said(ksql.get_provenance(conn, nid))
    conf.update(last_said=last[:10] if last else None, days_since_said=said.days_between(last, now) if last else None)
    header = _header(node, conf)
    chosen, text = _fit(header, items, b.max_tokens, cpt)
    return Brief(node={"id": nid, "name": node["canonical_name"], "kind": node["node_kind"]}, text=text,
                 tokens=tokens(text, cpt), sections=chosen, confidence=conf, stale=stale,
                 truncated=bool(skipped), skipped=skipped)


def _header(node: dict[str, Any], c: dict[str, Any]) -> str:
    payload = node.get("payload") or {}
    what = payload.get("entity_type") or node["node_kind"].replace("_", " ")
    desc = (payload.get("description") or "").strip()
    flag = f" [{c['conflict_flag']}]" if c["conflict_flag"] else ""
    line = f"{node['canonical_name']} — {what}" + (f", {desc}" if desc and desc != what else "") + "."
    return (f"{line} Confidence {c['confidence_now']:.2f} now (Beta mean {c['beta_mean']:.2f} from α {c['alpha']:.1f}"
            f" / β {c['beta']:.1f}, decay {c['decay']:.2f} over {c['age_days']:.0f} days"
            + (f"; last said {c['last_said']}, {said.ago(c['days_since_said'])}" if c.get("last_said") else "")
            + f"); {c['lifecycle_state']}, {c['staleness_state']}{flag}.")


def _render(header: str, chosen: dict[str, list[str]]) -> str:
    lines = [header]
    for key, label in SECTIONS:
        if chosen.get(key):
            lines.append(f"{label}: " + "; ".join(chosen[key]) + ".")
    return "\n".join(lines)


def _fit(header: str, items: dict[str, list[str]], max_tokens: int, cpt: float) -> tuple[dict[str, list[str]], str]:
    """Add items round-robin over the sections (best first within each) while the text stays ≤ max_tokens."""
    chosen: dict[str, list[str]] = {k: [] for k, _ in SECTIONS}
    full = {k: False for k, _ in SECTIONS}
    text = _render(header, chosen)
    rnd = 0
    while not all(full.values()):
        for key, _label in SECTIONS:
            if full[key]:
                continue
            if rnd >= len(items[key]):
                full[key] = True
                continue
            trial = {**chosen, key: chosen[key] + [items[key][rnd]]}
            t = _render(header, trial)
            if tokens(t, cpt) <= max_tokens:
                chosen, text = trial, t
            else:
                full[key] = True  # this section's next item does not fit; later, shorter sections still may
        rnd += 1
    return {k: v for k, v in chosen.items() if v}, text


def _due(n: dict[str, Any]) -> str | None:
    d = ((n.get("payload") or {}).get("deadline") or {}).get("date")
    try:
        return as_utc(d) if d else None
    except ValueError:
        return None


def _note_stale(config: Config, n: dict[str, Any], now: str, out: list[dict[str, Any]], *,
                itself: bool = False) -> None:
    """A node is stale when its staleness_state says so or its last verification (else creation) is older than
    stale_after_half_lives × its kind's half-life (D23)."""
    if any(s["id"] == n["id"] for s in out):
        return
    name = "this node" if itself else n["canonical_name"]
    if n["staleness_state"] != "fresh":
        out.append({"id": n["id"], "name": n["canonical_name"], "reason": n["staleness_state"],
                    "text": f"{name} ({n['staleness_state'].replace('_', ' ')})"})
        return
    hl = half_life_for(n["node_kind"], config.knowledge.confidence)
    ref = n.get("last_verified_at") or n.get("created_at")
    if hl is None or not ref:
        return
    try:
        age = (parse_utc(now) - parse_utc(as_utc(ref))).total_seconds() / 86400.0
    except ValueError:
        return
    if age > hl * config.knowledge.delivery.brief.stale_after_half_lives:
        out.append({"id": n["id"], "name": n["canonical_name"], "reason": "unverified", "age_days": round(age),
                    "text": f"{name} (not verified for {age:.0f} days)"})

