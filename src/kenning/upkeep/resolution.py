"""§42A.2.7–§42A.2.12 Stage 2: resolving a span to a node, and what happens to the ones that do not resolve.

- Pass A exact alias, Pass B FTS5 bm25, Pass C vectors over the ``nodes`` space (10 candidates each); a candidate's
  combined score is ``raw · w + context · (1 − w)`` with w = alias .55 / FTS .45 / embed .35 / coref .35.
- The graph-context score (§42A.2.9) with the five terms, including token Jaccard ≥ .7 and the −.8 rejection.
- Tier 3.5 (coreference) for definite descriptions and spans Tiers 1–3 left: the span with its context window in
  the vector space, accepted at similarity ≥ .82 with context ≥ .4.
- Tier 4: what is still unresolved but has candidates goes to the model queue (closed candidate set, strict JSON,
  dead letter at 5 retries); ``process_tier4`` runs it when a model is configured.
- Tier 5: spans that keep coming back unresolved become entity-creation candidates behind the seed's gates.

Ties between the best two candidates abstain (G7): a wrong link is worse than none."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import upkeep as usql
from kenning.upkeep.bundles import most_restrictive, stable_sha256
from kenning.upkeep.mentions import Span, normalize_for_lookup

RESOLVABLE_BY_NAME = ("canonical_alias", "shorthand_alias", "role_titled_person", "organization_name",
                      "formal_reference", "specific_document_reference", "cross_context_reference",
                      "product_or_model_reference")
_STOP = frozenset({"the", "and", "for", "with", "from", "this", "that"})


@dataclass
class Context:
    """§42A.2.7 BackLinkResolutionContext (anchors: the nodes stages 2A/3 already found in this observation, which
    stand in for the seed's single source node: G3)."""
    observation_id: str
    work_context_id: str | None
    surface: str
    occurred_at: str
    participants: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    visibility_class: str = "cloud_allowed"


def token_overlap(a: str, b: str) -> float:
    """§42A.2.9 tokenOverlapScore: Jaccard over tokens of ≥ 3 characters."""
    ta = {t for t in a.lower().split() if len(t) >= 3}
    tb = {t for t in b.lower().split() if len(t) >= 3}
    union = ta | tb
    return len(ta & tb) / len(union) if union else 0.0


def participant_form(p: str) -> str:
    if "@" in p:
        p = p.split("@")[0]
        for ch in "._-":
            p = p.replace(ch, " ")
    return p.lower()


class Resolver:
    def __init__(self, conn, config, now: str, *, vectors: Any = None):
        self.conn, self.cfg, self.now = conn, config.backlinks, now
        self.vectors = vectors  # a VectorIndex with node vectors, or None (Pass C / Tier 3.5 off)
        self._facts: dict[str, dict[str, Any]] = {}
        self._aliases: dict[str, list[str]] = {}

    # ---- §42A.2.9 --------------------------------------------------------------------------------------------

    def facts(self, node_id: str) -> dict[str, Any]:
        if node_id not in self._facts:
            self._facts.update(usql.node_facts(self.conn, [node_id]))
        return self._facts.get(node_id) or {}

    def graph_context(self, candidate: str, ctx: Context) -> float:
        c = self.cfg.context
        score = 0.0
        if ctx.work_context_id and usql.edge_between(self.conn, candidate, ctx.work_context_id):
            score += c.work_context_bonus
        anchors = [a for a in ctx.anchors if a != candidate]
        weighted, diversity = usql.prior_evidence(self.conn, candidate, anchors, c.prior_evidence_min_confidence)
        if weighted:
            score += min(c.prior_evidence_cap, weighted * c.prior_evidence_per_confidence)
            if diversity >= 2:
                score += c.diversity_bonus
        if ctx.participants:
            if candidate not in self._aliases:
                self._aliases.update(usql.node_aliases(self.conn, [candidate]))
            aliases = self._aliases.get(candidate, [])
            for p in (participant_form(x) for x in ctx.participants):
                if any(token_overlap(p, a) >= c.participant_jaccard for a in aliases):
                    score += c.participant_bonus
                if score >= c.participant_stop_at:
                    break
        updated = self.facts(candidate).get("updated_at")
        if updated:
            days = (parse_utc(self.now) - parse_utc(updated)).total_seconds() / 86400
            score += max(0.0, c.recency_bonus * (1 - days / c.recency_days))
        if usql.rejected_pairs(self.conn, anchors, candidate):
            score += c.rejection_penalty
        return max(0.0, min(1.0, score))

    # ---- §42A.2.8 passes -------------------------------------------------------------------------------------

    def _combine(self, method: str, raw: float, candidate: str, ctx: Context) -> dict[str, Any]:
        w = self.cfg.raw_weight[method]
        g = self.graph_context(candidate, ctx)
        return {"node_id": candidate, "method": method, "raw": round(raw, 6), "graph_context": round(g, 6),
                "score": round(raw * w + g * (1 - w), 6)}

    def candidates(self, span: Span, ctx: Context) -> list[dict[str, Any]]:
        norm = span.normalized
        forms = sorted({norm, " ".join(span.text.casefold().split())})
        out: dict[str, dict[str, Any]] = {}
        k = self.cfg.candidates_per_pass
        if self.cfg.alias_matching_enabled and len(norm) >= 2:
            for r in usql.alias_exact(self.conn, forms, k, self.cfg.resolvable_node_kinds):
                raw = 0.99 if r["alias_type"] == "name" and r["normalized_alias"] == normalize_for_lookup(
                    r["canonical_name"]) else 0.96
                cand = self._combine("alias_exact", raw, r["id"], ctx)
                out[r["id"]] = max(out.get(r["id"], cand), cand, key=lambda x: x["score"])
        if self.cfg.fts_matching_enabled and not out:
            tokens = [t for t in norm.split() if len(t) >= 2 and t not in _STOP]
            if tokens:
                match = " OR ".join(f'"{t}"' for t in tokens)
                for r in usql.fts_candidates(self.conn, match, k, self.cfg.resolvable_node_kinds):
                    names = " ".join([normalize_for_lookup(r["canonical_name"]),
                                      *usql.node_aliases(self.conn, [r["id"]]).get(r["id"], [])]).split()
                    raw = sum(1 for t in tokens if t in names) / len(tokens)  # bm25 orders; coverage scores (G8)
                    if raw < self.cfg.fts_min_score:
                        continue
                    cand = self._combine("fts5_bm25", raw, r["id"], ctx)
                    if r["id"] not in out or cand["score"] > out[r["id"]]["score"]:
                        out[r["id"]] = cand
        if self.cfg.embedding_matching_enabled and self.vectors is not None and not out:
            for h in self._vector_hits(span.text, k):
                if h.score >= self.cfg.embedding_min_similarity:
                    out[h.item_id] = self._combine("vec_semantic", h.score, h.item_id, ctx)
        return sorted(out.values(), key=lambda c: (-c["score"], c["node_id"]))

    def _vector_hits(self, text: str, k: int) -> list[Any]:
        try:
            return self.vectors.search(text, k, space="nodes", kinds=self.cfg.resolvable_node_kinds)
        except Exception:  # noqa: BLE001 - no model, no table: Pass C is simply unavailable (never fails a run)
            return []

    def coreference(self, window: str, ctx: Context) -> list[dict[str, Any]]:
        """§42A.2.10 Tier 3.5 over the span's context window."""
        if not (self.cfg.embedding_coreference_enabled and self.vectors is not None):
            return []
        out = []
        for h in self._vector_hits(window, self.cfg.candidates_per_pass):
            out.append(self._combine("vec_coreference", h.score, h.item_id, ctx))
        return sorted(out, key=lambda c: (-c["score"], c["node_id"]))

    def resolve(self, span: Span, window: str, ctx: Context) -> dict[str, Any]:
        """The span's resolution: node_id (or None), method, confidence, graph_context, and the candidates left
        for Tier 4 when nothing was accepted."""
        cands: list[dict[str, Any]] = []
        if span.span_class in RESOLVABLE_BY_NAME:
            cands = self.candidates(span, ctx)
            if cands and not _tied(cands):
                best = cands[0]
                return {"node_id": best["node_id"], "method": best["method"], "confidence": best["score"],
                        "graph_context": best["graph_context"], "candidates": []}
        if span.span_class not in ("generic_document_reference",):
            coref = self.coreference(window, ctx)
            ok = [c for c in coref if c["raw"] >= self.cfg.coreference_min_similarity
                  and c["graph_context"] >= self.cfg.coreference_min_graph_context]
            if ok and not _tied(ok):
                best = ok[0]
                return {"node_id": best["node_id"], "method": "vec_coreference", "confidence": best["score"],
                        "graph_context": best["graph_context"], "candidates": []}
            cands = (cands + coref)
        seen, left = set(), []
        for c in sorted(cands, key=lambda c: (-c["score"], c["node_id"])):
            if c["node_id"] not in seen:
                seen.add(c["node_id"])
                left.append(c)
        return {"node_id": None, "method": "unresolved", "confidence": 0.0, "graph_context": 0.0,
                "candidates": left[:self.cfg.tier4.max_candidates]}


def _tied(cands: list[dict[str, Any]]) -> bool:
    return len(cands) > 1 and math.isclose(cands[0]["score"], cands[1]["score"], abs_tol=1e-9)


# ---- Tier 4 ----------------------------------------------------------------------------------------------------
# Every Tier 4 call goes through the model layer (G65): the versioned prompt ``tier4_resolution`` (the seed's
# prompt contract), each attempt logged in ``llm_calls`` and replayable with ``--llm replay``.

TIER4_PROMPT_NAME = "tier4_resolution"


class Tier4Result(BaseModel):
    """§42A.2.11 Tier4ResolutionResult; unknown keys are refused (strict)."""
    model_config = ConfigDict(extra="forbid")
    mention_id: str | None = None
    matched_candidate_id: str
    relation_type: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)
    rationale_short: str | None = Field(None, max_length=280)
    schema_version: int | None = None


