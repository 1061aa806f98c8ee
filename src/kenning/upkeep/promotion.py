"""The back-link run (§42A.2.18 after-ingest path + the nightly aggregation/promotion): scan new observations,
resolve, record mention observations, aggregate the touched evidence bundles, promote through the single writer,
refresh the Tier 5 candidates and the review queue. One call = the ``backlinks`` stage's one transaction.

Co-mention edges (G3): Kenning's text is messages, not documents with nodes, so a mention's source node is another
node found in the same observation. For each pair of resolved nodes one relation is chosen from the cue rules, the
pair is normalized, and the target's spans become that pair's mention observations (nested groups once). The
bridge (``knowledge/bridge.py``) keeps the stated stage-4 relations (``domain_*`` edges); bundles own the §42A.2
core relation types; the two never write the same relation type, and the bridge's edges feed the graph-context
score as prior evidence (G14)."""

from __future__ import annotations

import hashlib

import orjson
from dataclasses import dataclass, field
from typing import Any

from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.ops import CreateEdge, EndEdge, KnowledgeWrite
from kenning.knowledge.writer import KnowledgeWriter
from kenning.sources.timestamps import parse_utc
from kenning.store import upkeep as usql
from kenning.upkeep import bundles as B
from kenning.upkeep.bundles import bundle_from_mentions
from kenning.upkeep.mentions import Span, compile_patterns, context_window, detect, entity_span_class
from kenning.upkeep.resolution import Context, Resolver, tier4_item, tier5_candidates

LEARNED_BY = "backlink_pipeline_v2"
WATERMARK = "last_processed_append_seq"
_REL_RANK = {"produced_by": 0, "referenced_in": 1, "affiliated_with": 2, "collaborated_with": 3,
             "semantically_related": 4}
_BATCH = 2000
_NAME_TYPES = ("PERSON", "ORG", "LOCATION", "PRODUCT", "CUSTOM_TERM", "OTHER")


@dataclass
class RunCounts:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


