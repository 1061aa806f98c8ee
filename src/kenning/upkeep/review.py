"""§42A.2.16–§42A.2.17 the review queue and its verdicts.

The queue (``review_queue_derived``) is recomputed after every run: candidate relations not yet decided, and Tier 5
entity-creation candidates, sorted by impact × uncertainty × recency (G20), 25 a page. A verdict — approve, reject,
correct relation, retarget, suppress pattern — is ONE single-writer commit: a ``backlink_review`` provenance entry
that moves α/β of the node it concerns (G16) plus the edge change, and the derived tables follow from it in the same
transaction. The provenance entry is the canonical record: the event log carries it, a rebuild restores it, and
``kenning rollback <commit>`` removes it — the next run forgets the verdict."""

from __future__ import annotations

from typing import Any

from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.eventlog import export_pending
from kenning.knowledge.ops import (AliasIn, CreateEdge, CreateNode, EndEdge, Evidence, KnowledgeWrite, ProvenanceIn,
                                   UpdateNode)
from kenning.knowledge.relations import check_relation
from kenning.knowledge.writer import CommitResult, KnowledgeWriter
from kenning.store import upkeep as usql
from kenning.store.connection import write_scope
from kenning.upkeep import bundles as B
from kenning.upkeep.mentions import normalize_for_lookup
from kenning.upkeep.promotion import aggregate_bundles, edge_payload, promote_all, refresh_review_state, since_days

REJECTION_REASONS = ("wrong_entity", "no_relationship", "wrong_relation_type", "spurious_mention")
RETARGET_REASONS = ("wrong_entity", "merge_to_existing", "reviewer_correction")
SCOPES = ("global", "work_context", "surface_specific")
DISMISS_REASONS = ("noise", "duplicate_of_existing", "generic_reference", "not_durable")
_ENTITY_TYPE = {"organization_name": "organization", "role_titled_person": "person", "canonical_alias": "other",
                "product_or_model_reference": "product"}


class ReviewError(KnowledgeError):
    """A verdict that cannot apply (unknown bundle, a blocked relation, a bad reason)."""


# ---- the queue ---------------------------------------------------------------------------------------------------

def _names(conn, ids) -> dict[str, str]:
    return {k: v["canonical_name"] for k, v in usql.node_facts(conn, list(ids)).items()}


