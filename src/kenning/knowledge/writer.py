"""The single writer (DOC72 §4A, §28, §37): ``entity_knowledge_write``.

Every change to the node store — create, update, feedback, archive, usage, edges — is one ``KnowledgeCommit``:
the operations are validated (payload contracts, relation vocabulary, expected_updated_at) before anything is
written, applied to in-memory documents, diffed into RFC 6902 ``patch`` / ``reverse_patch`` pairs and written in
one SQLite transaction (a savepoint when the caller — a pipeline stage — already holds one). A replayed
idempotency key returns the commit it made the first time; a write that changes nothing makes no commit.
Rollback is a compensating commit: history is never rewritten."""

from __future__ import annotations

import datetime as dt
import hashlib
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable

import apsw
import jsonpatch
import orjson

from kenning.config import Config
from kenning.knowledge import docs, patch as jpatch
from kenning.knowledge.confidence import apply_evidence, confidence_breakdown, event_weight
from kenning.knowledge.contracts import validate_payload
from kenning.knowledge.errors import (EdgeNotFound, HysteresisBlocked, KnowledgeError, NodeExists, NodeNotFound,
                                      RollbackError, StaleWrite)
from kenning.knowledge.kinds import check_kind
from kenning.knowledge.lifecycle import auto_promotion_allowed, repromotion_allowed, sparsity_tier, starting_state
from kenning.knowledge.ops import (AliasIn, ArchiveNode, CreateEdge, CreateNode, EndEdge, Evidence, Feedback,
                                   KnowledgeWrite, MergeNodes, ProvenanceIn, RecordUsage, UpdateEdge,
                                   UpdateNode)
from kenning.knowledge.provenance import clip_excerpt, excerpt_hash
from kenning.knowledge.relations import check_relation, normalize_edge
from kenning.pipeline.clock import Clock
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import forget as fsql
from kenning.store import knowledge as ksql
from kenning.store.connection import write_scope

# Canonical lifecycle ranks for telling a promotion from a demotion (§5.7, §6.4); the others are end states.
_RANK = {"observed": 0, "suggested": 1, "confirmed": 2, "managed": 3}
_MUTATION_TYPE = {"create_node": "create", "update_node": "update", "feedback": "update", "evidence": "update",
                  "record_usage": "update", "archive_node": "archive", "create_edge": "edge_create",
                  "end_edge": "edge_remove", "merge_nodes": "update",
                  "update_edge": "update"}
# §34.8 extracted_item_kind for the node kinds it names; other kinds keep their own name (decision K6).
_ITEM_KIND = {"world_entity": "entity", "memory_directive": "memory_directive", "domain_concept": "domain_concept",
              "standing_procedure": "standing_procedure", "obligation": "obligation"}