class BacklinkRun:
    def __init__(self, conn, config, clock, *, run_id: str | None = None, vectors: Any = None,
                 progress=None, writer: KnowledgeWriter | None = None, sweep: bool = False,
                 incognito_json: str = "[]", llm: Any = None, llm_local: bool = False):
        self.conn, self.config, self.clock = conn, config, clock
        self.incognito_json = incognito_json  # conversations never scanned (§13.4, I70), as a JSON array
        self.cfg = config.backlinks
        self.now = clock.now()
        self.writer = writer or KnowledgeWriter(conn, config, clock=clock, run_id=run_id)
        self.resolver = Resolver(conn, config, self.now, vectors=vectors)
        self.patterns = compile_patterns(self.cfg)
        self.c = RunCounts()
        self.progress = progress
        self.sweep = sweep  # §42A.2.18 historical sweep: every message again, the 500-candidate cap
        # §42A.2.11 synchronous/both: an enabled model-layer client (None: queue only); llm_local = it runs here
        self.llm, self.llm_local = llm, llm_local
        self._vis: dict[str, str] = {}
        self._known: dict[str, bool] = {}

    # ---- the whole run -------------------------------------------------------------------------------------

    def run(self) -> dict[str, int]:
        if not self.cfg.enabled:
            return {}
        verdicts = refresh_review_state(self.conn)
        if self.sweep:
            usql.forget_observations(self.conn)
        self.scan()
        start = int(usql.state_get(self.conn, WATERMARK) or 0)
        touched = set(usql.bundles_touched_after(self.conn, start)) | set(verdicts)
        self.aggregate(sorted(touched), verdicts)
        self.promote()
        self.c.add("entity_creation_candidates", tier5_candidates(self.conn, self.config, self.now,
                                                                          sweep=self.sweep))
        from kenning.upkeep.review import refresh_queue

        self.c.add("review_items", refresh_queue(self.conn, self.config, self.now))
        # NP03: the watermark moves last, inside the stage's transaction — it is durable only if everything
        # before it committed (a failed run leaves it where it was and the next run redoes the same work).
        usql.state_set(self.conn, WATERMARK, str(usql.max_append_seq(self.conn)))
        return dict(sorted(self.c.counts.items()))

    # ---- Stage 1 + 2 over new observations -----------------------------------------------------------------

    def scan(self) -> None:
        entity_nodes = usql.entity_nodes(self.conn)
        owner = usql.owner_node(self.conn)
        done = 0
        while True:
            batch = usql.pending_observations(self.conn, _BATCH, self.incognito_json)
            if not batch:
                break
            spans_by_msg: dict[str, list[dict[str, Any]]] = {}
            for r in usql.entity_spans(self.conn, [m["message_id"] for m in batch]):
                spans_by_msg.setdefault(r["message_id"], []).append(r)
            parts = usql.participants(self.conn, [m["conversation_id"] for m in batch])
            supp = usql.suppressions(self.conn)
            digests = {m["message_id"]: hashlib.sha256((m["text_raw"] or "").encode()).hexdigest() for m in batch}
            seen = usql.scanned_hashes(self.conn, list(digests.values()))
            marks = []
            for m in batch:
                digest = digests[m["message_id"]]
                if digest in seen:  # the same text again (custom instructions in every chat): not new evidence
                    marks.append((m["message_id"], digest, 0))
                    self.c.add("observations_repeated")
                    continue
                seen.add(digest)
                degraded = self.observe(m, spans_by_msg.get(m["message_id"], []), entity_nodes, owner,
                                        parts.get(m["conversation_id"], []), supp)
                marks.append((m["message_id"], digest, int(degraded)))
            usql.mark_observations(self.conn, marks)
            done += len(batch)
            self.c.add("observations_scanned", len(batch))
            if self.progress:
                self.progress(records=done, file="back-links")

    def known(self, normalized: str) -> bool:
        if normalized not in self._known:
            self._known[normalized] = usql.alias_known(self.conn, normalized, self.cfg.resolvable_node_kinds)
        return self._known[normalized]

    def visibility(self, node_id: str) -> str:
        if node_id not in self._vis:
            f = self.resolver.facts(node_id)
            self._vis[node_id] = B.node_visibility({"scope": f.get("scope")})
        return self._vis[node_id]

    def observe(self, m: dict[str, Any], erows: list[dict[str, Any]], entity_nodes: dict[str, str],
                owner: str | None, participants: list[str], supp: list[dict[str, Any]]) -> bool:
        text = m["text_raw"]
        obs = m["message_id"]
        entity_spans = []
        skip = [(f["char_start"], f["char_end"]) for f in orjson.loads(m.get("code_fence_ranges_json") or "[]")]
        for r in erows:
            node = entity_nodes.get(r["entity_id"])
            if node is None:
                if r["entity_type"] not in _NAME_TYPES:  # an id, e-mail, URL, CVE …: not a name to link
                    skip.append((r["char_start"], r["char_end"]))
                continue
            surface = text[r["char_start"]:r["char_end"]]
            entity_spans.append(Span(r["char_start"], r["char_end"], surface,
                                     entity_span_class(r["entity_type"], surface, self.cfg.role_title_prefixes),
                                     "entity", node_id=node))
        spans, degraded = detect(obs, text, entity_spans, self.patterns, self.cfg, known=self.known, skip=skip)
        if degraded:
            self.c.add("observations_degraded")
        surface = f"{m['source_kind']}:{m['role']}"
        ctx = Context(observation_id=obs, work_context_id=m["conversation_id"], surface=surface,
                      occurred_at=m["occurred_at"] or self.now, participants=participants,
                      anchors=sorted({s.node_id for s in spans if s.node_id}))
        windows = {}
        decided = usql.decided_resolutions(self.conn, obs)  # Tier 4 / a person already placed these spans
        for s in spans:
            windows[s.key] = context_window(text, s.start, s.end, self.cfg.coreference_window_chars)
            if not s.node_id and (s.start, s.end) in decided:
                s.node_id = decided[(s.start, s.end)]
                g = self.resolver.graph_context(s.node_id, ctx)
                s.resolution = {"node_id": s.node_id, "method": "llm_closed_set", "graph_context": g,
                                "confidence": 0.0, "candidates": []}
            elif s.node_id:
                g = self.resolver.graph_context(s.node_id, ctx)
                exact = usql.alias_exact(self.conn, [s.normalized, " ".join(s.text.casefold().split())], 50)
                method = "alias_exact" if any(r["id"] == s.node_id for r in exact) else "canonical_substring"
                w = self.cfg.raw_weight["alias_exact"]
                s.resolution = {"node_id": s.node_id, "method": method, "graph_context": g,
                                "confidence": round(0.96 * w + g * (1 - w), 6), "candidates": []}
            else:
                s.resolution = self.resolver.resolve(s, windows[s.key], ctx)
                s.node_id = s.resolution["node_id"]
        queue_ok = self._tier4_inline(obs, spans, windows)
        suppressed = {s.key for s in spans if _suppressed(s, ctx, supp)}
        # distinct resolved targets, first appearance first, capped (§42A.6: ≤ 12 new targets per observation)
        targets: list[str] = []
        for s in spans:
            if s.node_id and s.key not in suppressed and s.node_id not in targets:
                targets.append(s.node_id)
        targets = targets[:self.cfg.max_new_targets_per_observation]
        base = {"observation_id": obs, "work_context_id": ctx.work_context_id, "surface": surface,
                "occurred_at": ctx.occurred_at}
        rows: list[dict[str, Any]] = []
        anchor = targets[0] if targets else (owner or f"observation:{obs}")
        for s in spans:
            res = s.resolution
            row = {**base, "normalized_mention": s.normalized, "span_class": s.span_class,
                   "start_offset": s.start, "end_offset": s.end, "mention_text": s.text[:500],
                   "is_nested": int(s.is_nested), "resolution_method": res["method"],
                   "resolution_confidence": res["confidence"], "graph_context_score": round(res["graph_context"], 6),
                   "context_window": windows[s.key], "polarity": "support",
                   "state": "suppressed" if s.key in suppressed else "observed_mention",
                   "suppression_reason": "suppressed pattern" if s.key in suppressed else None}
            if not s.node_id:
                src = anchor
                rows.append(self._mention(row, s, src, None, None, None, "cloud_allowed"))
                # §42A.2.11 NP05: "synchronous" has no queue; "both" queues what was not asked inline (G65)
                if res["candidates"] and self.cfg.llm_resolution_enabled and s.key in queue_ok:
                    usql.enqueue_tier4(self.conn, tier4_item(rows[-1], res["candidates"], self.now))
                    self.c.add("tier4_queued")
                continue
            # the node's own row: co-occurrence reads these (source = the mentioned node, no relation)
            rows.append(self._mention(row, s, s.node_id, s.node_id, None, None, self.visibility(s.node_id)))
        new_bundles: set[str] = set()
        pairs = self._pairs(spans, targets, suppressed, windows)
        for (src, tgt, rel), target_spans in sorted(pairs.items()):
            bid = B.bundle_id(src, tgt, rel)
            if bid not in new_bundles and usql.get_bundle(self.conn, bid) is None:
                if len(new_bundles) >= self.cfg.max_new_evidence_bundles_per_observation:
                    self.c.add("bundles_capped")
                    continue
                new_bundles.add(bid)
            vis = B.most_restrictive([self.visibility(src), self.visibility(tgt)])
            for s, negative in target_spans:
                row = {**base, "normalized_mention": s.normalized, "span_class": s.span_class,
                       "start_offset": s.start, "end_offset": s.end, "mention_text": s.text[:500],
                       "is_nested": int(s.is_nested), "resolution_method": s.resolution["method"],
                       "resolution_confidence": s.resolution["confidence"],
                       "graph_context_score": round(s.resolution["graph_context"], 6),
                       "context_window": windows[s.key], "polarity": "contradiction" if negative else "support",
                       "state": "candidate_relation", "suppression_reason": None}
                rows.append(self._mention(row, s, src, tgt, rel, bid, vis))
        self.c.add("mentions_recorded", usql.insert_mentions(self.conn, rows, {obs: text}))
        usql.touch_cooldown(self.conn, targets, self.now)
        return degraded

    def _tier4_inline(self, obs: str, spans: list[Span], windows: dict[str, str]) -> set[str]:
        """§42A.2.11 synchronous / both (G65): ask the model now for up to ``llm_max_unresolved_for_sync`` of this
        message's unresolved spans (best candidate first); a resolved span pairs with its neighbours in this run.
        Returns the keys of the spans that may go to the queue."""
        from kenning.upkeep.resolution import ask_tier4
        from kenning.upkeep.tier4 import sync_allowed

        pending = [s for s in spans if not s.node_id and s.resolution["candidates"]]
        mode = self.cfg.llm_resolution_mode
        if not pending or not self.cfg.llm_resolution_enabled:
            return {s.key for s in pending}
        if self.llm is None:  # no model in this run: the queue is the only way (synchronous then waits for one)
            return {s.key for s in pending} if mode != "synchronous" else set()
        n, queue_rest = sync_allowed(mode, len(pending), self.cfg.llm_max_unresolved_for_sync)
        ranked = sorted(pending, key=lambda s: (-s.resolution["candidates"][0]["score"], s.start, s.end))
        queue = {s.key for s in ranked[n:]} if queue_rest else set()
        for s in ranked[:n]:
            cands = s.resolution["candidates"]
            item = {"mention_id": B.mention_id(obs, "tier4_sync", s.normalized, s.start, s.end, s.span_class),
                    "observation_id": obs, "span_text": s.text[:500], "context_window": windows[s.key][:1200],
                    "start_offset": s.start, "end_offset": s.end,
                    "candidate_set": [{"candidate_id": f"c{i + 1}", "node_id": c["node_id"],
                                       "score": min(1.0, c["score"])} for i, c in enumerate(cands)]}
            if not self.llm_local and any(self.visibility(c["node_id"]) == "local_only" for c in cands):
                self.c.add("tier4_sync_kept_local")  # private candidates never go to a remote model
                if queue_rest:
                    queue.add(s.key)
                continue
            node_id, confidence, failure = ask_tier4(self.conn, self.config, self.llm, item)
            self.c.add("tier4_sync_asked")
            if failure is not None:
                self.c.add("tier4_sync_failed")
                if queue_rest:
                    queue.add(s.key)
                continue
            if node_id is not None:
                s.node_id = node_id
                s.resolution = {**s.resolution, "node_id": node_id, "method": "llm_closed_set",
                                "confidence": round(float(confidence), 6)}
                self.c.add("tier4_sync_resolved")
        return queue

    def _mention(self, row: dict[str, Any], s: Span, source: str, target: str | None, rel: str | None,
                 bid: str | None, vis: str) -> dict[str, Any]:
        mid = B.mention_id(row["observation_id"], source, row["normalized_mention"], s.start, s.end, s.span_class)
        group = B.mention_id(row["observation_id"], source, "", 0, 0, s.group_key)  # per source, per span group
        parent = (B.mention_id(row["observation_id"], source, "", 0, 0, s.parent_key) if s.parent_key else None)
        return {**row, "mention_id": mid, "source_node_id": source, "resolved_node_id": target, "group_id": group,
                "parent_mention_id": parent, "relation_hypothesis": rel, "evidence_bundle_id": bid,
                "visibility_class": vis}

    def _pairs(self, spans: list[Span], targets: list[str], suppressed: set[str],
               windows: dict[str, str]) -> dict[tuple[str, str, str], list[tuple[Span, bool]]]:
        """One relation per pair of targets (§42A.2.13 cues; the strongest rule either side's spans give), the pair
        normalized, and the target node's spans as its mentions."""
        by_node: dict[str, list[Span]] = {}
        for s in spans:
            if s.node_id in targets and s.key not in suppressed:
                by_node.setdefault(s.node_id, []).append(s)
        out: dict[tuple[str, str, str], list[tuple[Span, bool]]] = {}
        cues = self.cfg.cues
        for i, a in enumerate(targets):
            for b in targets[i + 1:]:
                best: tuple[int, str, str, str] | None = None
                for x, y in ((a, b), (b, a)):
                    for s in by_node[x]:
                        rel = self._relation(s, windows[s.key])
                        # a document produced by / referenced in: the document is the source (directed)
                        src, tgt = (x, y) if rel in ("produced_by", "referenced_in") else (y, x)
                        cand = (_REL_RANK[rel], rel, src, tgt)
                        if best is None or cand < best:
                            best = cand
                assert best is not None
                _, rel, src, tgt = best
                src, tgt = B.normalize_pair(src, tgt, rel)
                out[(src, tgt, rel)] = [(s, _negative(windows[s.key], s, cues.negative)) for s in by_node[tgt]]
        return out

    def _relation(self, s: Span, window: str) -> str:
        words = f" {window.lower()} "
        cues = self.cfg.cues
        if s.span_class == "organization_name":
            return "affiliated_with"
        if s.span_class == "specific_document_reference":
            if any(f" {w} " in words for w in cues.produced_by_words):
                return "produced_by"
            if any(f" {w} " in words for w in cues.referenced_in_words):
                return "referenced_in"
        if any(f" {w} " in words for w in cues.collaborated_with):
            return "collaborated_with"
        return "semantically_related"

    # ---- aggregation ---------------------------------------------------------------------------------------

    def aggregate(self, bundle_ids: list[str], verdicts: dict[str, dict[str, Any]]) -> None:
        aggregate_bundles(self.conn, self.config, bundle_ids, verdicts)
        self.c.add("bundles_aggregated", len(bundle_ids))

    # ---- promotion -----------------------------------------------------------------------------------------

    def promote(self) -> None:
        counts = promote_all(self.conn, self.config, self.writer, self.now)
        for k, v in counts.items():
            self.c.add(k, v)