def refresh_queue(conn, config, now: str) -> int:
    """Recompute the pending items; returns how many are pending."""
    cfg = config.backlinks
    pol = cfg.promotion
    half = cfg.review.recency_half_life_days
    items = []
    bundles = [b for b in usql.all_bundles(conn) if b["user_verdict"] == "none"
               and b["promotion_state"] in ("candidate_relation", "reinforced_relation")]
    cands = list(usql.pending_candidates(conn))
    groups = list(usql.unresolved_groups(conn, ["generic_document_reference", "definite_description"]))
    # Recency is measured back from the newest evidence in the queue, not from the run's clock: the order is the
    # same (every item scales by one factor) and a rerun with nothing new leaves the queue as it was (G44).
    stamps = [t for t in ([b["last_supported_at"] for b in bundles] + [c["created_at"] for c in cands]
                          + [g["last_seen"] for g in groups]) if t]
    now = max(stamps) if stamps else now
    names = _names(conn, {x for b in bundles for x in (b["source_node_id"], b["target_node_id"])})
    thr = pol.min_salience_for_promotion
    for b in bundles:
        impact = min(1.0, 0.1 * b["support_count"] + 0.1 * b["distinct_observation_count"]
                     + (0.2 if b["promotion_state"] == "reinforced_relation" else 0.0))
        uncertainty = max(0.05, 1 - abs(b["evidence_score"] - thr) / max(thr, 1 - thr))
        recency = 0.5 ** (since_days(now, b["last_supported_at"]) / half)
        blocked = b["relation_type"] in pol.hard_block_relation_types
        actions = (["reject", "correct", "retarget", "suppress"] if blocked
                   else ["approve", "reject", "correct", "retarget", "suppress"])
        src, tgt = names.get(b["source_node_id"], b["source_node_id"]), names.get(b["target_node_id"], b["target_node_id"])
        state = "promoted (observed)" if b["promotion_state"] == "reinforced_relation" else "candidate"
        items.append({
            "queue_item_id": B.stable_sha256(f"rq|candidate_relation|{b['evidence_bundle_id']}"),
            "item_kind": "candidate_relation", "primary_ref": b["evidence_bundle_id"],
            "title": f"{src} —{b['relation_type']}→ {tgt}"[:240],
            "description": (f"{state}: {b['support_count']} mention(s) in {b['distinct_observation_count']} "
                            f"message(s), evidence {b['evidence_score']:.2f}"
                            + (f", {b['contradiction_count']} contradicting" if b["contradiction_count"] else "")
                            + ("; this relation is never promoted as is — correct it to approve" if blocked else ""))[:1000],
            "evidence_refs": b["support_mention_ids"][:10], "available_actions": actions,
            "visibility_class": b["visibility_class"], "status": "pending",
            "created_at": b["last_supported_at"] or now, "impact": round(impact, 6),
            "uncertainty": round(uncertainty, 6), "recency": round(recency, 6),
            "sort_score": round(impact * uncertainty * recency, 6)})
    for c in cands:
        impact, uncertainty = c["salience"], 1 - c["confidence"]
        recency = 0.5 ** (since_days(now, c["created_at"]) / half)
        items.append({
            "queue_item_id": B.stable_sha256(f"rq|entity_creation_candidate|{c['candidate_id']}"),
            "item_kind": "entity_creation_candidate", "primary_ref": c["candidate_id"],
            "title": f"new {c['suggested_node_kind']}? “{c['suggested_canonical_name']}”"[:240],
            "description": f"seen unresolved in {len(c['source_observation_ids'])} message(s) ({c['span_class']})",
            "evidence_refs": c["source_observation_ids"][:10],
            "available_actions": ["create_new", "link_existing", "dismiss"],
            "visibility_class": c["visibility_class"], "status": "pending", "created_at": c["created_at"],
            "impact": round(impact, 6), "uncertainty": round(uncertainty, 6), "recency": round(recency, 6),
            "sort_score": round(impact * uncertainty * recency, 6)})
    # suppression candidates: generic references that keep coming back unresolved (§42A.2.17 item kind)
    done = {(p["normalized_mention"], p["span_class"]) for p in usql.suppressions(conn)}
    for g in groups:
        if g["observations"] < 3 or (g["normalized_mention"], g["span_class"]) in done:
            continue
        impact = min(1.0, 0.05 * g["observations"])
        recency = 0.5 ** (since_days(now, g["last_seen"]) / half)
        items.append({
            "queue_item_id": B.stable_sha256(f"rq|suppression_candidate|{g['normalized_mention']}|{g['span_class']}"),
            "item_kind": "suppression_candidate",
            "primary_ref": B.stable_sha256(f"supp|{g['normalized_mention']}|{g['span_class']}|global|None|None"),
            "title": f"stop reading “{g['normalized_mention']}” as a mention?"[:240],
            "description": f"{g['span_class']} seen in {g['observations']} messages, never resolved "
                           f"(kenning review suppress \"{g['normalized_mention']}\" --class {g['span_class']})"[:1000],
            "evidence_refs": sorted(g["observation_ids"].split(","))[:10], "available_actions": ["suppress"],
            "visibility_class": "cloud_allowed", "status": "pending", "created_at": g["last_seen"] or now,
            "impact": round(impact, 6), "uncertainty": 0.5, "recency": round(recency, 6),
            "sort_score": round(impact * 0.5 * recency, 6)})
    usql.replace_pending_queue(conn, items)
    return len(items)