def tier4_item(mention: dict[str, Any], candidates: list[dict[str, Any]], now: str) -> dict[str, Any]:
    local = mention["visibility_class"] == "local_only"
    return {"queue_item_id": stable_sha256(f"tier4|{mention['mention_id']}"), "mention_id": mention["mention_id"],
            "observation_id": mention["observation_id"], "source_node_id": mention["source_node_id"],
            "span_text": mention["mention_text"][:500], "context_window": mention["context_window"][:1200],
            "candidate_set": [{"candidate_id": f"c{i + 1}", "node_id": c["node_id"], "score": min(1.0, c["score"])}
                              for i, c in enumerate(candidates)],
            "execution_requirement": "same_machine_local_only" if local else "cloud_or_local",
            "status": "queued", "retry_count": 0, "created_at": now, "updated_at": now}


def tier4_variables(conn, item: dict[str, Any]) -> dict[str, str]:
    """The prompt's variables for one queue item (or one span resolved synchronously)."""
    from kenning.knowledge.relations import SECTION_42A_2_CORE

    names = usql.node_facts(conn, [c["node_id"] for c in item["candidate_set"]])
    span = usql.get_mention(conn, item["mention_id"]) if "start_offset" not in item else item
    ctx = usql.observation_context(conn, item["observation_id"],
                                   exclude_span=(span["start_offset"], span["end_offset"]) if span else None)
    cands = "\n".join(f"{c['candidate_id']}: {names.get(c['node_id'], {}).get('canonical_name', c['node_id'])} "
                      f"(score {c['score']:.2f})" for c in item["candidate_set"])
    return {"span_text": item["span_text"], "context_window": item["context_window"], "surface_type": "chat",
            "work_context_name": ctx["title"] or item["observation_id"],
            "novelty_gate_summary": ", ".join(ctx["known_names"]), "candidates_formatted": cands,
            "canonical_relation_type_enum_values": ", ".join(sorted(SECTION_42A_2_CORE))}