def _suppressed(s: Span, ctx: Context, patterns: list[dict[str, Any]]) -> bool:
    for p in patterns:
        if p["normalized_mention"] == s.normalized and p["span_class"] == s.span_class:
            if p["scope"] == "global" or (p["scope"] == "work_context" and p["work_context_id"] == ctx.work_context_id) \
                    or (p["scope"] == "surface_specific" and p["surface"] == ctx.surface):
                return True
    return False


def _negative(window: str, s: Span, negative: list[str]) -> bool:
    words = f" {window.lower()} "
    return any(f" {w} " in words for w in negative)


def aggregate_bundles(conn, config, bundle_ids: list[str], verdicts: dict[str, dict[str, Any]]) -> None:
    """Recompute these bundles from their mentions (§42A.2.3 counts; nested groups once), score them and store."""
    cfg = config.backlinks
    if not bundle_ids:
        return
    by_bundle: dict[str, list[dict[str, Any]]] = {}
    for m in usql.mentions_of_bundles(conn, bundle_ids):
        by_bundle.setdefault(m["evidence_bundle_id"], []).append(m)
    for bid in bundle_ids:
        ms = [m for m in by_bundle.get(bid, []) if m["state"] != "suppressed"]
        verdict = verdicts.get(bid, {}).get("verdict", "none")
        if not ms:
            if verdict == "none":
                usql.delete_bundle(conn, bid)
            else:
                old = usql.get_bundle(conn, bid)
                if old:
                    old.update(support_mention_ids=[], support_count=0, user_verdict=verdict)
                    usql.upsert_bundle(conn, old)
            continue
        b = bundle_from_mentions(bid, ms)
        b.user_verdict = verdict
        # NP20: a semantically_related bundle needs a second observation before it exists at all
        if b.relation_type == "semantically_related" and b.distinct_observation_count < 2 and verdict == "none":
            usql.delete_bundle(conn, bid)
            continue
        B.score(b, usql.degree(conn, b.target_node_id), cfg.hub_threshold)
        old = usql.get_bundle(conn, bid)
        b.promotion_state = old["promotion_state"] if old else "candidate_relation"
        if verdict == "rejected":
            b.promotion_state = "suppressed"
        elif b.promotion_state == "suppressed":
            b.promotion_state = "candidate_relation"
        row = b.as_dict()
        row["evidence_score"] = round(row["evidence_score"], 6)
        row["salience_score"] = round(row["salience_score"], 6)
        row["hub_penalty"] = round(row["hub_penalty"], 6)
        usql.upsert_bundle(conn, row)