def normalize_alias(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def patched_payload(payload: dict[str, Any] | None, payload_set: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of ``payload`` with ``payload_set``'s top-level keys set; a None value removes its key (ops.py)."""
    out = dict(payload or {})
    for k, v in (payload_set or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


@dataclass
class CommitResult:
    commit_id: str | None
    created: bool  # False: nothing changed (no commit) or an idempotency key was replayed
    replayed: bool = False
    node_ids: list[str] = field(default_factory=list)
    mutations: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"commit_id": self.commit_id, "created": self.created, "replayed": self.replayed,
                "node_ids": self.node_ids, "mutations": self.mutations, "warnings": self.warnings}


@dataclass
class ForgetResult:
    """What ``KnowledgeWriter.forget`` did: ids only, never content."""
    commit: CommitResult | None = None
    nodes_deleted: list[str] = field(default_factory=list)
    nodes_changed: list[str] = field(default_factory=list)
    edges_deleted: list[str] = field(default_factory=list)
    edges_changed: list[str] = field(default_factory=list)
    provenance_removed: set[str] = field(default_factory=set)


@dataclass
class _Pending:
    """Documents as the write will leave them, keyed by target id, plus what the commit records beside them."""
    before: dict[str, dict[str, Any]] = field(default_factory=dict)
    after: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)  # (target_id, mutation type) in first-touch order
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class KnowledgeWriter:
    """Owns every write to the node store. ``clock`` gives commit and row timestamps (frozen under ``--as-of``)."""

    def __init__(self, conn: apsw.Connection, config: Config, *, clock: Clock | None = None,
                 run_id: str | None = None, export_log: bool = True):
        self.conn, self.config = conn, config
        self.clock = clock or Clock(None)
        self.ids = IdFactory(config.ids.id_namespace)
        self.run_id = run_id
        self.export_log = export_log
        self.kcfg = config.knowledge

    # ---- public --------------------------------------------------------------------------------------------

    def write(self, request: KnowledgeWrite | dict[str, Any]) -> CommitResult:
        req = request if isinstance(request, KnowledgeWrite) else KnowledgeWrite.model_validate(request)
        own_txn = not self.conn.in_transaction
        with write_scope(self.conn):
            result = self._write(req)
        if own_txn and result.created and self.export_log:
            self._export()
        return result

    def rollback(self, commit_id: str, *, reason: str, idempotency_key: str | None = None) -> CommitResult:
        own_txn = not self.conn.in_transaction
        with write_scope(self.conn):
            result = self._rollback(commit_id, reason, idempotency_key)
        if own_txn and result.created and self.export_log:
            self._export()
        return result

    def forget(self, node_ids: list[str], is_forgotten: Callable[[str, dict[str, Any]], bool],
               edge_forgotten: Callable[[dict[str, Any]], bool | list[str]], *, summary: str,
               tainted: Callable[[dict[str, Any]], bool] = lambda doc: False) -> "ForgetResult":
        """Issue 23 §1 (decision P6): take the forgotten sources' provenance off these nodes, as one commit.

        A node left without provenance goes (with its edges); the others lose those entries and get confidence
        recomputed: each removed entry's ``confidence_contribution`` comes back off α (support) or β
        (contradiction), never below the prior. ``edge_forgotten(edge)`` says whether a current edge between
        surviving nodes goes (True), keeps a shorter ``assertion_ids`` list (a list) or stays (False). A node whose
        remaining document still quotes the forgotten text (``tainted``: a payload made from it) goes as well."""
        with write_scope(self.conn):
            return self._forget(node_ids, is_forgotten, edge_forgotten, summary, tainted)

    def _forget(self, node_ids, is_forgotten, edge_forgotten, summary, tainted) -> "ForgetResult":
        now = self.clock.now()
        pend = _Pending()
        prior = self.kcfg.confidence.prior
        res = ForgetResult()
        for nid in sorted(set(node_ids)):
            doc = self._doc(pend, nid, "update")
            if not doc:
                continue
            prov = doc.get("provenance") or {}
            gone = sorted(pid for pid, e in prov.items() if is_forgotten(pid, e))
            if not gone:
                continue
            res.provenance_removed.update(gone)
            if len(gone) == len(prov) or tainted(doc):
                pend.after[nid] = {}
                pend.order[pend.order.index((nid, "update"))] = (nid, "archive")
                res.nodes_deleted.append(nid)
                continue
            for pid in gone:
                c = prov.pop(pid).get("confidence_contribution") or 0.0
                if c > 0:
                    doc["alpha"] = max(prior.alpha, doc["alpha"] - c)
                elif c < 0:
                    doc["beta"] = max(prior.beta, doc["beta"] + c)
            res.nodes_changed.append(nid)
            self._refresh(doc, now)
        deleted = set(res.nodes_deleted)
        for key, edge in fsql.edge_candidates(self.conn, sorted(deleted)):
            verdict = True if (edge["source_id"] in deleted or edge["target_id"] in deleted) else edge_forgotten(edge)
            if verdict is False:
                continue
            doc = self._doc(pend, key, "edge_remove")
            if verdict is True:
                pend.after[key] = {}
                res.edges_deleted.append(key)
            else:
                doc["payload"] = {**(doc.get("payload") or {}), "assertion_ids": verdict}
                pend.order[pend.order.index((key, "edge_remove"))] = (key, "update")
                res.edges_changed.append(key)
        res.commit = self._commit(pend, now, kind="forward", source_event="forget", change_summary=summary,
                                  idempotency_key=None)
        return res

    # ---- forward writes ------------------------------------------------------------------------------------

    def _write(self, req: KnowledgeWrite) -> CommitResult:
        if req.idempotency_key:
            done = ksql.commit_by_idempotency_key(self.conn, req.idempotency_key)
            if done is not None:
                return CommitResult(done["commit_id"], created=False, replayed=True)
        now = self.clock.now()
        pend = _Pending()
        self._check_expected(req)
        for op in req.ops:
            self._apply(op, pend, now)
        return self._commit(pend, now, kind="forward", source_event=req.source_event,
                            change_summary=req.change_summary, idempotency_key=req.idempotency_key,
                            prompt_version=req.extraction_prompt_version, expected=req.expected_updated_at)

    def _check_expected(self, req: KnowledgeWrite) -> None:
        exp = req.expected_updated_at
        if exp is None:
            return
        if isinstance(exp, str):
            first = req.ops[0]
            target = getattr(first, "id", None) or getattr(first, "source_id", None)
            exp = {target: exp}
        for node_id, expected in exp.items():
            actual = ksql.node_updated_at(self.conn, node_id)
            if actual is None:
                raise NodeNotFound(node_id)
            if actual != expected:
                raise StaleWrite(node_id, expected, actual)

    def _doc(self, pend: _Pending, target_id: str, mtype: str) -> dict[str, Any]:
        if target_id not in pend.after:
            before = docs.load(self.conn, target_id)
            pend.before[target_id] = before
            pend.after[target_id] = jpatch.copy(before)
            pend.order.append((target_id, mtype))
        return pend.after[target_id]

    def _existing(self, pend: _Pending, node_id: str, mtype: str) -> dict[str, Any]:
        doc = self._doc(pend, node_id, mtype)
        if not doc:
            raise NodeNotFound(node_id)
        return doc

    def _apply(self, op: Any, pend: _Pending, now: str) -> None:
        handler: Callable[[Any, _Pending, str], None] = getattr(self, f"_op_{op.op}")
        handler(op, pend, now)

    def _op_create_node(self, op: CreateNode, pend: _Pending, now: str) -> None:
        kind = check_kind(op.node_kind)
        node_id = op.id or self.node_id(kind, op.canonical_name)
        doc = self._doc(pend, node_id, "create")
        if doc:
            if op.if_exists == "error":
                raise NodeExists(node_id, doc.get("canonical_name", ""))
            if op.if_exists == "skip":
                return
            for a in op.aliases:
                self._add_alias(doc, a)
            for p in op.provenance:
                self._add_provenance(doc, p, now)
            self._refresh(doc, now)
            return
        checked = validate_payload(kind, op.payload, user_confirmed_literals=op.user_confirmed_literals)
        pend.warnings.extend(f"{node_id}: {w}" for w in checked.warnings)
        start = starting_state(kind, composite=op.composite)
        doc.update({"id": node_id, "node_kind": kind, "canonical_name": op.canonical_name.strip(),
                    "alpha": self.kcfg.confidence.prior.alpha, "beta": self.kcfg.confidence.prior.beta,
                    "confidence": 0.5, "staleness_state": "fresh",
                    "lifecycle_state": op.lifecycle_state or start.lifecycle_state,
                    "created_at": now, "updated_at": now, "payload": checked.payload, "is_active": 1})
        substate = op.lifecycle_substate or start.lifecycle_substate
        if substate:
            doc["lifecycle_substate"] = substate
        events = list(op.evidence) if op.evidence else ([start.event_type] if start.event_type else [])
        for ev in events:
            self._weight(ev)
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], ev, cfg=self.kcfg.confidence)
        self._add_alias(doc, AliasIn(alias=op.canonical_name, alias_type="name", confidence=1.0))
        for a in op.aliases:
            self._add_alias(doc, a)
        for p in op.provenance:
            self._add_provenance(doc, p, now)
        if op.last_verified_at:
            doc["last_verified_at"] = op.last_verified_at
        doc.setdefault("last_verified_at", now)  # no dated evidence: verified when it was stated here (K17)
        self._refresh(doc, now)

    def _op_update_node(self, op: UpdateNode, pend: _Pending, now: str) -> None:
        doc = self._existing(pend, op.id, "update")
        if op.canonical_name is not None:
            doc["canonical_name"] = op.canonical_name.strip()
            self._add_alias(doc, AliasIn(alias=op.canonical_name, alias_type="name", confidence=1.0))
        if op.payload is not None or op.payload_set:
            payload = patched_payload(op.payload if op.payload is not None else doc.get("payload"), op.payload_set)
            checked = validate_payload(doc["node_kind"], payload)
            pend.warnings.extend(f"{op.id}: {w}" for w in checked.warnings)
            doc["payload"] = checked.payload
        for a in op.add_aliases:
            self._add_alias(doc, a)
        for text in op.remove_aliases:
            aid = self._alias_id(op.id, text)
            if aid in (doc.get("aliases") or {}):
                del doc["aliases"][aid]
        for p in op.add_provenance:
            self._add_provenance(doc, p, now)
        for pid in op.remove_provenance:
            (doc.get("provenance") or {}).pop(pid, None)
        if op.staleness_state is not None:
            doc["staleness_state"] = self._enum("staleness_state", op.staleness_state, _STALENESS)
        if op.lifecycle_state is not None:
            self._set_lifecycle(doc, op.lifecycle_state, op.lifecycle_substate, now, pend, by_user=op.by_user)
        elif op.lifecycle_substate is not None:
            doc["lifecycle_substate"] = op.lifecycle_substate
        if op.last_verified_at is not None:
            doc["last_verified_at"] = op.last_verified_at
        if op.is_active is not None:
            doc["is_active"] = 1 if op.is_active else 0
        self._refresh(doc, now)

    def _op_feedback(self, op: Feedback, pend: _Pending, now: str) -> None:
        doc = self._existing(pend, op.id, "update")
        ccfg = self.kcfg.confidence
        if op.action == "confirm":
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], "confirmed_by_user", cfg=ccfg)
            if _RANK.get(doc["lifecycle_state"], 99) < _RANK["confirmed"] or doc["lifecycle_state"] == "retracted":
                doc["lifecycle_state"] = "confirmed"
            if doc.get("lifecycle_substate") in ("candidate", "user_rejected"):
                doc["lifecycle_substate"] = "active" if doc["node_kind"] == "standing_procedure" else None
            doc["is_active"] = 1
            doc["staleness_state"] = "fresh"
            doc["last_verified_at"] = now
            entry, outcome = "user_confirmation", "confirmed"
        elif op.action == "reject":
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], "confirmed_by_user",
                                                       contradicts=True, cfg=ccfg)
            doc["lifecycle_state"], doc["lifecycle_substate"] = "retracted", "user_rejected"
            entry, outcome = "user_rejection", "rejected"
        else:
            if op.canonical_name is None and not op.payload_set:
                raise KnowledgeError("a correction needs a new name (--name) or payload fields (--set key=value)")
            if op.canonical_name is not None:
                doc["canonical_name"] = op.canonical_name.strip()
                self._add_alias(doc, AliasIn(alias=op.canonical_name, alias_type="name", confidence=1.0))
            if op.payload_set:
                payload = patched_payload(doc.get("payload"), op.payload_set)
                checked = validate_payload(doc["node_kind"], payload, user_confirmed_literals=True)
                doc["payload"] = checked.payload
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], "taught_by_user", cfg=ccfg)
            doc["last_verified_at"] = now
            doc["staleness_state"] = "fresh"
            entry, outcome = "user_correction", "corrected"
        self._add_provenance(doc, ProvenanceIn(
            entry_type=entry, source_description=f"the user ({op.action})", source_ref=f"user:{op.action}:{now}",
            authority_type="personal", authorial_voice="self", still_current="yes",
            correction_reason=op.reason), now)
        self._outcome(pend, doc, outcome, now, surface="user_feedback")
        self._refresh(doc, now)

    def _op_evidence(self, op: Evidence, pend: _Pending, now: str) -> None:
        doc = self._existing(pend, op.id, "update")
        if op.provenance is not None:
            self._add_provenance(doc, op.provenance.model_copy(
                update={"evidence_event": op.event_type, "contradicts": op.contradicts}), now)
        else:
            self._weight(op.event_type)  # an unknown event is refused before anything changes
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], op.event_type,
                                                       contradicts=op.contradicts, cfg=self.kcfg.confidence)
        self._refresh(doc, now)

    def _op_archive_node(self, op: ArchiveNode, pend: _Pending, now: str) -> None:
        doc = self._existing(pend, op.id, "archive")
        doc["is_active"] = 0
        doc["lifecycle_state"] = op.lifecycle_state
        doc["lifecycle_substate"] = f"archived: {op.reason}"[:200]
        self._refresh(doc, now)

    def _op_record_usage(self, op: RecordUsage, pend: _Pending, now: str) -> None:
        """§34: a full ExperienceRecord for the kinds and tiers that keep one (moving α/β by its rules), the light
        or minimal form in the payload for the others (K15)."""
        from kenning.knowledge.experience import apply_usage_event, experience_depth, light_experience, new_record

        doc = self._existing(pend, op.id, "update")
        tier = sparsity_tier(doc["node_kind"], entity_type=(doc.get("payload") or {}).get("entity_type"),
                             lifecycle_state=doc["lifecycle_state"], cfg=self.kcfg.lifecycle)
        depth = experience_depth(tier, doc["node_kind"], self.kcfg.experience)
        event = {"occurred_at": now, **op.event}
        try:
            if depth == "full":
                record = doc.get("experience") or new_record()
                record = {k: v for k, v in record.items() if k != "target_node_id"}
                upd = apply_usage_event(record, event, kind=doc["node_kind"], cfg=self.kcfg.experience)
                doc["experience"] = {k: v for k, v in upd.record.items() if v is not None and k != "target_node_id"}
                doc["alpha"] = round(doc["alpha"] + upd.alpha_delta, 6)
                doc["beta"] = round(doc["beta"] + upd.beta_delta, 6)
            else:
                doc["payload"] = light_experience(doc.get("payload") or {}, event, minimal=depth == "minimal")
        except ValueError as e:
            raise KnowledgeError(f"usage event for {op.id}: {e}") from None
        self._refresh(doc, now)

    def _op_create_edge(self, op: CreateEdge, pend: _Pending, now: str) -> None:
        rel = check_relation(op.relation_type)
        src, rel, tgt = normalize_edge(op.source_id, rel, op.target_id)
        for nid in (src, tgt):
            node = pend.after.get(nid)
            if not node and ksql.node_updated_at(self.conn, nid) is None:
                raise NodeNotFound(nid)
        current = ksql.current_edge(self.conn, src, rel, tgt)
        pending_current = self._pending_current_edge(pend, src, rel, tgt)
        if pending_current is not None:
            current = pending_current
        if current:
            key = docs.edge_doc_key(current)
            doc = self._doc(pend, key, "update")
            if op.on_conflict == "replace":
                doc["confidence"] = op.confidence
                doc["lifecycle_state"] = op.lifecycle_state
                if op.payload is not None:
                    doc["payload"] = op.payload
                return
            if op.confidence > doc.get("confidence", 0.0):
                doc["confidence"] = op.confidence
            if op.payload:
                merged = {**(doc.get("payload") or {}), **op.payload}
                doc["payload"] = merged
            return
        start = op.start_date or now
        key = docs.edge_key(src, rel, tgt, start)
        doc = self._doc(pend, key, "edge_create")
        if doc:  # an ended edge with the same start: the relation holds again from the same moment — reopen it
            if doc.get("lifecycle_state") == "retracted":
                return  # …unless a person rolled it back: a re-run of the pipeline must not undo that (§28)
            doc.pop("end_date", None)
            doc["lifecycle_state"] = op.lifecycle_state
            return
        doc.update({"source_id": src, "target_id": tgt, "relation_type": rel, "confidence": op.confidence,
                    "lifecycle_state": op.lifecycle_state, "start_date": start})
        if op.payload:
            doc["payload"] = op.payload

    def _pending_current_edge(self, pend: _Pending, src: str, rel: str, tgt: str) -> dict[str, Any] | None:
        for key, doc in pend.after.items():
            if docs.is_edge_key(key) and doc and doc.get("end_date") is None and \
                    (doc["source_id"], doc["relation_type"], doc["target_id"]) == (src, rel, tgt):
                return doc
        return None

    def _current_edge_doc(self, op: EndEdge | UpdateEdge, pend: _Pending, verb: str, mtype: str) -> dict[str, Any]:
        """The document of the current edge ``op`` names (this commit's pending one first), or EdgeNotFound."""
        rel = check_relation(op.relation_type)
        src, rel, tgt = normalize_edge(op.source_id, rel, op.target_id)
        current = self._pending_current_edge(pend, src, rel, tgt) or ksql.current_edge(self.conn, src, rel, tgt)
        if not current:
            raise EdgeNotFound(f"no current edge {src} -{rel}-> {tgt} to {verb}")
        return self._doc(pend, docs.edge_doc_key(current), mtype)

    def _op_end_edge(self, op: EndEdge, pend: _Pending, now: str) -> None:
        doc = self._current_edge_doc(op, pend, "end", "edge_remove")
        end = op.end_date or now
        if end < doc["start_date"]:
            end = doc["start_date"]
        doc["end_date"] = end
        doc["payload"] = {**(doc.get("payload") or {}), "end_reason": op.reason}

    def _op_update_edge(self, op: UpdateEdge, pend: _Pending, now: str) -> None:
        doc = self._current_edge_doc(op, pend, "update", "update")
        if op.lifecycle_state is not None:
            doc["lifecycle_state"] = op.lifecycle_state
        if op.confidence is not None:
            doc["confidence"] = op.confidence
        if op.payload_set:
            doc["payload"] = patched_payload(doc.get("payload"), op.payload_set)

    def _op_merge_nodes(self, op: MergeNodes, pend: _Pending, now: str) -> None:
        if op.survivor_id == op.merged_id:
            raise KnowledgeError(f"cannot merge node {op.survivor_id} into itself")
        surv = self._existing(pend, op.survivor_id, "update")
        old = self._existing(pend, op.merged_id, "archive")
        if surv["node_kind"] != old["node_kind"]:
            raise KnowledgeError(f"cannot merge a {old['node_kind']} into a {surv['node_kind']}: folding is only "
                                 f"within one kind (seed 003 §42)")
        if not old.get("is_active") or old.get("lifecycle_state") == "merged":
            raise KnowledgeError(f"node {op.merged_id} is not active (already {old.get('lifecycle_state')})")
        # §42 merge math: the survivor keeps the stronger evidence of both, plus half an observation for the fold.
        surv["alpha"] = max(surv["alpha"], old["alpha"]) + 0.5
        surv["beta"] = max(surv["beta"], old["beta"])
        if op.canonical_name is not None:
            surv["canonical_name"] = op.canonical_name.strip()
        for a in (old.get("aliases") or {}).values():
            self._add_alias(surv, AliasIn(alias=a["normalized_alias"], alias_type=a.get("alias_type", "name"),
                                          confidence=a.get("confidence", 0.8)))
        self._add_alias(surv, AliasIn(alias=old["canonical_name"], alias_type="name", confidence=1.0))
        if op.canonical_name is not None:
            self._add_alias(surv, AliasIn(alias=op.canonical_name, alias_type="name", confidence=1.0))
        if op.canonical_description:
            payload = dict(surv.get("payload") or {})
            payload["description"] = op.canonical_description
            surv["payload"] = validate_payload(surv["node_kind"], payload).payload
        # The merged node's evidence moves with it (copied under new ids; α/β already counted by the merge math).
        prov = surv.setdefault("provenance", {})
        for pid, entry in sorted((old.get("provenance") or {}).items()):
            new_id = self.ids.make("doc72_provenance_merged", surv["id"], pid)
            prov.setdefault(new_id, dict(entry))
        if not prov:
            surv.pop("provenance", None)
        latest = max(filter(None, (surv.get("last_verified_at"), old.get("last_verified_at"))), default=None)
        if latest:
            surv["last_verified_at"] = latest
        # Rewire: end each current edge of the merged node and open the same relation on the survivor.
        for e in ksql.edges_of(self.conn, op.merged_id, current_only=True):
            self._op_end_edge(EndEdge(source_id=e["source_id"], relation_type=e["relation_type"],
                                      target_id=e["target_id"], end_date=max(now, e["start_date"]),
                                      reason=f"merged into {op.survivor_id}"), pend, now)
            src = op.survivor_id if e["source_id"] == op.merged_id else e["source_id"]
            tgt = op.survivor_id if e["target_id"] == op.merged_id else e["target_id"]
            if src == tgt:
                continue  # an edge between the two merged nodes becomes a self-loop: it ends with the merge
            self._op_create_edge(CreateEdge(source_id=src, relation_type=e["relation_type"], target_id=tgt,
                                            start_date=e["start_date"], confidence=e["confidence"],
                                            payload=e.get("payload"),
                                            lifecycle_state=e.get("lifecycle_state") or "active"), pend, now)
        old["is_active"] = 0
        old["lifecycle_state"] = "merged"
        old["lifecycle_substate"] = f"merged into {op.survivor_id}: {op.reason}"[:200]
        self._refresh(surv, now)
        self._refresh(old, now)

    # ---- document helpers ----------------------------------------------------------------------------------

    def node_id(self, kind: str, canonical_name: str) -> str:
        return self.ids.make("doc72_node", kind, normalize_alias(canonical_name))

    def _alias_id(self, node_id: str, text: str) -> str:
        return self.ids.make("doc72_alias", node_id, normalize_alias(text))

    def _add_alias(self, doc: dict[str, Any], a: AliasIn) -> None:
        norm = normalize_alias(a.alias)
        if not norm:
            return
        aliases = doc.setdefault("aliases", {})
        aid = self._alias_id(doc["id"], norm)
        if aid not in aliases:
            aliases[aid] = {"normalized_alias": norm, "alias_type": a.alias_type, "confidence": a.confidence}

    def _add_provenance(self, doc: dict[str, Any], p: ProvenanceIn, now: str) -> None:
        excerpt = clip_excerpt(p.verbatim_excerpt) if p.verbatim_excerpt else None
        ehash = excerpt_hash(excerpt) if excerpt else None
        pid = self.ids.make("doc72_provenance", doc["id"], p.entry_type, p.source_ref, p.message_id, p.char_start,
                            p.char_end, ehash, p.correction_reason)
        prov = doc.setdefault("provenance", {})
        if pid in prov:
            return
        entry = {k: v for k, v in p.model_dump().items()
                 if v is not None and k not in ("evidence_event", "contradicts", "verbatim_excerpt")}
        entry.setdefault("created_at", now)
        if excerpt:
            entry.update(verbatim_excerpt=excerpt, excerpt_hash=ehash, capture_timestamp=now)
        if p.evidence_event:
            w = self._weight(p.evidence_event)
            doc["alpha"], doc["beta"] = apply_evidence(doc["alpha"], doc["beta"], p.evidence_event,
                                                       contradicts=p.contradicts, cfg=self.kcfg.confidence)
            entry.setdefault("confidence_contribution", -w if p.contradicts else w)
            latest = doc.get("last_verified_at")
            if not p.contradicts and (latest is None or entry["created_at"] > latest):
                doc["last_verified_at"] = entry["created_at"]
        prov[pid] = entry

    def _set_lifecycle(self, doc: dict[str, Any], state: str, substate: str | None, now: str, pend: _Pending,
                       *, by_user: bool) -> None:
        state = self._enum("lifecycle_state", state, _LIFECYCLE)
        old = doc["lifecycle_state"]
        surface = "user_feedback" if by_user else "system"
        if state in _RANK and old in _RANK and _RANK[state] > _RANK[old]:
            if not by_user and not self._gate_open(doc, now, pend):
                return  # §6.5: auto-promotion of this class is frozen; the node keeps its state
            if not by_user:  # §6.4: after a demotion, re-promotion waits out the cooldown; 2+ need a person
                history = [e["occurred_at"] for e in ksql.outcome_events(self.conn, item_id=doc["id"])
                           if e["outcome"] == "demoted"]
                confirmed = [e["occurred_at"] for e in ksql.outcome_events(self.conn, item_id=doc["id"])
                             if e["outcome"] == "confirmed"]
                decision = repromotion_allowed(history, now, self.kcfg.lifecycle,
                                               reset_at=max(confirmed) if confirmed else None)
                if not decision.allowed:
                    raise HysteresisBlocked(f"node {doc['id']}: promotion {old} → {state} refused: {decision.reason}")
            self._outcome(pend, doc, "promoted", now, surface=surface)
        elif state in _RANK and old in _RANK and _RANK[state] < _RANK[old]:
            self._outcome(pend, doc, "demoted", now, surface=surface)
        doc["lifecycle_state"] = state
        if substate is not None:
            doc["lifecycle_substate"] = substate

    def _gate_open(self, doc: dict[str, Any], now: str, pend: _Pending) -> bool:
        """§6.5 quality gate for an automatic promotion: the class's rolling precision over the window's outcome
        events (a person's confirmations vs rejections/corrections) must not be below its floor."""
        g = self.kcfg.lifecycle.quality_gates
        cls = g.item_kind_class.get(_ITEM_KIND.get(doc["node_kind"], doc["node_kind"]))
        if cls is None:
            return True
        since = format_utc(parse_utc(now) - dt.timedelta(days=g.window_days))
        gate = auto_promotion_allowed(cls, ksql.outcome_events(self.conn, since=since), now, self.kcfg.lifecycle)
        if not gate.allowed:
            pend.warnings.append(f"{doc['id']}: auto-promotion of {cls} frozen: precision {gate.precision:.2f} "
                                 f"below the floor {gate.floor:.2f} ({gate.action})")
        return gate.allowed

    def _weight(self, event_type: str) -> float:
        try:
            return event_weight(event_type, self.kcfg.confidence)
        except ValueError as e:
            raise KnowledgeError(str(e)) from None

    @staticmethod
    def _enum(name: str, value: str, allowed: tuple[str, ...]) -> str:
        if value not in allowed:
            raise KnowledgeError(f"{name} {value!r} is not one of {', '.join(allowed)}")
        return value

    def _outcome(self, pend: _Pending, doc: dict[str, Any], outcome: str, now: str, *, surface: str) -> None:
        pend.outcomes.append({"extracted_item_id": doc["id"], "outcome": outcome, "occurred_at": now,
                              "extracted_item_kind": _ITEM_KIND.get(doc["node_kind"], doc["node_kind"]),
                              "source_surface": surface, "user_visible": 1, "severity": None})

    def _refresh(self, doc: dict[str, Any], now: str) -> None:
        """Recompute the stored confidence (§5.5: last computed value) and stamp updated_at."""
        b = confidence_breakdown(doc["alpha"], doc["beta"],
                                 last_verified_at=doc.get("last_verified_at") or doc.get("created_at") or now,
                                 now=now, node_kind=doc["node_kind"], staleness_state=doc["staleness_state"],
                                 flags=policy_flags(doc), cfg=self.kcfg.confidence)
        doc["confidence"] = round(b["confidence"], 6)
        doc["alpha"], doc["beta"] = round(doc["alpha"], 6), round(doc["beta"], 6)
        doc["updated_at"] = now

    # ---- commit --------------------------------------------------------------------------------------------

    def _commit(self, pend: _Pending, now: str, *, kind: str, source_event: str, change_summary: str,
                idempotency_key: str | None, prompt_version: str | None = None,
                expected: str | dict[str, str] | None = None, rolled_back: str | None = None) -> CommitResult:
        mutations = []
        for target_id, mtype in pend.order:
            before, after = pend.before[target_id], pend.after[target_id]
            if _same_but_stamp(before, after):
                continue
            mutations.append({"type": mtype, "target_id": target_id,
                              "patch": jpatch.diff(before, after),
                              "reverse_patch": jpatch.diff(after, before),
                              "_before": before, "_after": after})
        if not mutations:
            return CommitResult(None, created=False, warnings=pend.warnings)
        parent = ksql.head_commit_id(self.conn)
        digest = hashlib.sha256(orjson.dumps([[m["target_id"], m["patch"]] for m in mutations],
                                             option=orjson.OPT_SORT_KEYS)).hexdigest()
        commit_id = self.ids.make("knowledge_commit", parent, idempotency_key, source_event, now, digest)
        for m in mutations:
            docs.save(self.conn, m["target_id"], m.pop("_before"), m.pop("_after"))
        ksql.insert_commit(self.conn, {
            "commit_id": commit_id, "parent_commit_ids": [parent] if parent else [], "kind": kind,
            "rolled_back_commit_id": rolled_back, "timestamp": now, "source_event": source_event,
            "change_summary": change_summary, "extraction_prompt_version": prompt_version,
            "reversible": 1, "idempotency_key": idempotency_key,
            "expected_updated_at": canonicalize(expected) if isinstance(expected, dict) else expected,
            "run_id": self.run_id,
        }, [{"commit_id": commit_id, "ordinal": i, **m} for i, m in enumerate(mutations)])
        for i, o in enumerate(pend.outcomes):
            ksql.insert_outcome_event(self.conn, {**o, "commit_id": commit_id,
                                                  "event_id": self.ids.make("doc72_outcome", commit_id, i)})
        node_ids = sorted({m["target_id"] for m in mutations if not docs.is_edge_key(m["target_id"])})
        return CommitResult(commit_id, created=True, node_ids=node_ids, mutations=len(mutations),
                            warnings=pend.warnings)

    # ---- rollback ------------------------------------------------------------------------------------------

    def _rollback(self, commit_id: str, reason: str, idempotency_key: str | None) -> CommitResult:
        key = idempotency_key
        if key:
            done = ksql.commit_by_idempotency_key(self.conn, key)
            if done is not None:
                return CommitResult(done["commit_id"], created=False, replayed=True)
        commit = ksql.get_commit(self.conn, commit_id)
        if commit is None:
            raise RollbackError(f"no commit {commit_id!r} (see `kenning commits`)")
        commit_id = commit["commit_id"]
        undone_by = self._undone_by(commit_id)
        if undone_by:
            raise RollbackError(f"commit {commit_id} was already rolled back by {undone_by} "
                                f"(roll that one back to redo it)")
        now = self.clock.now()
        pend = _Pending()
        for m in reversed(commit["mutations"]):
            target = m["target_id"]
            current = self._doc(pend, target, _ROLLBACK_TYPE[m["type"]])
            if not current:
                raise RollbackError(f"commit {commit_id} cannot be rolled back: {target} no longer exists")
            if m["type"] == "create" and not docs.is_edge_key(target):
                new = dict(current, is_active=0, lifecycle_state="retracted", lifecycle_substate="rolled_back")
            elif m["type"] == "edge_create":
                new = dict(current, end_date=max(now, current["start_date"]), lifecycle_state="retracted")
                new["payload"] = {**(current.get("payload") or {}), "end_reason": f"rolled back: {reason}"}
            else:
                self._check_unchanged(commit_id, m, current)
                try:
                    new = jpatch.apply(current, m["reverse_patch"])
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                    raise RollbackError(f"commit {commit_id} cannot be rolled back: {target} changed since ({e})")
            if not docs.is_edge_key(target) and new:
                new["updated_at"] = now
            pend.after[target] = new
        result = self._commit(pend, now, kind="rollback", source_event="rollback",
                              change_summary=f"rollback of {commit_id}: {reason}", idempotency_key=key,
                              rolled_back=commit_id)
        if not result.created:
            raise RollbackError(f"commit {commit_id} changed nothing that is still there to undo")
        return result

    def _undone_by(self, commit_id: str) -> str | None:
        """The rollback commit that currently undoes ``commit_id`` (one that was not itself undone), if any."""
        for rb in ksql.rollbacks_of(self.conn, commit_id):
            if self._undone_by(rb) is None:
                return rb
        return None

    def _check_unchanged(self, commit_id: str, mutation: dict[str, Any], current: dict[str, Any]) -> None:
        """Refuse to undo values a later commit changed again (their rollback comes first)."""
        for op in mutation["patch"]:
            if op["op"] not in ("add", "replace") or op["path"].endswith("/updated_at") or op["path"] in (
                    "/updated_at", "/confidence"):
                continue
            try:
                value = jsonpatch.JsonPointer(op["path"]).resolve(current)
            except jsonpatch.JsonPointerException:
                value = _MISSING
            if value != op["value"]:
                raise RollbackError(f"commit {commit_id} cannot be rolled back: {mutation['target_id']} "
                                    f"{op['path']} was changed by a later commit; roll that one back first "
                                    f"(`kenning commits --node {mutation['target_id'].split('|')[0]}`)")

    def _export(self) -> None:
        from kenning.knowledge.eventlog import export_pending

        export_pending(self.conn, self.config)