def ask_tier4(conn, config, llm: Any, item: dict[str, Any]) -> tuple[str | None, float, str | None]:
    """One Tier 4 question through the model layer → (node id or None for none/ambiguous, confidence, failure
    code or None). A malformed answer, a candidate outside the closed set or a failed call is a failure."""
    res = llm.structured(TIER4_PROMPT_NAME, tier4_variables(conn, item), Tier4Result,
                         message_id=item["observation_id"],
                         item_key=f"{item['mention_id']}|{tier4_generation(config)}")
    if not res.ok:
        code = "failed_parse" if res.error_code == "MALFORMED_OUTPUT" else (res.error_code or "call_failed").lower()
        return None, 0.0, code
    cid = res.value.matched_candidate_id
    if cid in ("none", "ambiguous"):
        return None, res.value.confidence, None
    match = next((c for c in item["candidate_set"] if c["candidate_id"] == cid), None)
    if match is None:
        return None, 0.0, "failed_parse"  # outside the closed set: the model may not invent an entity
    return match["node_id"], res.value.confidence, None


def tier4_generation(config) -> str:
    """§42A.2.11 idempotency key part: a mention is asked once per generation (the pinned prompt version)."""
    return f"{TIER4_PROMPT_NAME}@v{config.llm.prompt_versions.get(TIER4_PROMPT_NAME, 1)}"