def edge_payload(b: B.Bundle) -> dict[str, Any]:
    return {"learned_by": LEARNED_BY, "evidence_bundle_id": b.evidence_bundle_id, "support_count": b.support_count,
            "contradiction_count": b.contradiction_count, "last_supported_at": b.last_supported_at,
            "visibility_class": b.visibility_class}


def held_down(payload: dict[str, Any], support_count: int) -> bool:
    """§42A.6 vs §42A.2.4 (G60): an edge hygiene demoted is promoted again only on NEW evidence — its bundle's
    support must exceed the support it had when it was demoted (``demoted_support_count``, the watermark hygiene
    writes into the edge payload). Bundle scores do not decay, so without this the next back-link run would undo
    every demotion."""
    if not payload.get("demoted_at"):
        return False
    mark = payload.get("demoted_support_count", payload.get("support_count", 0)) or 0
    return support_count <= int(mark)


def promote_all(conn, config, writer: KnowledgeWriter, now: str) -> dict[str, int]:
    """§42A.2.4 materializePromotedEdges through the single writer; promoted edges whose bundle no longer
    qualifies are ended (demoted; the bundle stays a candidate and can be promoted again)."""
    cfg = config.backlinks
    counts = {"edges_promoted": 0, "edges_updated": 0, "edges_demoted": 0, "promotions_refused": 0}
    bundles = [B.Bundle(**{k: v for k, v in r.items()}) for r in usql.candidate_bundles(conn)]
    firsts = {b.evidence_bundle_id: usql.first_mention(conn, b.support_mention_ids[0]) if b.support_mention_ids
              else None for b in bundles if b.support_count == 1}
    chosen = B.select_promotions(bundles, cfg.promotion, cfg.budget, firsts)
    keep: set[tuple[str, str, str]] = set()
    for b, why in chosen:
        src, tgt = B.normalize_pair(b.source_node_id, b.target_node_id, b.relation_type)
        key = (src, b.relation_type, tgt)
        if b.user_verdict != "approved" and usql.retracted_bundle_edge(conn, *key):
            continue  # a person rolled this promotion back: it is not redone (§28)
        keep.add(key)
        state = "active" if b.user_verdict == "approved" else "observed"
        payload = edge_payload(b)
        score = round(B.evidence_score(b), 6)
        cur = usql.current_edge(conn, *key)
        if cur and b.user_verdict != "approved" and held_down(cur["payload"] or {}, b.support_count):
            counts["held_after_hygiene"] = counts.get("held_after_hygiene", 0) + 1
            continue  # hygiene demoted it and no new evidence came since (G60): it stays demoted, not ended
        if cur and cur["confidence"] == score and cur["lifecycle_state"] == state and cur["payload"] == payload:
            usql.set_promotion_state(conn, b.evidence_bundle_id,
                                     "user_verified" if b.user_verdict == "approved" else "reinforced_relation")
            continue
        try:
            res = writer.write(KnowledgeWrite(
                source_event="backlinks:promote",
                change_summary=f"back-link: {b.relation_type} promoted on {b.support_count} mention(s) "
                               f"({why}; evidence {score:.3f})",
                ops=[CreateEdge(source_id=src, relation_type=b.relation_type, target_id=tgt, confidence=score,
                                lifecycle_state=state, payload=payload, on_conflict="replace")]))
        except KnowledgeError:
            counts["promotions_refused"] += 1
            continue
        if res.created:
            counts["edges_updated" if cur else "edges_promoted"] += 1
        usql.set_promotion_state(conn, b.evidence_bundle_id,
                                 "user_verified" if b.user_verdict == "approved" else "reinforced_relation")
    for e in usql.promoted_edges(conn):
        key = (e["source_id"], e["relation_type"], e["target_id"])
        if key in keep:
            continue
        writer.write(KnowledgeWrite(
            source_event="backlinks:demote", change_summary="back-link: the bundle no longer qualifies; edge ended",
            ops=[EndEdge(source_id=key[0], relation_type=key[1], target_id=key[2],
                         reason="evidence bundle no longer qualifies for promotion")]))
        bid = (e["payload"] or {}).get("evidence_bundle_id")
        if bid and (b := usql.get_bundle(conn, bid)) and b["promotion_state"] != "suppressed":
            usql.set_promotion_state(conn, bid, "candidate_relation")
        counts["edges_demoted"] += 1
    return counts