_MISSING = object()


def _same_but_stamp(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """True when only updated_at (and the recomputed confidence) moved: touching a node is not changing it."""
    if before == after:
        return True
    if not before or not after or docs.is_edge_key(str(after.get("id", "|"))):
        return False
    strip = ("updated_at", "confidence")
    return {k: v for k, v in before.items() if k not in strip} == {k: v for k, v in after.items() if k not in strip}
_ROLLBACK_TYPE = {"create": "archive", "edge_create": "edge_remove", "edge_remove": "edge_create",
                  "archive": "update", "update": "update"}
_STALENESS = ("fresh", "stale", "verification_required", "expired", "invalidated")
_LIFECYCLE = ("observed", "suggested", "confirmed", "managed", "archived", "merged", "split", "retracted")


def policy_flags(doc: dict[str, Any]) -> dict[str, bool]:
    """§5.4 caps that apply to this node (decision K7): a domain concept with no authority behind it, and a node
    whose every authority entry was overruled."""
    prov = list((doc.get("provenance") or {}).values())
    authority = [p for p in prov if p.get("authority_type") in ("binding", "persuasive", "personal")]
    return {
        "domain_principle_no_authority": doc.get("node_kind") == "domain_concept" and not authority,
        "superseded_authority": bool(authority) and all(p.get("still_current") in ("overruled", "outdated")
                                                        for p in authority),
    }


def entity_knowledge_write(conn: apsw.Connection, config: Config, request: KnowledgeWrite | dict[str, Any], *,
                           clock: Clock | None = None, run_id: str | None = None) -> CommitResult:
    """The seed's name for the one write path (§4A, §28)."""
    return KnowledgeWriter(conn, config, clock=clock, run_id=run_id).write(request)