def process_tier4(conn, config, now: str, llm: Any, *, limit: int = 50, local: bool = True) -> dict[str, int]:
    """Run due Tier 4 queue items through ``llm`` (an enabled model-layer client). A failure counts a retry; at
    ``dead_letter_retries`` the item is dead-lettered and kept for audit. ``local`` says the model runs on this
    machine: items marked same_machine_local_only are left queued otherwise (§42A.2.11)."""
    cfg = config.backlinks.tier4
    counts = {"tier4_resolved": 0, "tier4_none": 0, "tier4_failed": 0, "tier4_dead_letter": 0}
    counts["tier4_kept_local"] = 0
    for item in usql.tier4_due(conn, now, limit):
        if item["execution_requirement"] == "same_machine_local_only" and not local:
            counts["tier4_kept_local"] += 1
            continue
        node_id, confidence, failure = ask_tier4(conn, config, llm, item)
        if failure is not None:
            retries = item["retry_count"] + 1
            dead = retries >= cfg.dead_letter_retries
            nxt = format_utc(parse_utc(now) + dt.timedelta(minutes=cfg.retry_delay_minutes))
            usql.update_tier4(conn, item["queue_item_id"], status="dead_letter" if dead else "failed",
                              retry_count=retries, next_retry_at=None if dead else nxt, last_error_code=failure,
                              updated_at=now)
            counts["tier4_dead_letter" if dead else "tier4_failed"] += 1
            continue
        if node_id is not None:
            usql.resolve_mention(conn, item["mention_id"], node_id, "llm_closed_set", float(confidence))
            usql.rescan_observation(conn, item["observation_id"])  # the next run pairs it with its neighbours
            counts["tier4_resolved"] += 1
        else:
            counts["tier4_none"] += 1
        usql.update_tier4(conn, item["queue_item_id"], status="succeeded", updated_at=now)
    return counts


# ---- Tier 5 ----------------------------------------------------------------------------------------------------

_KIND_OF_CLASS = {"organization_name": "world_entity", "role_titled_person": "world_entity",
                  "canonical_alias": "world_entity", "product_or_model_reference": "world_entity",
                  "formal_reference": "work_product"}


def tier5_candidates(conn, config, now: str, *, sweep: bool = False) -> int:
    """§42A.2.12: unresolved spans through the seven gates into entity-creation candidates, under the daily cap
    (the historical sweep's 500 when ``sweep``); overflow waits for the next day, best salience first."""
    cfg = config.backlinks
    pol = cfg.entity_creation
    if not cfg.entity_creation_enabled:
        return 0
    stop = {s.lower() for s in pol.stop_phrases}
    fresh = []
    for g in usql.unresolved_groups(conn, pol.allowed_span_classes):
        formal = g["span_class"] == "formal_reference"
        min_obs = max(pol.min_distinct_observations, cfg.entity_creation_min_unresolved_observations)
        if g["observations"] < min_obs:
            continue
        if not formal and g["surfaces"] < pol.min_distinct_surfaces:
            continue
        vis = most_restrictive((g["visibilities"] or "").split(","))
        if vis == "blocked":
            continue
        text = g["mention_text"].strip()
        if text.isupper() and len(text) < pol.block_all_caps_short_aliases_under and not formal:
            continue
        if g["normalized_mention"] in stop or len(text) < pol.min_normalized_span_length:
            continue
        cid = stable_sha256(f"tier5|{g['normalized_mention']}|{g['span_class']}")
        if usql.candidate_exists(conn, cid):
            continue
        fresh.append({"candidate_id": cid, "suggested_canonical_name": text[:200],
                      "suggested_node_kind": _KIND_OF_CLASS.get(g["span_class"], "world_entity"),
                      "normalized_mention": g["normalized_mention"],
                      "source_observation_ids": sorted(g["observation_ids"].split(","))[:50],
                      "source_surface": g["surface"], "linked_work_context_id": g["work_context_id"],
                      "span_class": g["span_class"], "visibility_class": vis, "confidence": 0.3,
                      "salience": round(min(1.0, 0.1 * g["observations"] + 0.1 * g["surfaces"]), 6),
                      "status": "pending_review", "created_at": now})
    cap = pol.historical_sweep_candidate_queue_cap if sweep else pol.daily_candidate_queue_cap
    room = max(0, cap - usql.candidates_created_on(conn, now[:10]))
    fresh.sort(key=lambda c: (-c["salience"], c["candidate_id"]))
    for c in fresh[:room]:
        usql.insert_candidate(conn, c)
    return min(room, len(fresh))


def endpoint_is_local(config) -> bool:
    from urllib.parse import urlparse

    host = urlparse(config.llm.base_url or "").hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")