def refresh_review_state(conn) -> dict[str, dict[str, Any]]:
    """Rebuild verdicts, rejections and suppressions from the review provenance in the node store (the canonical
    record: a rollback of a verdict commit removes it, and the next run forgets the verdict). Returns
    bundle id → latest verdict; re-applies retargets and relation corrections to the mentions."""
    verdicts: dict[str, dict[str, Any]] = {}
    rejections: dict[str, dict[str, Any]] = {}
    patterns: dict[str, dict[str, Any]] = {}
    for p in usql.review_provenance(conn):
        md = p["source_metadata"] or {}
        kind = md.get("review")
        if kind == "verdict":
            verdicts[md["bundle_id"]] = {"verdict": md["verdict"], **md}
            if md["verdict"] == "rejected":
                rid = B.stable_sha256(f"rej|{md['bundle_id']}")
                rejections[rid] = {"rejection_id": rid, "source_node_id": md["source_node_id"],
                                   "rejected_target_node_id": md["target_node_id"],
                                   "matched_text_span": md.get("mention_text", "")[:500],
                                   "rejection_reason": md.get("reason") or "no_relationship",
                                   "correct_target_node_id": None, "created_at": p["created_at"]}
            else:
                rejections.pop(B.stable_sha256(f"rej|{md['bundle_id']}"), None)
        elif kind == "retarget":
            m = usql.get_mention(conn, md["mention_id"])
            if m is not None and m["resolved_node_id"] != md["new_target_node_id"]:
                usql.retarget_mention(conn, md["mention_id"], md["new_target_node_id"], md["relation_type"],
                                      md["new_bundle_id"])
            if md.get("old_target_node_id"):
                rid = B.stable_sha256(f"rej|{md['mention_id']}|{md['old_target_node_id']}")
                rejections[rid] = {"rejection_id": rid, "source_node_id": md["source_node_id"],
                                   "rejected_target_node_id": md["old_target_node_id"],
                                   "matched_text_span": md.get("mention_text", "")[:500],
                                   "rejection_reason": "wrong_entity",
                                   "correct_target_node_id": md["new_target_node_id"], "created_at": p["created_at"]}
        elif kind == "relation":
            usql.rekey_bundle_mentions(conn, md["bundle_id"], md["to_relation_type"], md["new_bundle_id"])
        elif kind == "candidate":
            status = {"create_new": "approved", "link_existing": "linked_existing", "dismiss": "rejected"}[md["action"]]
            usql.set_candidate_status(conn, md["candidate_id"], status)
            if md.get("node_id"):  # the mentions that waited for this node resolve to it now
                usql.resolve_pattern(conn, md["normalized_mention"], md["node_id"])
        elif kind == "suppress":
            patterns[md["pattern_id"]] = {k: md.get(k) for k in ("pattern_id", "normalized_mention", "span_class",
                                                                 "scope", "work_context_id", "surface", "reason")}
            patterns[md["pattern_id"]]["created_at"] = p["created_at"]
    usql.replace_rejections(conn, list(rejections.values()))
    usql.replace_suppressions(conn, list(patterns.values()))
    usql.unsuppress_all(conn)
    touched = set(verdicts) | set(usql.bundles_with_verdict(conn))  # a rolled-back verdict is forgotten
    for pat in patterns.values():
        touched |= set(usql.suppress_mentions(conn, pat["normalized_mention"], pat["span_class"], pat["scope"],
                                              pat["work_context_id"], pat["surface"], pat["reason"]))
    for bid in touched:
        verdicts.setdefault(bid, {"verdict": "none"})
    return verdicts


def _when(ts: str):
    try:
        return parse_utc(ts)
    except ValueError:  # an ISO time without milliseconds (hand-made rows, other writers)
        import datetime as dt

        return dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))


def since_days(now: str, then: str | None) -> float:
    if not then:
        return 365.0
    return max(0.0, (_when(now) - _when(then)).total_seconds() / 86400)
