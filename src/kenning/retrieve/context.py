"""Context packets: what an assistant is handed for one request (seed 003 §42A.1 contextual novelty gate, §29.8 goal
injection, §5.6 conflict flags).

``build_context(conn, config, request, now=…)`` resolves the request to nodes (aliases, FTS5, optional vectors),
gathers the gate's four candidate sources around the primary entity, filters them (hubs, generic references,
salience, what this session was already given), reserves tokens for participants and cross-context only when they
have candidates, fills the budget by priority with each source capped and surplus going to the best remaining,
then adds the user's relevant memory directives, goals (≤ 100 tokens) and obligations due soon. SQL only, no model.
Each packet's telemetry (the seed's names) is stored; items a session was given are not given again."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import apsw

from kenning.config import Config
from kenning.intake.modes import incognito_only_nodes
from kenning.knowledge.edge_gate import EdgeGate, gated_neighbors
from kenning.knowledge.writer import normalize_alias
from kenning.retrieve.delivery import (Deadline, Resolution, as_utc, flag_of, flagged, fts_expression, hint,
                                      resolve_request, tokens, words)
from kenning.retrieve.context_person import PersonPart, is_person
from kenning.retrieve.graph_query import entity, fill_goals, goal_status, rank_goals
from kenning.sources.ids import IdFactory
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import knowledge_query as kq
from kenning.store.connection import is_writable, write_scope

SOURCES = ("work_context", "participants", "recent", "cross_context")
SCHEMA_VERSION = 1


@dataclass
class Candidate:
    node: dict[str, Any]
    source: str
    priority: float
    relation: str | None = None
    direction: str | None = None
    line: str = ""
    tokens: int = 0

    @property
    def id(self) -> str:
        return self.node["id"]


@dataclass
class ContextPacket:
    packet_id: str
    request: str
    session: str | None
    created_at: str
    budget: int
    primary: dict[str, Any] | None
    resolved: list[dict[str, Any]]
    sections: dict[str, list[dict[str, Any]]]
    telemetry: dict[str, Any]
    recorded: bool = False

    @property
    def lines(self) -> list[str]:
        return [item["line"] for name in ("entities", "person", "directives", "goals", "obligations", "prior_context")
                for item in self.sections.get(name, [])]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {"packet_id": self.packet_id, "request": self.request, "session": self.session,
                "created_at": self.created_at, "budget": self.budget, "primary_entity": self.primary,
                "resolved": self.resolved, "lines": self.lines, "sections": self.sections,
                **self.telemetry, "telemetry": self.telemetry, "recorded": self.recorded}


@dataclass
class _Gate:
    """Working state of one gate build."""
    raw: dict[str, list[Candidate]] = field(default_factory=lambda: {s: [] for s in SOURCES})
    kept: dict[str, list[Candidate]] = field(default_factory=lambda: {s: [] for s in SOURCES})
    seen: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=lambda: {"hub_nodes_suppressed": 0, "generic_refs_excluded": 0,
                                                            "novelty_suppressed": 0, "below_salience": 0})

    def offer(self, c: Candidate) -> None:
        """A node enters one source only: the first that offers it (work context, participants, cross, recent)."""
        if c.id in self.seen:
            return
        self.seen.add(c.id)
        self.raw[c.source].append(c)


def build_context(conn: apsw.Connection, config: Config, request: str, *, now: str, entity: str | None = None,
                  budget: int | None = None, session: str | None = None, record: bool = True,
                  given: set[str] | None = None) -> ContextPacket:
    """``given``: item ids the caller knows this session was already given (a read-only caller such as the MCP
    server keeps them itself, K18), besides those recorded in the vault."""
    return _Builder(conn, config, request, now=now, entity_ref=entity, budget=budget, session=session,
                    given=given).build(record)


def given_items(packet: ContextPacket) -> set[str]:
    """The item ids a packet gave (what novelty must not repeat in the same session)."""
    return {item["id"] for items in packet.sections.values() for item in items}


class _Builder:
    def __init__(self, conn: apsw.Connection, config: Config, request: str, *, now: str, entity_ref: str | None,
                 budget: int | None, session: str | None, given: set[str] | None = None):
        self.conn, self.config, self.request, self.now = conn, config, request, as_utc(now)
        self.d = config.knowledge.delivery
        self.g = self.d.gate
        self.budget = int(budget if budget is not None else self.g.max_tokens)
        if self.budget < 0:
            raise ValueError(f"budget must be 0 or more tokens (got {budget})")
        self.session = session or None
        self.entity_ref = entity_ref
        self.deadline = Deadline(self.d.query_ceilings["context"].ceiling_ms)
        self.truncated: str | None = None
        self.given: set[str] = (kq.session_items(conn, self.session) if self.session else set()) | (given or set())
        self.words = words(request, config)
        self.expr = fts_expression(self.words, config, conn)
        self.generic = {normalize_alias(x) for x in self.g.generic_names}

    # ---- steps ---------------------------------------------------------------------------------------------

    def _stop(self, step: str) -> bool:
        if self.truncated is None and self.deadline.expired():
            self.truncated = (f"ceiling {self.deadline.ceiling_ms:g} ms reached after "
                              f"{self.deadline.elapsed_ms():.1f} ms; {step}")
        return self.truncated is not None

    def build(self, record: bool) -> ContextPacket:
        # one FTS5 pass serves resolution, cross-context, directives and goals (D12): BM25 scores every match, so
        # four filtered passes would cost four times as much
        self.pool = self._fts_pool()
        res = resolve_request(self.conn, self.config, self.request, deadline=self.deadline, fts_hits=self.pool)
        primary = self._primary(res)
        gate = _Gate()
        neighbours: list[dict[str, Any]] = []
        if primary is not None:
            # a packet is text for a model: promoted edges through §42A.2.12A as an agent reads them (G64)
            neighbours = gated_neighbors(EdgeGate(self.conn, self.config, "agent"), primary["id"],
                                         limit=self.g.work_context_limit, scan_limit=self.d.neighbor_scan_limit)
        self._gather(gate, res, primary, neighbours)
        self._filter(gate, primary)
        entities, tel = self._fill(gate)
        sections = {"entities": entities, "directives": [], "goals": [], "obligations": []}
        anchors = [primary["id"]] if primary else []
        anchors += [c.id for c in gate.kept["participants"]]
        if not self._stop("directives, goals and obligations left out"):
            sections["directives"] = self._directives(neighbours)
        if not self._stop("goals and obligations left out"):
            sections["goals"] = self._goals(neighbours, anchors, primary, res)
        if not self._stop("obligations left out"):
            sections["obligations"] = self._obligations(anchors)
        # §13.4 (issue 18, I12): knowledge whose only evidence is incognito content is never in a packet.
        listed = [it["id"] for k in ("directives", "goals", "obligations") for it in sections[k]]
        hidden = incognito_only_nodes(self.conn, self.config, listed) if listed else set()
        for k in ("directives", "goals", "obligations"):
            sections[k] = [it for it in sections[k] if it["id"] not in hidden]
        # a request about a person (H4): what the vault holds about them, each line with its quote
        sections["person"] = []
        if is_person(primary) and self.config.person_context.enabled and not self._stop("person part left out"):
            sections["person"] = self._person(primary, neighbours, sections, tel)
        sections["prior_context"] = []
        if not self._stop("prior context left out"):
            sections["prior_context"] = self._prior_context(primary, res, gate, sections, tel)
        return self._finish(res, primary, gate, sections, tel, record)

    def _person(self, primary: dict[str, Any], neighbours: list[dict[str, Any]],
                sections: dict[str, list[dict[str, Any]]], tel: dict[str, Any]) -> list[dict[str, Any]]:
        from kenning.intake.modes import incognito_conversations, incognito_message_ids

        room = max(0, self.budget - sum(i["tokens"] for items in sections.values() for i in items))
        taken = {i["id"] for k in ("directives", "goals", "obligations") for i in sections[k]}
        gated = {(n["id"], n["relation_type"], n["direction"]) for n in neighbours}
        part = PersonPart(self.conn, self.config, primary, now=self.now, given=self.given, taken=taken,
                          hidden_messages=incognito_message_ids(self.conn, self.config),
                          hidden_threads=set(incognito_conversations(self.conn, self.config).conversation_ids),
                          gated=gated)
        items, ptel = part.build(room)
        tel.update(ptel)
        # the general sections keep their lines (and the person part does not repeat them); their items get the
        # quote they stand on, as the person part's do
        for k in ("directives", "goals", "obligations"):
            for i in sections[k]:
                i.setdefault("evidence", part.node_quote(i["id"]))
        return items

    # ---- §25.3 the "[Prior Context — reference]" card ------------------------------------------------------

    def _prior_context(self, primary: dict[str, Any] | None, res: Resolution, gate: _Gate,
                       sections: dict[str, list[dict[str, Any]]], tel: dict[str, Any]) -> list[dict[str, Any]]:
        """The card of the recent thread this request continues (I77–I79): one linked to the work context or a
        participant (most recent first), else the one sharing the most of the request's content words. It uses
        what the packet's budget leaves after every other section, trimmed to fit; never an incognito thread, never
        twice in a session."""
        from kenning.intake.corpus import resume
        from kenning.intake.modes import incognito_conversations
        from kenning.store import corpus as csql

        cfg = self.config.corpus.resume
        if not cfg.in_context or not csql.has_corpus(self.conn):
            return []
        since = format_utc(parse_utc(self.now) - dt.timedelta(days=cfg.continuity_days))
        pool = csql.recent_threads(self.conn, since, self.now, cfg.continuity_scan)
        if not pool:
            return []
        secret = incognito_conversations(self.conn, self.config)
        pool = [t for t in pool if t["thread_id"] not in secret]
        anchors = ({primary["id"]} if primary else set()) | {c.id for c in gate.kept["participants"]} | \
            {n["id"] for n in res.nodes if n["node_kind"] == "world_entity"}
        stop = set(self.d.resolve.stopwords)
        asked = {w for w in resume._tokens(self.request) if len(w) >= self.d.resolve.min_word_chars and w not in stop}
        # continuity (I78): a thread linked to the packet's entities, or one sharing enough of the request's words;
        # the best has the most linked entities, then the most shared words, then is the most recent
        best: tuple[Any, ...] | None = None
        for rank, t in enumerate(pool):
            linked = sorted(anchors & set(t["linked_entity_ids"] or []))
            shared = sorted(asked & set(resume._tokens(resume._doc(t))))
            topical = bool(asked) and len(shared) >= cfg.min_shared_words and \
                len(shared) / len(asked) >= cfg.min_word_overlap
            if not (linked or topical):
                continue
            key = (-len(linked), -len(shared), rank)
            if best is None or key < best[0]:
                best = (key, t, "entity" if linked else "topic", linked, shared)
        if best is None:
            return []
        _key, t, how, linked, shared = best
        if t["thread_id"] in self.given:
            tel["prior_context_omitted"] = "already given in this session"
            return []
        thread = resume._thread_out(self.conn, t)
        cps = csql.checkpoints(self.conn, t["thread_id"])
        room = max(0, self.budget - sum(i["tokens"] for items in sections.values() for i in items))
        cap = min(cfg.card_max_tokens, room)
        # the fullest card that fits: open items and then decisions are dropped from the end until it does
        for nd, no in _trims(cfg.max_decisions, cfg.max_open):
            card = _card(thread, cps, nd, no)
            n_tokens = tokens(card, self.g.chars_per_token)
            if n_tokens <= cap:
                break
        else:
            tel["prior_context_omitted"] = f"budget: {room} token(s) left, the shortest card needs {n_tokens}"
            return []
        shown = cps[-nd:] if nd else []
        # named in the stored telemetry, so forgetting the conversation finds the packets that quote its card
        tel["prior_context_thread_id"] = t["thread_id"]
        return [{"id": t["thread_id"], "name": t["title_hint"], "line": card, "tokens": n_tokens,
                 "thread_id": t["thread_id"], "occurred_at": t["occurred_at"], "matched_by": how,
                 "linked_entity_ids": linked, "shared_words": shared,
                 "provenance": {"source": "conversation_threads", "conversation_id": t["thread_id"],
                                "summary_method": t.get("method"),
                                "checkpoint_message_ids": [c["message_id"] for c in shown if c.get("message_id")]}}]

    def _fts_pool(self) -> list[dict[str, Any]]:
        """The best FTS hits of each kind a section reads (resolution, cross-context, directives, goals), as full
        nodes in BM25 order."""
        if not self.expr:
            return []
        hits = kq.fts_kinds(self.conn, self.expr, limit=self.d.resolve.fts_pool)
        want = {**{k: self.g.cross_context_limit for k in self.g.cross_context_kinds},
                "memory_directive": self.d.directives.fts_limit, "goal": self.d.goals.max_items}
        keep, per_kind = [], {}
        for i, h in enumerate(hits):
            per_kind[h["node_kind"]] = per_kind.get(h["node_kind"], 0) + 1
            if i < self.d.resolve.fts_limit or per_kind[h["node_kind"]] <= want.get(h["node_kind"], 0):
                keep.append(h["id"])
        nodes = kq.nodes_by_ids(self.conn, keep)
        return [nodes[i] for i in keep if i in nodes]

    def _primary(self, res: Resolution) -> dict[str, Any] | None:
        """The work context (§42A.1.4 source 1's ``?``): the entity given, else the first node the request names
        that the gate lists as an entity (D7)."""
        if self.entity_ref:
            return entity(self.conn, self.entity_ref)
        return next((n for n in res.nodes if n["node_kind"] in self.g.entity_kinds), None)

    def _gather(self, gate: _Gate, res: Resolution, primary: dict[str, Any] | None,
                neighbours: list[dict[str, Any]]) -> None:
        kinds = set(self.g.entity_kinds)
        named = set(res.paths)
        if primary is not None:
            gate.offer(Candidate(primary, "work_context", 3.0))
            for n in neighbours:
                if n["node_kind"] in kinds:
                    gate.offer(Candidate(n, "work_context", self._priority(n, named), n["relation_type"],
                                         n["direction"]))
        # §42A.1.4 source 2: the world entities the request names (its participants)
        people = [n for n in res.nodes if n["node_kind"] == "world_entity"][:self.g.participant_limit]
        for n in people:
            gate.offer(Candidate(n, "participants", self._priority(n, named)))
        if self._stop("cross-context and recent sources not read"):
            return
        # cross-context reusable kinds the request names or matches (D9)
        cross_kinds = list(self.g.cross_context_kinds)
        cross = [n for n in res.nodes if n["node_kind"] in cross_kinds]
        cross += [n for n in self.pool if n["node_kind"] in cross_kinds]
        for n in cross[:self.g.cross_context_limit]:
            gate.offer(Candidate(n, "cross_context", self._priority(n, named)))
        if self._stop("recent source not read"):
            return
        since = format_utc(parse_utc(self.now) - dt.timedelta(days=self.g.recent_window_days))
        recent = kq.recent_nodes(self.conn, since, limit=self.g.max_recent_entities + len(gate.seen),
                                 kinds=self.g.entity_kinds)
        taken = 0
        for n in recent:
            if n["id"] in gate.seen or n["updated_at"] > self.now:
                continue
            if taken >= self.g.max_recent_entities:
                break
            gate.offer(Candidate(n, "recent", self._priority(n, named)))
            taken += 1

    @staticmethod
    def _priority(n: dict[str, Any], named: set[str]) -> float:
        """Priority score (D10): stored confidence, plus 1 for a node the request itself names."""
        return n["confidence"] + (1.0 if n["id"] in named else 0.0)

    def _filter(self, gate: _Gate, primary: dict[str, Any] | None) -> None:
        """§42A.1.4 step 2 (and novelty): hubs, generic references, below-salience nodes and what the session was
        already given leave; the primary entity is the context itself and is never a hub to suppress."""
        ids = [c.id for s in SOURCES for c in gate.raw[s]]
        threshold = self.g.suppress_hub_nodes_above_edge_count
        degrees = kq.capped_degrees(self.conn, ids, threshold + 1) if ids else {}
        hidden = incognito_only_nodes(self.conn, self.config, ids) if ids else set()
        for s in SOURCES:
            for c in gate.raw[s]:
                is_primary = primary is not None and c.id == primary["id"]
                if c.id in hidden:  # incognito-derived (§13.4, I12): never shown, not even as the context itself
                    gate.counts["incognito_excluded"] = gate.counts.get("incognito_excluded", 0) + 1
                elif c.id in self.given:
                    gate.counts["novelty_suppressed"] += 1
                elif not is_primary and degrees.get(c.id, 0) > threshold:
                    gate.counts["hub_nodes_suppressed"] += 1
                elif self.g.exclude_generic_document_refs and self._generic(c.node):
                    gate.counts["generic_refs_excluded"] += 1
                elif c.node["confidence"] < self.g.min_salience and not is_primary:
                    gate.counts["below_salience"] += 1
                else:
                    c.line = self._line(c)
                    c.tokens = tokens(c.line, self.g.chars_per_token)
                    gate.kept[s].append(c)
            gate.kept[s].sort(key=lambda c: (-c.priority, c.node["canonical_name"], c.id))

    def _generic(self, node: dict[str, Any]) -> bool:
        name = normalize_alias(node["canonical_name"])
        return name in self.generic or len(name) < self.g.min_name_chars

    def _line(self, c: Candidate) -> str:
        """§42A.1.4 output format: ``"Entity Name (relation type)"`` with hints on; the kind when no relation."""
        text = c.node["canonical_name"]
        if self.g.include_relationship_hints:
            h = hint(c.relation, c.direction) or (c.node.get("payload") or {}).get("entity_type") \
                or c.node["node_kind"].replace("_", " ")
            text = f"{text} ({h})"
        return flagged(text, flag_of(c.node, self.config))

    def _fill(self, gate: _Gate) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        f = fill_gate(gate.kept, self.budget, self.g)
        before = sum(len(v) for v in gate.raw.values())
        after = sum(len(v) for v in gate.kept.values())
        tel = {"total_candidates_before_filter": before, "total_candidates_after_filter": after,
               "tokens_used": f.total, "source_token_share": {s: f.used[s] for s in SOURCES if f.used[s]},
               "unused_reserved_tokens": f.unused, "reservation_released_tokens": f.released,
               "starvation_events": f.starvation, **gate.counts}
        items = [{"id": c.id, "name": c.node["canonical_name"], "kind": c.node["node_kind"], "source": c.source,
                  "relation": c.relation, "direction": c.direction, "line": c.line, "tokens": c.tokens,
                  "priority": round(c.priority, 4), "conflict_flag": flag_of(c.node, self.config)} for c in f.chosen]
        return items, tel

    # ---- the other sections ------------------------------------------------------------------------------

    def _directives(self, neighbours: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The user's memory directives this request touches: linked to the work context, matching the request's
        words, or of an always-applies priority class (D13)."""
        cfg = self.d.directives
        found: dict[str, tuple[int, dict[str, Any]]] = {}
        for n in neighbours:
            if n["node_kind"] == "memory_directive":
                found.setdefault(n["id"], (0, n))
        for n in [n for n in self.pool if n["node_kind"] == "memory_directive"][:cfg.fts_limit]:
            found.setdefault(n["id"], (1, n))
        for n in kq.directives_with_priority(self.conn, cfg.always_priority_classes, limit=cfg.max_items):
            found.setdefault(n["id"], (2, n))
        ordered = [n for _, n in sorted(found.values(), key=lambda x: (x[0], -x[1]["confidence"], x[1]["id"]))]
        items, used = [], 0
        for n in ordered:
            if n["id"] in self.given or len(items) >= cfg.max_items:
                continue
            p = n.get("payload") or {}
            label = (p.get("memory_type") or "directive").replace("_", " ")
            line = flagged(f"{label.capitalize()}: {p.get('summary') or n['canonical_name']}", flag_of(n, self.config))
            t = tokens(line, self.g.chars_per_token)
            if used + t > cfg.max_tokens:
                continue
            used += t
            items.append({"id": n["id"], "name": n["canonical_name"], "line": line, "tokens": t,
                          "confidence": round(n["confidence"], 4), "conflict_flag": flag_of(n, self.config)})
        return items

    def _goals(self, neighbours: list[dict[str, Any]], anchors: list[str], primary: dict[str, Any] | None,
               res: Resolution) -> list[dict[str, Any]]:
        """§29.4 tier 1 (goals linked to the work context or a participant) and goals the request names; ranked
        and filled by §29.8 within ≤ 100 tokens."""
        cfg = self.d.goals
        found = {n["id"]: n for n in neighbours if n["node_kind"] == "goal"}
        for n in kq.linked_by_payload(self.conn, "goal", anchors, limit=cfg.max_items):
            found.setdefault(n["id"], n)
        for n in res.nodes:
            if n["node_kind"] == "goal":
                found.setdefault(n["id"], n)
        for n in [n for n in self.pool if n["node_kind"] == "goal"][:cfg.max_items]:
            found.setdefault(n["id"], n)
        goals = [g for g in found.values() if goal_status(g) == "active" and g["id"] not in self.given]
        ranked = rank_goals(goals, primary["id"] if primary else None)[:cfg.max_items]
        items, _used, _dropped = fill_goals(ranked, cfg.max_tokens, self.g.chars_per_token, self.config)
        return items

    def _obligations(self, anchors: list[str]) -> list[dict[str, Any]]:
        """Open obligations due within due_soon_days (or overdue by at most overdue_days), those linked to the
        work context or a participant first, then soonest (D15)."""
        cfg = self.d.obligations
        now = parse_utc(self.now)
        lo, hi = now - dt.timedelta(days=cfg.overdue_days), now + dt.timedelta(days=cfg.due_soon_days)
        rows = kq.obligations_due(self.conn, format_utc(lo - dt.timedelta(days=1))[:10],
                                  format_utc(hi + dt.timedelta(days=1)), limit=cfg.max_items * 4)
        anchor_set = set(anchors)
        due: list[tuple[bool, dt.datetime, dict[str, Any]]] = []
        for n in rows:
            p = n.get("payload") or {}
            try:
                when = parse_utc(as_utc(p["deadline"]["date"]))
            except (KeyError, TypeError, ValueError):
                continue
            if not (lo <= when <= hi) or p.get("status") not in cfg.open_statuses or n["id"] in self.given:
                continue
            linked = bool(anchor_set & set(p.get("linked_entity_refs") or []))
            due.append((not linked, when, n))
        items, used = [], 0
        for _unlinked, when, n in sorted(due, key=lambda x: (x[0], x[1], x[2]["id"])):
            if len(items) >= cfg.max_items:
                break
            p = n["payload"]
            late = " (overdue)" if when < now else ""
            what = p.get("obligation_description") or n["canonical_name"]
            line = flagged(f"Due {format_utc(when)[:10]}{late}: {what}", flag_of(n, self.config))
            t = tokens(line, self.g.chars_per_token)
            if used + t > cfg.max_tokens:
                continue
            used += t
            items.append({"id": n["id"], "name": n["canonical_name"], "line": line, "tokens": t,
                          "due": format_utc(when), "confidence": round(n["confidence"], 4),
                          "conflict_flag": flag_of(n, self.config)})
        return items

    # ---- the packet ----------------------------------------------------------------------------------------

    def _finish(self, res: Resolution, primary: dict[str, Any] | None, gate: _Gate,
                sections: dict[str, list[dict[str, Any]]], tel: dict[str, Any], record: bool) -> ContextPacket:
        writable = record and is_writable(self.conn)
        earlier = kq.session_packets(self.conn, self.session) if self.session else []
        ids = IdFactory(self.config.ids.id_namespace)
        packet_id = ids.make("context_packet", self.session, len(earlier), self.request, self.now, self.budget,
                             primary["id"] if primary else None)
        gate_ids = [item["id"] for item in sections["entities"]]
        flags = [item["conflict_flag"] for items in sections.values() for item in items if item.get("conflict_flag")]
        section_tokens = {name: sum(i["tokens"] for i in items) for name, items in sections.items()}
        tel = {"observation_id": packet_id, **tel,
               "packet_tokens": sum(section_tokens.values()), "section_tokens": section_tokens,
               "flags": {f: flags.count(f) for f in sorted(set(flags))},
               "resolution_paths": {p: list(res.paths.values()).count(p) for p in sorted(set(res.paths.values()))},
               "latency_ms": round(self.deadline.elapsed_ms(), 3), "truncated": self.truncated is not None,
               "truncation_reason": self.truncated, "schema_version": SCHEMA_VERSION}
        packet = ContextPacket(
            packet_id=packet_id, request=self.request, session=self.session, created_at=self.now,
            budget=self.budget,
            primary={"id": primary["id"], "name": primary["canonical_name"], "kind": primary["node_kind"]}
            if primary else None,
            resolved=[{"id": n["id"], "name": n["canonical_name"], "kind": n["node_kind"], "path": res.paths[n["id"]],
                       **({"matched_alias": res.matched[n["id"]]} if n["id"] in res.matched else {})}
                      for n in res.nodes],
            sections=sections, telemetry=tel)
        if writable:
            self._record(packet, gate_ids, earlier, set(res.paths) | ({primary["id"]} if primary else set()))
            packet.recorded = True
        return packet

    def _record(self, packet: ContextPacket, gate_ids: list[str], earlier: list[dict[str, Any]],
                referenced_now: set[str]) -> None:
        """Store the packet (telemetry per packet) and what its session was given. The request naming an entity an
        earlier packet of the session put in its gate counts as that packet's gate hit (§42A.1.5 gate_hit_rate,
        D17)."""
        given = sorted(given_items(packet))
        with write_scope(self.conn):
            for e in earlier:
                hits = set(e["referenced_node_ids"]) | (referenced_now & set(e["gate_node_ids"]))
                if hits != set(e["referenced_node_ids"]):
                    rate = len(hits) / len(e["gate_node_ids"]) if e["gate_node_ids"] else None
                    kq.set_packet_references(self.conn, e["packet_id"], sorted(hits), rate)
            kq.insert_packet(self.conn, {
                "packet_id": packet.packet_id, "session_id": packet.session, "request": packet.request,
                "primary_node_id": packet.primary["id"] if packet.primary else None, "created_at": packet.created_at,
                "budget": packet.budget, "tokens_used": packet.telemetry["tokens_used"], "lines": packet.lines,
                "gate_node_ids": gate_ids, "telemetry": packet.telemetry,
                "gate_hit_rate": 0.0 if gate_ids else None}, given)


def _trims(max_decisions: int, max_open: int) -> list[tuple[int, int]]:
    """(decisions, open items) from the full card down to none of either: open items go first, then decisions."""
    out = [(max_decisions, o) for o in range(max_open, -1, -1)]
    out += [(d, 0) for d in range(max_decisions - 1, -1, -1)]
    return out


def _card(thread: dict[str, Any], cps: list[dict[str, Any]], nd: int, no: int) -> str:
    """The resume card with at most ``nd`` decisions and ``no`` open items; what was cut says so."""
    from kenning.intake.corpus.resume import render_card

    decided = cps or [{"description": d} for d in (thread.get("key_decisions") or [])]
    opened = thread.get("unresolved_items") or []
    card = render_card({**thread, "key_decisions": [], "unresolved_items": opened[:no]}, decided[-nd:] if nd else [],
                       max(nd, 1), max(no, 1))
    if decided and not nd:
        card = card.replace("What was decided: nothing recorded", "What was decided: (left out to fit)")
    if opened and not no:
        card = card.replace("What is open: nothing recorded", "What is open: (left out to fit)")
    return card


@dataclass
class GateFill:
    chosen: list[Candidate]
    used: dict[str, int]
    total: int
    released: int
    unused: int
    starvation: list[dict[str, Any]]


def fill_gate(kept: dict[str, list[Candidate]], budget: int, g: Any) -> GateFill:
    """§42A.1.4 steps 3–5 over filtered candidates (each source best first): a reservation is active only for a
    source with candidates (else it is released to the pool); reserved sources fill their reservation first; then
    one priority-ordered pass over everything left, each source within its cap and all within the budget — a source
    that cannot use its share leaves it to the best remaining candidates of any source."""
    caps = {"work_context": g.work_context_cap_tokens, "participants": g.participant_cap_tokens,
            "recent": g.recent_cap_tokens, "cross_context": g.cross_context_cap_tokens}
    reserved = {"participants": g.participant_min_reserved_tokens,
                "cross_context": g.cross_context_min_reserved_tokens}
    used = {s: 0 for s in SOURCES}
    chosen: list[Candidate] = []
    total = released = unused = 0
    for s, amount in reserved.items():
        amount = min(amount, caps[s], budget)
        if not kept.get(s):
            released += amount
            continue
        for c in kept[s]:
            if used[s] + c.tokens <= amount and total + c.tokens <= budget:
                chosen.append(c)
                used[s] += c.tokens
                total += c.tokens
        unused += amount - used[s]  # reserved but not filled: it flows back as surplus
    taken = {c.id for c in chosen}
    order = lambda c: (-c.priority, SOURCES.index(c.source), c.node["canonical_name"], c.id)  # noqa: E731
    for c in sorted((c for s in SOURCES for c in kept.get(s, []) if c.id not in taken), key=order):
        if used[c.source] + c.tokens <= caps[c.source] and total + c.tokens <= budget:
            chosen.append(c)
            used[c.source] += c.tokens
            total += c.tokens
    starvation = [{"source": s, "requested_tokens": sum(c.tokens for c in kept.get(s, [])), "granted_tokens": used[s]}
                  for s in SOURCES if sum(c.tokens for c in kept.get(s, [])) > used[s]]
    return GateFill(sorted(chosen, key=order), used, total, released, unused, starvation)


def mark_referenced(conn: apsw.Connection, packet_id: str, node_ids: list[str]) -> float | None:
    """Record which of a packet's gate entities the assistant's answer referenced (§42A.1.5); returns the packet's
    gate_hit_rate = referenced / in gate."""
    p = kq.get_packet(conn, packet_id)
    if p is None:
        raise ValueError(f"no context packet {packet_id!r}")
    hits = (set(p["referenced_node_ids"]) | set(node_ids)) & set(p["gate_node_ids"])
    rate = len(hits) / len(p["gate_node_ids"]) if p["gate_node_ids"] else None
    with write_scope(conn):
        kq.set_packet_references(conn, packet_id, sorted(hits), rate)
    return rate


def gate_hit_rate(conn: apsw.Connection, config: Config, *, session: str | None = None,
                  since: str | None = None) -> dict[str, Any]:
    """§42A.1.5 gate_hit_rate over stored packets = entities referenced / entities in gate; below low_hit_rate the
    gate is spending tokens on entities nobody uses."""
    t = kq.hit_rate_totals(conn, session_id=session, since=since)
    rate = t["referenced"] / t["in_gate"] if t["in_gate"] else None
    return {**t, "gate_hit_rate": rate,
            "low": rate is not None and rate < config.knowledge.delivery.low_hit_rate}

