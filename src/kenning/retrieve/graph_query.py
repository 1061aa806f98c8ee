"""The Graph Query API (seed 003 §43): typed read queries over the node store, each with the seed's latency ceiling.

``run_query(conn, config, kind, now=…, **args)`` → ``QueryResult{results, latency_ms, truncated,
truncation_reason}``. A query checks its deadline between steps (each step one bounded, indexed SQL statement);
past the kind's ceiling it stops and returns what it has, ``truncated`` with the reason (§43.2 "must fail or
degrade"). No model runs here; reads never write and never trigger extraction (§41.9)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import apsw

from kenning.config import Config
from kenning.knowledge.edge_gate import EdgeGate, gated_neighbors
from kenning.knowledge.contracts import description_of
from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.read import current_breakdown, resolve_node
from kenning.knowledge.writer import normalize_alias
from kenning.retrieve.delivery import (Deadline, as_utc, flag_of, flagged, fts_expression, hint, relation_label, tokens,
                                      words)
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq

_TOKEN = re.compile(r"\w+")
KINDS = ("entity_lookup", "entity_neighbors", "entity_cards", "procedure_bundle", "goal_context", "knowledge_brief",
         "related_threads", "entity_scoped_search")
LOOKUPS = ("id", "alias", "exact_name")
_PROCEDURE_KINDS = ("procedure", "standing_procedure")


class QueryError(KnowledgeError):
    """A query a caller can fix: unknown kind, a missing or unknown argument, a bad value."""


@dataclass
class QueryResult:
    query_kind: str
    results: list[dict[str, Any]]
    latency_ms: float
    truncated: bool = False
    truncation_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"query_kind": self.query_kind, "results": self.results, "latency_ms": round(self.latency_ms, 3),
                "truncated": self.truncated, "truncation_reason": self.truncation_reason}


@dataclass
class _Ctx:
    conn: apsw.Connection
    config: Config
    now: str
    deadline: Deadline
    results: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    reason: str | None = None
    audience: str = "agent"
    _gate: EdgeGate | None = None

    @property
    def gate(self) -> EdgeGate:
        """Promoted edges are read through §42A.2.12A (G64)."""
        if self._gate is None:
            self._gate = EdgeGate(self.conn, self.config, self.audience)
        return self._gate

    def stop(self, step: str) -> bool:
        """True (and the result marked truncated) when the ceiling has passed; ``step`` says what was left."""
        if self.deadline.expired():
            self.cut(f"ceiling {self.deadline.ceiling_ms:g} ms reached after {self.deadline.elapsed_ms():.1f} ms; "
                     f"{step}")
            return True
        return False

    def cut(self, reason: str) -> None:
        if not self.truncated:
            self.truncated, self.reason = True, reason


def ceiling_key(kind: str, args: dict[str, Any]) -> str:
    if kind == "entity_neighbors":
        depth = args.get("depth") or 1
        if depth not in (1, 2, "1", "2"):
            raise QueryError(f"depth must be 1 or 2 (got {depth!r})")
        return f"entity_neighbors_depth{int(depth)}"
    return kind


def run_query(conn: apsw.Connection, config: Config, kind: str, *, now: str, **args: Any) -> QueryResult:
    """One §43 query. Entity arguments take an id (or anything `kenning node show` accepts: id prefix, name,
    alias). Unknown kinds and arguments are refused with the accepted ones named."""
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise QueryError(f"unknown query kind {kind!r}; kinds: {', '.join(KINDS)}")
    params = inspect.signature(handler).parameters
    accepted = [p for p in params if p != "ctx"]
    unknown = sorted(k for k, v in args.items() if k not in accepted and v is not None)
    if unknown:
        raise QueryError(f"{kind} takes {', '.join(accepted)}; not {', '.join(unknown)}")
    missing = [p for p, spec in params.items() if p != "ctx" and spec.default is inspect.Parameter.empty
               and args.get(p) is None]
    if missing:
        raise QueryError(f"{kind} needs {', '.join(missing)}")
    d = config.knowledge.delivery
    ctx = _Ctx(conn, config, as_utc(now), Deadline(d.query_ceilings[ceiling_key(kind, args)].ceiling_ms))
    handler(ctx, **{k: v for k, v in args.items() if v is not None})
    return QueryResult(kind, ctx.results, ctx.deadline.elapsed_ms(), ctx.truncated, ctx.reason)


# ---- shared pieces -----------------------------------------------------------------------------------------

def entity(conn: apsw.Connection, ref: str) -> dict[str, Any]:
    """The node ``ref`` names: an exact id first (one primary-key read), else what `kenning node show` accepts."""
    node = kq.node_by_id(conn, ref)
    if node is None:
        node = kq.node_by_id(conn, resolve_node(conn, ref)["id"])
    return node


def compact_card(node: dict[str, Any], config: Config) -> dict[str, Any]:
    payload = node.get("payload") or {}
    desc = payload.get("description") or description_of(node["node_kind"], payload) or ""
    card = {"id": node["id"], "name": node["canonical_name"], "kind": node["node_kind"],
            "confidence": round(node["confidence"], 4), "lifecycle_state": node["lifecycle_state"],
            "staleness_state": node["staleness_state"], "is_active": bool(node["is_active"]),
            "conflict_flag": flag_of(node, config), "description": desc[:200]}
    if payload.get("entity_type"):
        card["entity_type"] = payload["entity_type"]
    return card


def neighbor_item(n: dict[str, Any], config: Config, *, depth: int = 1, via: str | None = None) -> dict[str, Any]:
    return {"id": n["id"], "name": n["canonical_name"], "kind": n["node_kind"], "relation": n["relation_type"],
            "relation_label": relation_label(n["relation_type"]), "direction": n["direction"], "depth": depth,
            "via": via, "edge_confidence": round(n["edge_confidence"], 4), "confidence": round(n["confidence"], 4),
            "conflict_flag": flag_of(n, config), "since": n["start_date"]}


def goal_status(node: dict[str, Any]) -> str:
    return (node.get("payload") or {}).get("goal_status") or "active"


def goal_line(node: dict[str, Any], *, short: bool = False) -> str:
    payload = node.get("payload") or {}
    name = node["canonical_name"]
    text = payload.get("narrative") or payload.get("goal_description") or ""
    horizon = payload.get("time_horizon")
    line = f"Goal: {name}"
    if not short and text and text.strip().lower() != name.strip().lower():
        line += f" — {text.strip()}"
    if not short and horizon:
        line += f" ({horizon})"
    return line


def goals_for(conn: apsw.Connection, config: Config, node_ids: list[str], *, limit: int,
              gate: EdgeGate | None = None) -> list[dict[str, Any]]:
    """Active goals linked to any of ``node_ids``: by an edge (promoted ones through the reader's gate, G64), or
    named in the goal's payload (§29.3 linked_entity_ids / primary_entity_id)."""
    scan = config.knowledge.delivery.neighbor_scan_limit
    gate = gate or EdgeGate(conn, config)
    found: dict[str, dict[str, Any]] = {}
    for nid in node_ids:
        for g in gated_neighbors(gate, nid, limit=limit, scan_limit=scan):
            if g["node_kind"] == "goal":
                found.setdefault(g["id"], g)
    for g in kq.linked_by_payload(conn, "goal", node_ids, limit=limit):
        found.setdefault(g["id"], g)
    return [g for g in found.values() if goal_status(g) == "active"]


def rank_goals(goals: list[dict[str, Any]], primary_id: str | None) -> list[dict[str, Any]]:
    """§29.8: most recently referenced > primary entity match > highest confidence (then name, id)."""
    def key(g: dict[str, Any]) -> tuple:
        p = g.get("payload") or {}
        ref = p.get("last_referenced_at") or ""
        primary = primary_id is not None and (p.get("primary_entity_id") == primary_id)
        return (_desc(ref), not primary, -g["confidence"], g["canonical_name"], g["id"])
    return sorted(goals, key=key)


def _desc(text: str) -> tuple:
    """Sort key putting later ISO strings first and missing ones last."""
    return (0, tuple(-ord(c) for c in text)) if text else (1, ())


def fill_goals(goals: list[dict[str, Any]], max_tokens: int, cpt: float, config: Config) -> tuple[list, int, int]:
    """Goal lines within ``max_tokens`` in rank order; a goal whose full line does not fit gets its short line.
    Returns (items, tokens used, goals left out)."""
    items, used, dropped = [], 0, 0
    for g in goals:
        for short in (False, True):
            line = flagged(goal_line(g, short=short), flag_of(g, config))
            t = tokens(line, cpt)
            if used + t <= max_tokens:
                items.append({"id": g["id"], "name": g["canonical_name"], "line": line, "tokens": t,
                              "confidence": round(g["confidence"], 4), "conflict_flag": flag_of(g, config),
                              "primary_entity_id": (g.get("payload") or {}).get("primary_entity_id")})
                used += t
                break
        else:
            dropped += 1
    return items, used, dropped


# ---- the kinds ---------------------------------------------------------------------------------------------

def _entity_lookup(ctx: _Ctx, value: str, lookup: str = "id", max_results: int | None = None) -> None:
    if lookup not in LOOKUPS:
        raise QueryError(f"lookup must be one of {', '.join(LOOKUPS)} (got {lookup!r})")
    d = ctx.config.knowledge.delivery.query_defaults
    limit = int(max_results or d.lookup_limit)
    if lookup == "id":
        node = kq.node_by_id(ctx.conn, value)
        found = [node] if node else []
    elif lookup == "alias":
        found = kq.nodes_by_alias(ctx.conn, [normalize_alias(value)], limit=limit + 1)
    else:
        found = kq.nodes_by_name(ctx.conn, value.strip(), limit=limit + 1)
    if len(found) > limit:
        ctx.cut(f"max_results {limit}")
    ctx.results = [compact_card(n, ctx.config) for n in found[:limit]]


def _entity_neighbors(ctx: _Ctx, entity_id: str, depth: int = 1, edge_types: list[str] | str | None = None,
                      max_results: int | None = None) -> None:
    if int(depth) not in (1, 2):
        raise QueryError(f"depth must be 1 or 2 (got {depth!r})")
    types = [edge_types] if isinstance(edge_types, str) else edge_types
    limit = int(max_results or ctx.config.knowledge.delivery.query_defaults.max_results)
    scan = ctx.config.knowledge.delivery.neighbor_scan_limit
    root = entity(ctx.conn, entity_id)
    first = gated_neighbors(ctx.gate, root["id"], limit=limit + 1, scan_limit=scan, edge_types=types)
    seen = {root["id"]}
    for n in first:
        if len(ctx.results) >= limit:
            ctx.cut(f"max_results {limit}")
            return
        ctx.results.append(neighbor_item(n, ctx.config))
        seen.add(n["id"])
    if int(depth) == 1:
        return
    for i, n in enumerate(first[:limit]):
        if ctx.stop(f"depth 2 expanded from {i} of {min(len(first), limit)} neighbours"):
            return
        for m in gated_neighbors(ctx.gate, n["id"], limit=limit + 1, scan_limit=scan, edge_types=types):
            if m["id"] in seen:
                continue
            if len(ctx.results) >= limit:
                ctx.cut(f"max_results {limit}")
                return
            seen.add(m["id"])
            ctx.results.append(neighbor_item(m, ctx.config, depth=2, via=n["id"]))


def _entity_cards(ctx: _Ctx, entity_ids: list[str] | str, card_tier: str = "compact") -> None:
    if card_tier not in ("compact", "full"):
        raise QueryError(f"card_tier must be compact or full (got {card_tier!r})")
    ids = [x.strip() for x in entity_ids.split(",")] if isinstance(entity_ids, str) else list(entity_ids)
    cap = ctx.config.knowledge.delivery.query_defaults.max_cards
    if len(ids) > cap:
        ctx.cut(f"at most {cap} cards per query (§43.2); {len(ids) - cap} not read")
        ids = ids[:cap]
    nodes = [entity(ctx.conn, i) for i in ids]
    for i, node in enumerate(nodes):
        if ctx.stop(f"{i} of {len(nodes)} cards read"):
            return
        ctx.results.append(compact_card(node, ctx.config) if card_tier == "compact" else _full_card(ctx, node))


def _full_card(ctx: _Ctx, node: dict[str, Any]) -> dict[str, Any]:
    card = compact_card(node, ctx.config)
    b = current_breakdown(ctx.conn, ctx.config, node, ctx.now)
    prov = kq.provenance_summary(ctx.conn, node["id"], limit=3)
    edges = gated_neighbors(ctx.gate, node["id"], limit=10, scan_limit=ctx.config.knowledge.delivery.neighbor_scan_limit)
    card.update({
        "alpha": node["alpha"], "beta": node["beta"], "confidence_now": round(b["confidence"], 4),
        "conflict_score": round(b["conflict_score"], 4), "payload": node.get("payload") or {},
        "aliases": [a["normalized_alias"] for a in ksql.get_aliases(ctx.conn, node["id"])],
        "edges": [neighbor_item(e, ctx.config) for e in edges],
        "provenance": {"entries": prov.get("n") or 0, "last_at": prov.get("last"),
                       "latest": [{k: p[k] for k in ("created_at", "entry_type", "source_description",
                                                     "verbatim_excerpt")} for p in prov["latest"]]},
        "experience": ksql.get_experience(ctx.conn, node["id"]),
    })
    return card


def _procedure_bundle(ctx: _Ctx, app_entity_id: str | None = None, composite_id: str | None = None,
                      max_nodes: int | None = None) -> None:
    if not app_entity_id and not composite_id:
        raise QueryError("procedure_bundle needs app_entity_id or composite_id")
    limit = int(max_nodes or ctx.config.knowledge.delivery.query_defaults.max_nodes)
    scan = ctx.config.knowledge.delivery.neighbor_scan_limit
    root = entity(ctx.conn, composite_id or app_entity_id)
    seen = {root["id"]}
    ctx.results.append({**_procedure_item(root, ctx.config), "role": "composite" if composite_id else "application"})
    if ctx.stop("its procedures were not read"):
        return
    procs = [n for n in gated_neighbors(ctx.gate, root["id"], limit=limit + 1, scan_limit=scan)
             if n["node_kind"] in _PROCEDURE_KINDS]
    if app_entity_id and not composite_id:
        procs += [{**p, "relation_type": "environment.app_entity_id", "direction": "in"}
                  for p in kq.procedures_of_app(ctx.conn, root["id"], limit=limit + 1)]
    for p in procs:
        if p["id"] in seen:
            continue
        if len(ctx.results) >= limit:
            ctx.cut(f"max_nodes {limit}")
            return
        seen.add(p["id"])
        ctx.results.append({**_procedure_item(p, ctx.config), "role": "procedure", "relation": p["relation_type"]})
    # each procedure's constraints, preferences and recent traces (§12 step 2)
    for item in list(ctx.results[1:]):
        if ctx.stop(f"constraints and traces read for some of {len(ctx.results) - 1} procedures"):
            return
        for n in gated_neighbors(ctx.gate, item["id"], limit=limit, scan_limit=scan):
            role = {"memory_directive": "constraint", "execution_trace": "trace"}.get(n["node_kind"])
            if role is None and n["node_kind"] in _PROCEDURE_KINDS:
                role = "step"
            if role is None or n["id"] in seen:
                continue
            if len(ctx.results) >= limit:
                ctx.cut(f"max_nodes {limit}")
                return
            seen.add(n["id"])
            ctx.results.append({**_procedure_item(n, ctx.config), "role": role, "relation": n["relation_type"],
                                "of": item["id"]})


def _procedure_item(node: dict[str, Any], config: Config) -> dict[str, Any]:
    payload = node.get("payload") or {}
    item = compact_card(node, config)
    steps = payload.get("steps") if isinstance(payload.get("steps"), list) else []
    if steps:
        item["steps"] = [s.get("intent") for s in sorted(steps, key=lambda s: s.get("step_index", 0))
                         if isinstance(s, dict)]
    return item


def _goal_context(ctx: _Ctx, entity_id: str, max_tokens: int | None = None) -> None:
    d = ctx.config.knowledge.delivery
    budget = int(max_tokens or d.query_defaults.goal_max_tokens)
    root = entity(ctx.conn, entity_id)
    goals = rank_goals(goals_for(ctx.conn, ctx.config, [root["id"]], limit=d.goals.max_items, gate=ctx.gate),
                      root["id"])
    items, _used, dropped = fill_goals(goals, budget, d.gate.chars_per_token, ctx.config)
    if dropped:
        ctx.cut(f"max_tokens {budget}: {dropped} goal(s) left out")
    ctx.results = items


def _knowledge_brief(ctx: _Ctx, entity_id: str) -> None:
    from kenning.retrieve.brief import build_brief

    brief = build_brief(ctx.conn, ctx.config, entity(ctx.conn, entity_id), now=ctx.now, deadline=ctx.deadline,
                        gate=ctx.gate)
    if brief.truncated:
        ctx.cut(f"ceiling {ctx.deadline.ceiling_ms:g} ms reached; brief sections left out: "
                f"{', '.join(brief.skipped)}")
    ctx.results = [brief.as_dict()]


def _related_threads(ctx: _Ctx, entity_id: str, max_results: int | None = None) -> None:
    limit = int(max_results or ctx.config.knowledge.delivery.query_defaults.max_results)
    root = entity(ctx.conn, entity_id)
    found = kq.threads_of_nodes(ctx.conn, [root["id"]], limit=limit + 1)
    if len(found) > limit:
        ctx.cut(f"max_results {limit}")
    ctx.results = [{"conversation_id": t["conversation_id"], "title": t["title"],
                    "cited_messages": t["cited_messages"], "provenance_entries": t["entries"],
                    "first_at": t["first_at"], "last_at": t["last_at"]} for t in found[:limit]]


def _entity_scoped_search(ctx: _Ctx, entity_id: str, query: str, max_results: int | None = None) -> None:
    limit = int(max_results or ctx.config.knowledge.delivery.query_defaults.max_results)
    ws = words(query, ctx.config)
    if fts_expression(ws, ctx.config) is None:
        raise QueryError(f"query {query!r} has no searchable words")
    root = entity(ctx.conn, entity_id)
    scan = ctx.config.knowledge.delivery.neighbor_scan_limit
    around = {n["id"]: n for n in gated_neighbors(ctx.gate, root["id"], limit=scan, scan_limit=scan)}
    if ctx.stop("the neighbourhood was read but not searched"):
        return
    expr = fts_expression(ws, ctx.config, ctx.conn)
    if expr is not None:
        found = [(-n["rank"], n) for n in kq.fts_match(ctx.conn, expr, limit=limit + 1,
                                                       within=[root["id"], *around])]
    else:
        found = _token_match(ctx.conn, ctx.config, [root, *around.values()], ws)
    if len(found) > limit:
        ctx.cut(f"max_results {limit}")
    for score, n in found[:limit]:
        item = compact_card(n, ctx.config)
        via = around.get(n["id"])
        item.update(score=round(score, 4), relation=via["relation_type"] if via else None,
                    relation_label=hint(via["relation_type"], via["direction"]) if via else "itself")
        ctx.results.append(item)


def _token_match(conn: apsw.Connection, config: Config, nodes: list[dict[str, Any]],
                 ws: list[str]) -> list[tuple[float, dict[str, Any]]]:
    """D27: when every query word is too common for the FTS index to rank cheaply, match the neighbourhood's own
    FTS text (name, aliases, description) word by word; score = query words found. Bounded by the neighbourhood."""
    stop = set(config.knowledge.delivery.resolve.stopwords)
    want = {w for w in ws if w not in stop}
    aliases = kq.aliases_of(conn, [n["id"] for n in nodes])
    out = []
    for n in nodes:
        payload = n.get("payload") or {}
        text = " ".join([n["canonical_name"], *aliases.get(n["id"], []),
                         payload.get("description") or description_of(n["node_kind"], payload) or ""])
        hits = len(want & set(_TOKEN.findall(text.casefold())))
        if hits:
            out.append((float(hits), n))
    out.sort(key=lambda x: (-x[0], -x[1]["confidence"], x[1]["id"]))
    return out


_HANDLERS: dict[str, Callable[..., None]] = {
    "entity_lookup": _entity_lookup, "entity_neighbors": _entity_neighbors, "entity_cards": _entity_cards,
    "procedure_bundle": _procedure_bundle, "goal_context": _goal_context, "knowledge_brief": _knowledge_brief,
    "related_threads": _related_threads, "entity_scoped_search": _entity_scoped_search,
}