def queue_page(conn, config, *, page: int = 1, page_size: int | None = None, item_kind: str | None = None,
               status: str = "pending") -> dict[str, Any]:
    """§42A.2.17 BackLinkReviewQueuePage (with the GET envelope's state: ready | empty)."""
    cfg = config.backlinks.review
    size = min(page_size or cfg.page_size, cfg.max_page_size)
    page = max(1, page)
    items, total = usql.queue_page(conn, status=status, item_kind=item_kind, offset=(page - 1) * size, limit=size)
    return {"state": "ready" if total else "empty", "items": items, "page": page, "page_size": size,
            "total_items": total, "schema_version": 1}


def bundle_detail(conn, ref: str) -> dict[str, Any] | None:
    b = usql.get_bundle(conn, ref)
    if b is None:
        hits = usql.find_bundles(conn, ref) if len(ref) >= 6 else []
        b = usql.get_bundle(conn, hits[0]) if len(hits) == 1 else None
    if b is None:
        return None
    names = _names(conn, [b["source_node_id"], b["target_node_id"]])
    b["source_name"], b["target_name"] = names.get(b["source_node_id"]), names.get(b["target_node_id"])
    b["mentions"] = [{k: m[k] for k in ("mention_id", "observation_id", "mention_text", "span_class", "surface",
                                        "resolution_method", "graph_context_score", "polarity", "state",
                                        "context_window")}
                     for m in usql.mentions_of_bundles(conn, [b["evidence_bundle_id"]])]
    return b


# ---- verdicts ----------------------------------------------------------------------------------------------------

