"""§42A.2.12A canReadPromotedEdge for every reader of the graph (G64): context packets, §43 graph queries, briefs,
compiled truth, inspect, MCP and the web UI read the edges the back-link pipeline promoted through one
:class:`EdgeGate`, so a private (``local_only``) node's promoted edges never reach a cloud-bound reader, a blocked
one reaches nobody, and an edge that only incognito conversations support is never shown.

Audience: ``person`` (this machine's owner at the CLI inspect, node pages and the local web UI) or ``agent``
(context packets, graph queries, briefs and every MCP tool: text handed to a model that may run in the cloud).
Each maps to an execution visibility in ``backlinks.reader_visibility``. Edges the pipeline did not learn
(stated relations, a person's `kenning edge add`) are the node store's own and pass unchanged.

It lives in ``knowledge/`` (L1) so knowledge's own readers can use it; ``upkeep.edge_gate`` re-exports it."""

from __future__ import annotations

from typing import Any, Iterable, Literal

from kenning.knowledge import bundle_math as B
from kenning.knowledge.incognito import incognito_basis
from kenning.store import upkeep as usql

Audience = Literal["person", "agent"]
LEARNED_BY = "backlink_pipeline_v2"


class EdgeGate:
    def __init__(self, conn, config, audience: Audience = "agent"):
        self.conn, self.config = conn, config
        self.execution = getattr(config.backlinks.reader_visibility, audience)
        self._scope: dict[str, str] = {}
        self._bundle_ok: dict[str, bool] = {}
        self._incognito: frozenset[str] | None = None
        self.hidden = 0  # how many promoted edges this gate kept back (telemetry)

    # ---- the decision ----------------------------------------------------------------------------------------

    def allows(self, source_id: str, target_id: str, learned_by: str | None, edge_visibility: str | None,
               bundle_id: str | None, known_payloads: dict[str, dict[str, Any]] | None = None) -> bool:
        if learned_by != LEARNED_BY:
            return True
        for nid, payload in (known_payloads or {}).items():
            self._scope.setdefault(nid, B.node_visibility(payload))
        ok = B.can_read_promoted_edge(execution_visibility=self.execution,
                                      edge_visibility=edge_visibility or "cloud_allowed",
                                      source_node_visibility=self._vis(source_id),
                                      target_node_visibility=self._vis(target_id))
        ok = ok and (not bundle_id or self._carried_without_incognito(bundle_id))
        if not ok:
            self.hidden += 1
        return ok

    def _vis(self, node_id: str) -> str:
        if node_id not in self._scope:
            f = usql.node_facts(self.conn, [node_id]).get(node_id) or {}
            self._scope[node_id] = B.node_visibility({"scope": f.get("scope")})
        return self._scope[node_id]

    def _incognito_conversations(self) -> frozenset[str]:
        if self._incognito is None:
            self._incognito = frozenset(incognito_basis(self.conn, self.config))
        return self._incognito

    def _carried_without_incognito(self, bundle_id: str) -> bool:
        """Would this bundle be promoted on the evidence outside incognito conversations alone? (§13.4: incognito
        content is never in the graph; a conversation made incognito after the edge was promoted hides it.)"""
        if bundle_id in self._bundle_ok:
            return self._bundle_ok[bundle_id]
        inc = self._incognito_conversations()
        ok = True
        if inc:
            ms = [m for m in usql.mentions_of_bundles(self.conn, [bundle_id]) if m["state"] != "suppressed"]
            if any(m["work_context_id"] in inc for m in ms):
                stored = usql.get_bundle(self.conn, bundle_id) or {}
                kept = [m for m in ms if m["work_context_id"] not in inc]
                if stored.get("user_verdict") == "approved":
                    ok = True  # a person approved the relation itself
                elif not kept:
                    ok = False
                else:
                    b = B.bundle_from_mentions(bundle_id, kept)
                    b.hub_penalty = float(stored.get("hub_penalty") or 0.0)
                    b.salience_score = B.salience(b)
                    b.evidence_score = B.evidence_score(b)
                    first = (usql.first_mention(self.conn, b.support_mention_ids[0])
                             if b.support_count == 1 and b.support_mention_ids else None)
                    ok = B.should_promote(b, self.config.backlinks.promotion, first)[0]
        self._bundle_ok[bundle_id] = ok
        return ok

    # ---- the readers' shapes ---------------------------------------------------------------------------------

    def neighbors(self, node_id: str, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Rows of ``knowledge_query.neighbors/ended_edges(..., edge_facts=True)``: the other node is the row."""
        out = []
        for r in rows:
            src, tgt = (node_id, r["id"]) if r["direction"] == "out" else (r["id"], node_id)
            learned, vis, bid = r.pop("edge_learned_by", None), r.pop("edge_visibility", None), \
                r.pop("edge_bundle_id", None)
            if self.allows(src, tgt, learned, vis, bid, {r["id"]: r.get("payload") or {}}):
                out.append(r)
        return out

    def edges(self, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Edge rows with ``source_id``, ``target_id`` and a decoded ``payload``."""
        out = []
        for e in rows:
            p = e.get("payload") or {}
            if self.allows(e["source_id"], e["target_id"], p.get("learned_by"), p.get("visibility_class"),
                           p.get("evidence_bundle_id")):
                out.append(e)
        return out


def gated_neighbors(gate: EdgeGate, node_id: str, **kw: Any) -> list[dict[str, Any]]:
    """``knowledge_query.neighbors`` through the gate."""
    from kenning.store import knowledge_query as kq

    return gate.neighbors(node_id, kq.neighbors(gate.conn, node_id, edge_facts=True, **kw))


def gated_ended_edges(gate: EdgeGate, node_id: str, **kw: Any) -> list[dict[str, Any]]:
    from kenning.store import knowledge_query as kq

    return gate.neighbors(node_id, kq.ended_edges(gate.conn, node_id, edge_facts=True, **kw))