class Reviewer:
    def __init__(self, conn, config, *, clock):
        self.conn, self.config, self.clock = conn, config, clock
        self.writer = KnowledgeWriter(conn, config, clock=clock)

    def _bundle(self, ref: str) -> dict[str, Any]:
        b = usql.get_bundle(self.conn, ref)
        if b is None:
            hits = usql.find_bundles(self.conn, ref) if len(ref) >= 6 else []
            if len(hits) == 1:
                b = usql.get_bundle(self.conn, hits[0])
        if b is None:
            raise ReviewError(f"no evidence bundle {ref!r} (see `kenning review`)")
        return b

    def _prov(self, ref: str, reason: str, metadata: dict[str, Any], event: str | None,
              contradicts: bool = False) -> ProvenanceIn:
        now = self.clock.now()
        n = sum(1 for p in usql.review_provenance(self.conn) if p["source_ref"] == ref)
        return ProvenanceIn(entry_type="backlink_review", source_ref=ref, source_description="your review of a back-link",
                            authority_type="personal", authorial_voice="self", still_current="yes",
                            correction_reason=f"{reason} (#{n + 1})", source_metadata={**metadata, "issued_at": now},
                            evidence_event=event, contradicts=contradicts, created_at=now)

    def _apply(self, summary: str, ops: list[Any], bundle_ids: list[str]) -> CommitResult:
        """The commit, then the derived state that follows from it, in one transaction; the log after."""
        with write_scope(self.conn):
            res = self.writer.write(KnowledgeWrite(source_event="review:backlink", change_summary=summary[:2000],
                                                   ops=ops))
            verdicts = refresh_review_state(self.conn)
            aggregate_bundles(self.conn, self.config, sorted(set(bundle_ids) | set(verdicts)), verdicts)
            promote_all(self.conn, self.config, self.writer, self.clock.now())
            refresh_queue(self.conn, self.config, self.clock.now())
        export_pending(self.conn, self.config)
        return res

    def _verdict_meta(self, b: dict[str, Any], verdict: str, **extra: Any) -> dict[str, Any]:
        first = usql.get_mention(self.conn, b["support_mention_ids"][0]) if b["support_mention_ids"] else None
        return {"review": "verdict", "verdict": verdict, "bundle_id": b["evidence_bundle_id"],
                "source_node_id": b["source_node_id"], "target_node_id": b["target_node_id"],
                "relation_type": b["relation_type"], "mention_text": (first or {}).get("mention_text", ""), **extra}

    def approve(self, ref: str) -> CommitResult:
        b = self._bundle(ref)
        if b["relation_type"] in self.config.backlinks.promotion.hard_block_relation_types:
            raise ReviewError(f"{b['relation_type']} is never promoted (§42A.2.3 hard block): correct the relation "
                              f"first (`kenning review correct {b['evidence_bundle_id'][:12]} --to collaborated_with`)")
        if b["user_verdict"] == "approved":
            return CommitResult(None, created=False)
        bid = b["evidence_bundle_id"]
        bundle = B.Bundle(**b)
        bundle.user_verdict = "approved"
        ops = [Evidence(id=b["target_node_id"], event_type="confirmed_by_user",
                        provenance=self._prov(f"backlink_bundle:{bid}", "approved", self._verdict_meta(b, "approved"),
                                              "confirmed_by_user")),
               CreateEdge(source_id=b["source_node_id"], relation_type=b["relation_type"],
                          target_id=b["target_node_id"], confidence=round(B.evidence_score(bundle), 6),
                          lifecycle_state="active", payload=edge_payload(bundle), on_conflict="replace")]
        return self._apply(f"review: approved back-link {b['relation_type']} ({bid[:12]})", ops, [bid])

    def reject(self, ref: str, reason: str = "no_relationship") -> CommitResult:
        if reason not in REJECTION_REASONS:
            raise ReviewError(f"rejection reason {reason!r} is not one of {', '.join(REJECTION_REASONS)}")
        b = self._bundle(ref)
        if b["user_verdict"] == "rejected":
            return CommitResult(None, created=False)
        bid = b["evidence_bundle_id"]
        ops: list[Any] = [Evidence(id=b["target_node_id"], event_type="confirmed_by_user", contradicts=True,
                                   provenance=self._prov(f"backlink_bundle:{bid}", f"rejected: {reason}",
                                                         self._verdict_meta(b, "rejected", reason=reason),
                                                         "confirmed_by_user", contradicts=True))]
        if usql.current_edge(self.conn, b["source_node_id"], b["relation_type"], b["target_node_id"]):
            ops.append(EndEdge(source_id=b["source_node_id"], relation_type=b["relation_type"],
                               target_id=b["target_node_id"], reason=f"rejected in review: {reason}"))
        return self._apply(f"review: rejected back-link {b['relation_type']} ({reason})", ops, [bid])

    def correct(self, ref: str, to_relation: str) -> CommitResult:
        b = self._bundle(ref)
        check_relation(to_relation)
        if to_relation == b["relation_type"]:
            raise ReviewError(f"the bundle already says {to_relation}")
        if to_relation in self.config.backlinks.promotion.hard_block_relation_types:
            raise ReviewError(f"{to_relation} is never promoted; pick a specific relation")
        bid = b["evidence_bundle_id"]
        src, tgt = B.normalize_pair(b["source_node_id"], b["target_node_id"], to_relation)
        new_bid = B.bundle_id(src, tgt, to_relation)
        moved = B.Bundle(**{**b, "evidence_bundle_id": new_bid, "source_node_id": src, "target_node_id": tgt,
                            "relation_type": to_relation, "user_verdict": "approved"})
        B.score(moved, usql.degree(self.conn, tgt), self.config.backlinks.hub_threshold)
        ops: list[Any] = [
            Evidence(id=b["target_node_id"], event_type="taught_by_user", provenance=self._prov(
                f"backlink_bundle:{bid}", f"relation corrected to {to_relation}",
                {"review": "relation", "bundle_id": bid, "new_bundle_id": new_bid,
                 "from_relation_type": b["relation_type"], "to_relation_type": to_relation}, "taught_by_user")),
            UpdateNode(id=b["target_node_id"], add_provenance=(self._prov(
                f"backlink_bundle:{new_bid}", "approved", {**self._verdict_meta(b, "approved"), "bundle_id": new_bid,
                                                          "source_node_id": src, "target_node_id": tgt,
                                                          "relation_type": to_relation}, None),)),
            CreateEdge(source_id=src, relation_type=to_relation, target_id=tgt,
                       confidence=round(B.evidence_score(moved), 6), lifecycle_state="active",
                       payload=edge_payload(moved), on_conflict="replace")]
        if usql.current_edge(self.conn, b["source_node_id"], b["relation_type"], b["target_node_id"]):
            ops.append(EndEdge(source_id=b["source_node_id"], relation_type=b["relation_type"],
                               target_id=b["target_node_id"], reason=f"relation corrected to {to_relation}"))
        return self._apply(f"review: relation {b['relation_type']} → {to_relation}", ops, [bid, new_bid])

    def retarget(self, mention_id: str, new_target: str, reason: str = "wrong_entity") -> CommitResult:
        if reason not in RETARGET_REASONS:
            raise ReviewError(f"retarget reason {reason!r} is not one of {', '.join(RETARGET_REASONS)}")
        m = usql.get_mention(self.conn, mention_id)
        if m is None:
            raise ReviewError(f"no mention {mention_id!r} (a bundle's evidence_refs list its mentions)")
        if not usql.node_facts(self.conn, [new_target]):
            raise ReviewError(f"no node {new_target!r}")
        old = m["resolved_node_id"]
        rel = m["relation_hypothesis"] or "semantically_related"
        new_bid = B.bundle_id(m["source_node_id"], new_target, rel)
        meta = {"review": "retarget", "mention_id": mention_id, "source_node_id": m["source_node_id"],
                "old_target_node_id": old, "new_target_node_id": new_target, "relation_type": rel,
                "new_bundle_id": new_bid, "reason": reason, "mention_text": m["mention_text"]}
        ops: list[Any] = []
        if old and old != m["source_node_id"]:
            ops.append(Evidence(id=old, event_type="confirmed_by_user", contradicts=True, provenance=self._prov(
                f"backlink_mention:{mention_id}", f"retargeted away ({reason})", meta, "confirmed_by_user",
                contradicts=True)))
            meta = {"review": "retarget_target", "mention_id": mention_id}
        ops.append(Evidence(id=new_target, event_type="taught_by_user", provenance=self._prov(
            f"backlink_mention:{mention_id}", f"retargeted here ({reason})", meta, "taught_by_user")))
        return self._apply(f"review: mention “{m['mention_text'][:60]}” retargeted", ops,
                           [x for x in (m["evidence_bundle_id"], new_bid) if x])

    def suppress(self, mention: str, span_class: str, *, scope: str = "global", reason: str = "noise",
                 work_context_id: str | None = None, surface: str | None = None) -> CommitResult:
        if scope not in SCOPES:
            raise ReviewError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
        norm = normalize_for_lookup(mention)
        pid = B.stable_sha256(f"supp|{norm}|{span_class}|{scope}|{work_context_id}|{surface}")
        meta = {"review": "suppress", "pattern_id": pid, "normalized_mention": norm, "span_class": span_class,
                "scope": scope, "work_context_id": work_context_id, "surface": surface, "reason": reason}
        nodes = usql.resolved_nodes_of_pattern(self.conn, norm, span_class)[:20]
        ops: list[Any] = []
        for i, n in enumerate(nodes):
            ops.append(Evidence(id=n, event_type="confirmed_by_user", contradicts=True, provenance=self._prov(
                f"backlink_suppress:{pid}", f"mention pattern suppressed: {reason}",
                meta if i == 0 else {"review": "suppress_node", "pattern_id": pid}, "confirmed_by_user",
                contradicts=True)))
        if not ops:
            owner = usql.owner_node(self.conn)
            if owner is None:
                raise ReviewError("no node to record the suppression on (import something first)")
            # an unresolved pattern concerns no node's belief: recorded on the owner without evidence (G18)
            ops.append(UpdateNode(id=owner, add_provenance=(self._prov(
                f"backlink_suppress:{pid}", f"mention pattern suppressed: {reason}", meta, None),)))
        return self._apply(f"review: suppressed “{norm}” ({span_class}, {scope})", ops, [])

    # ---- Tier 5 candidates (§42A.2.12 ResolveEntityCreationCandidateCommand) ----------------------------------

    def resolve_candidate(self, candidate_id: str, resolution: str, *, canonical_name: str | None = None,
                          existing_node_id: str | None = None, reason: str = "noise") -> CommitResult:
        """create_new (re-checked at approval: an existing alias match turns it into link_existing), link_existing
        (the mention text becomes an alias of that node), or dismiss."""
        rows = [c for c in usql.pending_candidates(self.conn) if c["candidate_id"].startswith(candidate_id)]
        if len(rows) != 1:
            raise ReviewError(f"no pending entity candidate {candidate_id!r} (see `kenning review --kind "
                              f"entity_creation_candidate`)")
        c = rows[0]
        action = resolution
        meta = {"review": "candidate", "candidate_id": c["candidate_id"], "action": action,
                "normalized_mention": c["normalized_mention"]}
        ref = f"backlink_candidate:{c['candidate_id']}"
        if action == "create_new":
            name = (canonical_name or c["suggested_canonical_name"]).strip()
            kinds = self.config.backlinks.resolvable_node_kinds
            hit = usql.alias_exact(self.conn, [normalize_for_lookup(name), " ".join(name.casefold().split())], 1,
                                   kinds)
            if hit:  # NP07 approval-time re-resolve: the name exists already
                action, existing_node_id = "link_existing", hit[0]["id"]
                meta.update(action=action, converted_from="create_new")
            elif c["suggested_node_kind"] != "world_entity":
                raise ReviewError(f"only world_entity candidates are created here; add a {c['suggested_node_kind']} "
                                  f"with `kenning node add`")
            else:
                node_id = self.writer.node_id("world_entity", name)
                ops = [CreateNode(id=node_id, node_kind="world_entity", canonical_name=name, if_exists="merge",
                                  payload={"entity_type": _ENTITY_TYPE.get(c["span_class"], "other"),
                                           "description": f"named in {len(c['source_observation_ids'])} of your "
                                                          f"messages",
                                           # gate 4: local_only evidence makes a local-only (private) node
                                           **({"scope": "private"} if c["visibility_class"] == "local_only"
                                              else {})},
                                  provenance=(self._prov(ref, "created from an unresolved mention",
                                                         {**meta, "node_id": node_id}, "confirmed_by_user"),))]
                return self._apply(f"review: new entity “{name}” from unresolved mentions", ops, [])
        if action == "link_existing":
            if not existing_node_id or not usql.node_facts(self.conn, [existing_node_id]):
                raise ReviewError(f"link_existing needs an existing node id (got {existing_node_id!r})")
            ops = [Evidence(id=existing_node_id, event_type="taught_by_user", provenance=self._prov(
                       ref, "linked to an existing node", {**meta, "node_id": existing_node_id}, "taught_by_user")),
                   UpdateNode(id=existing_node_id, add_aliases=(AliasIn(alias=c["suggested_canonical_name"][:300],
                                                                        alias_type="name", confidence=0.8),))]
            return self._apply(f"review: “{c['suggested_canonical_name']}” is an existing node", ops, [])
        if action == "dismiss":
            if reason not in DISMISS_REASONS:
                raise ReviewError(f"dismiss reason {reason!r} is not one of {', '.join(DISMISS_REASONS)}")
            owner = usql.owner_node(self.conn)
            if owner is None:
                raise ReviewError("no node to record the dismissal on (import something first)")
            ops = [UpdateNode(id=owner, add_provenance=(self._prov(ref, f"candidate dismissed: {reason}",
                                                                   {**meta, "reason": reason}, None),))]
            return self._apply(f"review: dismissed “{c['suggested_canonical_name']}” ({reason})", ops, [])
        raise ReviewError(f"unknown action {action!r}: create_new, link_existing or dismiss")
