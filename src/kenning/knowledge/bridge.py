"""The ingest → node-store bridge (issue 17 part 9; decisions K60–K79): what the pipeline found becomes DOC72 nodes
and edges, published through the single writer, one ``KnowledgeWrite`` per item.

- canonical entities → ``world_entity`` (the vault owner too), id derived from the entity id;
- stage-4/5 relations between two entities → governed ``domain_<predicate>`` edges with valid time; facts that
  were superseded, retracted or negated END their edge (history kept);
- the owner's stated preferences and constraints → ``memory_directive``;
- (goals and obligations are the intake miners'; what an earlier bridge made of stage 4's intentions is retired,
  I75);
- the owner's own lexicon terms → ``domain_concept``.

Every node carries provenance to the exact message span (the excerpt is ``text_raw[char_start:char_end]``) and
starts from its source's §5.2 weight. Idempotent: the writer's merge adds only aliases and provenance not yet
there and never overwrites a name or payload, so a re-ingest adds no commit and a person's confirm / reject /
correct / rollback survives it; what a person rolled back is not redone."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

import orjson
from pydantic import ValidationError

from kenning.knowledge import docs
from kenning.knowledge.confidence import apply_evidence, event_weight
from kenning.knowledge.contracts import PayloadError, entity_type_for
from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.lifecycle import is_suggested_entity_routable
from kenning.knowledge.ops import (AliasIn, ArchiveNode, CreateEdge, CreateNode, EndEdge, KnowledgeWrite,
                                   ProvenanceIn, UpdateNode)
from kenning.knowledge.provenance import clip_excerpt
from kenning.knowledge.relations import RelationError, check_relation
from kenning.knowledge.writer import KnowledgeWriter
from kenning.store import knowledge as ksql
from kenning.store import knowledge_bridge as kb
from kenning.store.search import self_participant_names

ENDED = ("superseded", "retracted", "negated")
RETIRED_KINDS = ("goal", "obligation")  # kinds this bridge no longer publishes (I75)
SELF_KEY = "__SELF__"
OWNER_NAME = "me"
# Entry types (§33.3 leaves entry_type open): a quoted statement, a name's mention, the vault's own record.
STATEMENT, MENTION, SYSTEM = "conversation_statement", "conversation_mention", "system_record"
_SENTENCE_END = ".!?\n"
_TEXT_CACHE = 20000  # messages whose text the bridge keeps at once
_TYPE_WORDS = {"person": "a person", "organization": "an organisation", "place": "a place", "product": "a product",
               "term": "a term", "other": "something"}


@dataclass(frozen=True)
class Span:
    """One piece of evidence: a message span and who said it."""
    message_id: str
    char_start: int
    char_end: int
    excerpt: str
    created_at: str | None
    role: str
    title: str | None
    entry_type: str
    ref_id: str  # the assertion or mention behind it

    @property
    def source_ref(self) -> str:
        return f"message:{self.message_id}#{self.char_start}-{self.char_end}"


@dataclass
class Bucket:
    """One episode of a relation: the assertions that make one edge, and how it ended (None: it still holds)."""
    start: str
    assertions: list[dict[str, Any]] = field(default_factory=list)
    end: str | None = None
    reason: str | None = None


def speaker(role: str) -> str:
    return {"user": "you", "unknown": "another participant"}.get(role, "the assistant")


def voice(role: str) -> str:
    """§33.4 authorial_voice of a turn: the owner, another person (a transcript participant), or the system."""
    return {"user": "self", "unknown": "external_party"}.get(role, "system")


def sentence_window(text: str, start: int, end: int, side: int) -> tuple[int, int]:
    """A short window around ``text[start:end]``: up to ``side`` characters either way, cut back to the nearest
    sentence ends and trimmed of whitespace, so the excerpt reads as words a person said."""
    lo, hi = max(0, start - side), min(len(text), end + side)
    left = max(text.rfind(c, lo, start) for c in _SENTENCE_END)
    if left >= 0:
        lo = left + 1
    rights = [i for i in (text.find(c, end, hi) for c in _SENTENCE_END) if i >= 0]
    if rights:
        hi = min(rights) + (0 if text[min(rights)] == "\n" else 1)
    while lo < start and text[lo].isspace():
        lo += 1
    while hi > end and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def relation_name(predicate: str, prefix: str) -> str:
    """The governed edge type for a stage-4 predicate label: ``domain_`` + its snake_case form (K64)."""
    return prefix + re.sub(r"[^a-z0-9]+", "_", predicate.lower()).strip("_")


def object_text(a: dict[str, Any], names: dict[str, str]) -> str:
    if a["object_entity_id"]:
        return names.get(a["object_entity_id"], "")
    if a["object_value"] is None:
        return ""
    v = orjson.loads(a["object_value"])
    return v if isinstance(v, str) else str(v)


def goal_phrase(predicate: str, obj: str) -> str:
    """"plans_to" + "save for a new car" → "save for a new car"; "learns" + "Japanese" → "learn Japanese"."""
    words = predicate.split("_")
    if words[-1] == "to":
        return obj
    if words[0].endswith("s") and not words[0].endswith("ss"):
        words[0] = words[0][:-1]
    return " ".join([*words, obj]).strip()


def owner_name(name: str) -> str | None:
    """Stage 4 names the owner's kin "SELF's sister": the node is "my sister"."""
    return f"my {name[len('SELF') + 3:]}" if name.startswith("SELF's ") else None


class Bridge:
    def __init__(self, ctx: Any, incognito: set[str] | frozenset[str] = frozenset()):
        self.ctx, self.conn, self.config = ctx, ctx.conn, ctx.config
        self.cfg = ctx.config.knowledge.bridge
        self.ccfg = ctx.config.knowledge.confidence
        self.writer = KnowledgeWriter(ctx.conn, ctx.config, clock=ctx.clock, run_id=ctx.run_id)
        self.counts: Counter = Counter()
        self.entity_nodes: dict[str, str] = {}  # entity_id → node id of a published, active node
        self.names: dict[str, str] = {}  # entity_id → the name the node store shows
        self.texts: dict[str, dict[str, Any]] = {}
        # §13.4 incognito (issue 18, I10): no evidence is taken from an incognito conversation's messages. Which
        # messages those are is intake's rule (a package above this one), so the stage passes them in.
        self.incognito = incognito

    # ---- the run -------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        rows = kb.assertions(self.conn)
        owner = kb.self_entity(self.conn)
        objects = sorted({a["object_entity_id"] for a in rows if a["object_entity_id"]})
        self.names = {e["entity_id"]: owner_name(e["canonical_name"]) or e["canonical_name"]
                      for e in kb.entities(self.conn, entity_ids=objects)}
        relations = self._relation_groups(rows)
        ends = {e for (s, _p, o) in relations for e in (s, o)}
        self.publish_entities(owner, ends, rows)
        for key in sorted(relations):
            self.publish_relation(key, relations[key])
        self.publish_directives(rows, owner)
        self.retire_intentions()
        self.publish_concepts()
        return {k: self.counts[k] for k in sorted(self.counts)}

    def _load_messages(self, ids: list[str]) -> None:
        missing = [i for i in set(ids) if i not in self.texts]
        if len(self.texts) + len(missing) > _TEXT_CACHE:
            self.texts.clear()  # texts are read per item; a big vault's messages never all sit in memory
        if missing:
            self.texts.update(kb.messages(self.conn, missing))

    # ---- spans and provenance ------------------------------------------------------------------------------

    def span(self, message_id: str, start: int, end: int, entry_type: str, ref_id: str, *,
             window: bool = False) -> Span | None:
        if message_id in self.incognito:
            return None
        if message_id not in self.texts:
            self._load_messages([message_id])
        msg = self.texts.get(message_id)
        text = (msg or {}).get("text_raw") or ""
        if not msg or start is None or end is None or end > len(text) or start >= end:
            return None
        if window:
            start, end = sentence_window(text, start, end, self.cfg.mention_window_chars)
        excerpt = clip_excerpt(text[start:end], self.config.knowledge.provenance.excerpt_max_chars)
        return Span(message_id, start, start + len(excerpt), excerpt, msg["message_time"], msg["role"],
                    msg["conversation_title"], entry_type, ref_id)

    def source_key(self, role: str, entry_type: str) -> str:
        if role == "user":
            return "statement" if entry_type == STATEMENT else "mention"
        return "other" if role == "unknown" else "assistant"

    def event_of(self, s: Span) -> str:
        return self.cfg.evidence[self.source_key(s.role, s.entry_type)]

    def provenance(self, s: Span, *, evidence: bool = True, contradicts: bool = False,
                   reason: str | None = None) -> ProvenanceIn:
        event = self.event_of(s)
        when = (s.created_at or "")[:10]
        return ProvenanceIn(
            entry_type=s.entry_type, source_ref=s.source_ref,
            source_description=f"{speaker(s.role)} in “{s.title or 'untitled conversation'}”"
                               + (f" ({when})" if when else ""),
            authority_type="personal" if s.role == "user" and not contradicts else "informational",
            authorial_voice=voice(s.role),
            assertion_type="direct_quote" if s.entry_type == STATEMENT else None,
            verbatim_excerpt=s.excerpt, message_id=s.message_id, char_start=s.char_start, char_end=s.char_end,
            created_at=s.created_at, source_metadata={"ref_id": s.ref_id, "speaker_role": s.role},
            correction_reason=reason,
            evidence_event=event if evidence else None, contradicts=contradicts,
            confidence_contribution=None if evidence else event_weight(event, self.ccfg))

    def select(self, node_id: str, spans: Iterable[Span]) -> list[Span]:
        """New spans for a node, at most the per-node cap in all (what is recorded already counts); spans are
        given best first (the owner's own words, oldest first) and read only as far as the cap needs."""
        have = [r for r in kb.provenance_refs(self.conn, node_id) if r["entry_type"] in (STATEMENT, MENTION)]
        budget = self.cfg.max_provenance_per_node - len(have)
        known = {r["source_ref"] for r in have}
        out: list[Span] = []
        for s in spans if budget > 0 else ():
            if s.source_ref not in known:
                known.add(s.source_ref)
                out.append(s)
                if len(out) >= budget:
                    break
        return out

    # ---- one node ------------------------------------------------------------------------------------------

    def publish_node(self, *, node_id: str, kind: str, name: str, payload: dict[str, Any], aliases: list[str],
                     support: Iterable[Span], against: list[tuple[Span, str]] = (), lifecycle: str | None = None,
                     routing: tuple[int, bool] | None = None, evidence: tuple[str, ...] = (),
                     extra_provenance: tuple[ProvenanceIn, ...] = (), what: str) -> str | None:
        """Create the node (or merge into it) in one write. ``routing`` = (distinct sources, explicit match) asks
        for the §6.6 observed → suggested step; ``against`` are statements that ended the node's support."""
        existing = ksql.get_node(self.conn, node_id)
        support = self.select(node_id, support)
        if existing is None and not support and not evidence:
            return None
        prov: list[ProvenanceIn] = []
        start_evidence = tuple(evidence)
        if existing is None and not start_evidence:
            # The first source's §5.2 weight is the node's starting evidence (§6.1's per-kind event does not apply
            # to mined nodes, K62); its entry records the contribution without counting it twice.
            start_evidence = (self.event_of(support[0]),)
            prov.append(self.provenance(support[0], evidence=False))
            support = support[1:]
        prov += [self.provenance(s) for s in support]
        prov += [self.provenance(s, contradicts=True, reason=r) for s, r in against]
        prov += list(extra_provenance)
        ops: list[Any] = []
        alias_in = tuple(AliasIn(alias=a[:300], alias_type="name", confidence=0.8)
                         for a in dict.fromkeys([name, *aliases]) if a and a.strip())
        if routing is not None and (existing is None or existing["lifecycle_state"] == "observed") \
                and self._routable(existing, start_evidence, prov, *routing) \
                and (existing is None or "update" not in kb.rolled_back_mutation_types(self.conn, node_id)):
            # a promotion like any other: the writer applies the §6.5 quality gate and §6.4 hysteresis
            ops.append(UpdateNode(id=node_id, lifecycle_state="suggested"))
        times = [p.created_at for p in prov if p.created_at and not p.contradicts]
        ops.insert(0, CreateNode(
            id=node_id, node_kind=kind, canonical_name=name[:500], payload=payload, aliases=alias_in,
            provenance=tuple(prov), evidence=start_evidence if existing is None else (), lifecycle_state=lifecycle,
            last_verified_at=max(times) if times and existing is None else None, if_exists="merge"))
        summary = (f"ingest: {what} “{name[:80]}”" + (f" — {len(prov)} new source(s)" if existing else ""))
        if self.write(f"ingest:{kind}", summary, ops, kind, existing is None):
            return node_id
        return node_id if existing is not None or ksql.get_node(self.conn, node_id) else None

    def _routable(self, existing: dict[str, Any] | None, start: tuple[str, ...], prov: list[ProvenanceIn],
                  sources: int, explicit: bool) -> bool:
        """§6.6 on the Beta mean the evidence gives (decay is applied on read, not to what the evidence says)."""
        a, b = (existing["alpha"], existing["beta"]) if existing else (self.ccfg.prior.alpha, self.ccfg.prior.beta)
        for ev in start:
            a, b = apply_evidence(a, b, ev, cfg=self.ccfg)
        for p in prov:
            if p.evidence_event:
                a, b = apply_evidence(a, b, p.evidence_event, contradicts=p.contradicts, cfg=self.ccfg)
        return is_suggested_entity_routable(a / (a + b), sources, explicit, self.config.knowledge.lifecycle)

    def write(self, source_event: str, summary: str, ops: list[Any], kind: str, new: bool) -> bool:
        try:
            res = self.writer.write(KnowledgeWrite(source_event=source_event, change_summary=summary[:2000],
                                                   ops=ops))
        except (KnowledgeError, PayloadError, RelationError, ValidationError) as e:
            self.counts[f"{kind}_refused"] += 1
            self.ctx.warn("KNOWLEDGE_REFUSED", f"{source_event}: {str(e).splitlines()[0][:300]}", summary=summary)
            return False
        if res.created:
            self.counts["commits"] += 1
            self.counts[f"{kind}_{'created' if new else 'updated'}"] += 1
        else:
            self.counts[f"{kind}_unchanged"] += 1
        return res.created

    # ---- world entities ------------------------------------------------------------------------------------

    def publish_entities(self, owner: dict[str, Any] | None, ends: set[str], rows: list[dict[str, Any]]) -> None:
        wanted = {e["entity_id"]: e for e in kb.entities(self.conn, types=self.cfg.entity_types)
                  if e["user_mentions"] >= self.cfg.min_user_mentions}
        extra = sorted(ends - wanted.keys())
        wanted.update({e["entity_id"]: e for e in kb.entities(self.conn, entity_ids=extra)})
        if owner is not None:
            wanted[owner["entity_id"]] = {**owner, "conversation_count": 0, "user_mentions": 0}
        mentions: dict[str, list[dict[str, Any]]] = {}
        for m in kb.entity_mentions(self.conn, sorted(wanted)):
            mentions.setdefault(m["entity_id"], []).append(m)
        statements: dict[str, list[dict[str, Any]]] = {}
        for a in rows:  # an entity no one named directly (kin, a grounded object) is evidenced by the claim
            for eid in (a["subject_entity_id"], a["object_entity_id"]):
                if eid in wanted and a["status"] not in ENDED:
                    statements.setdefault(eid, []).append(a)
        for eid in sorted(wanted):
            e = wanted[eid]
            if e["entity_key"] == SELF_KEY:
                self.publish_owner(e)
            else:
                self.publish_entity(e, mentions.get(eid, []), statements.get(eid, []))

    def entity_node_id(self, entity_id: str) -> str:
        return self.writer.ids.make("doc72_bridge_node", "world_entity", entity_id)

    def publish_owner(self, e: dict[str, Any]) -> None:
        node_id = self.entity_node_id(e["entity_id"])
        names = self_participant_names(self.conn)
        record = ProvenanceIn(entry_type=SYSTEM, source_ref=f"entity:{e['entity_id']}", authorial_voice="system",
                              authority_type="personal", still_current="yes",
                              source_description="the vault owner: the author of the user turns of every import")
        published = self.publish_node(
            node_id=node_id, kind="world_entity", name=OWNER_NAME, aliases=names, support=[],
            payload={"entity_type": "person", "display_name": OWNER_NAME, "is_vault_owner": True,
                     "kenning_entity_id": e["entity_id"],
                     "description": "you: the owner of this vault, the author of its user turns"},
            lifecycle="confirmed", evidence=(self.cfg.evidence["owner"],), extra_provenance=(record,),
            what="the vault owner")
        self._remember(e["entity_id"], published, OWNER_NAME)

    def publish_entity(self, e: dict[str, Any], mentions: list[dict[str, Any]],
                       statements: list[dict[str, Any]]) -> None:
        node_id = self.entity_node_id(e["entity_id"])
        kin = owner_name(e["canonical_name"])
        name = kin or e["canonical_name"]
        etype = entity_type_for(e["entity_type"])
        if mentions:
            spans: Iterable[Span] = (
                s for m in mentions if (s := self.span(m["message_id"], m["char_start"], m["char_end"], MENTION,
                                                       m["mention_id"], window=True)))
            sources = {m["conversation_id"] for m in mentions}
        else:
            spans = (s for a in statements if (s := self.span(a["message_id"], a["char_start"], a["char_end"],
                                                              STATEMENT, a["assertion_id"])))
            sources = {a["conversation_id"] for a in statements}
        aliases = [] if kin else [a for a in orjson.loads(e["aliases_json"] or "[]") if isinstance(a, str)]
        description = f"your {kin[3:]}" if kin else f"{_TYPE_WORDS.get(etype, 'something')} from your conversations"
        published = self.publish_node(
            node_id=node_id, kind="world_entity", name=name, aliases=aliases, support=spans,
            payload={"entity_type": etype, "description": description, "kenning_entity_id": e["entity_id"],
                     "kenning_entity_type": e["entity_type"]},
            routing=(len(sources), True),
            what=description.split(" from")[0])
        self._remember(e["entity_id"], published, name)

    def _remember(self, entity_id: str, node_id: str | None, name: str) -> None:
        self.names.setdefault(entity_id, name)
        if node_id is None:
            return
        node = ksql.get_node(self.conn, node_id)
        if node is not None and node["is_active"] and node["lifecycle_state"] != "retracted":
            self.entity_nodes[entity_id] = node_id
            self.names[entity_id] = node["canonical_name"]
        else:
            self.counts["world_entity_rejected_by_user"] += 1

    # ---- relations → edges ---------------------------------------------------------------------------------

    def _relation_groups(self, rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for a in rows:
            if a["object_entity_id"] and a["polarity"] == "positive" and a["modality"] in self.cfg.relation_modalities \
                    and a["subject_entity_id"] != a["object_entity_id"]:
                groups.setdefault((a["subject_entity_id"], a["predicate"], a["object_entity_id"]), []).append(a)
        return groups

    def ending(self, a: dict[str, Any]) -> tuple[Span | None, str | None, str]:
        """The statement that ended an assertion (its own status's link first), its time and a reason."""
        order = {"retracted": ("ret", "neg", "sup"), "negated": ("neg", "ret", "sup"),
                 "superseded": ("sup", "ret", "neg")}[a["status"]]
        for p in order:
            if a[f"{p}_message_id"]:
                s = self.span(a[f"{p}_message_id"], a[f"{p}_start"], a[f"{p}_end"], STATEMENT, a["assertion_id"])
                quote = a[f"{p}_quote"] or (s.excerpt if s else "")
                when = a[f"{p}_time"]
                return s, when, f"{a['status']}: “{quote}”" + (f" ({when[:10]})" if when else "")
        return None, None, a["status"]

    def buckets(self, assertions: list[dict[str, Any]]) -> list[Bucket]:
        """Episodes of one relation (K65): an assertion that ended (superseded / retracted / negated, or stated
        with a closed valid time) closes an episode; a still-held statement said before that closing statement
        belongs to it, one said after opens the current episode."""
        closing: dict[str, Bucket] = {}
        info = []
        for a in sorted(assertions, key=lambda x: (x["message_time"] or "", x["assertion_id"])):
            stated = a["message_time"] or self.ctx.clock.now()
            start = a["valid_from_utc"] or stated
            if a["status"] in ENDED:
                _s, when, reason = self.ending(a)
                tx = when or stated
                end = a["valid_to_utc"] or tx
            elif a["valid_to_utc"]:
                tx, end, reason = stated, a["valid_to_utc"], f"held until {a['valid_to_utc'][:10]} (valid time)"
            else:
                info.append((a, stated, start))
                continue
            b = closing.setdefault(tx, Bucket(start=start))
            b.assertions.append(a)
            b.start = min(b.start, start)
            if b.end is None or end >= b.end:
                b.end, b.reason = end, reason
        current = None
        for a, stated, start in info:
            home = next((closing[tx] for tx in sorted(closing) if tx >= stated), None)
            if home is None:
                current = current or Bucket(start=start)
                home = current
            home.assertions.append(a)
            home.start = min(home.start, start)
        merged: dict[str, Bucket] = {}
        for b in sorted(closing.values(), key=lambda x: x.start) + ([current] if current else []):
            prev = merged.get(b.start)
            if prev is None:
                merged[b.start] = b
                continue
            prev.assertions += b.assertions  # one edge per start (the table's key): the later episode wins
            if b.end is None or prev.end is None:
                prev.end, prev.reason = None, None
            elif b.end > prev.end:
                prev.end, prev.reason = b.end, b.reason
        for b in merged.values():
            if b.end is not None and b.end < b.start:
                b.end = b.start
        return sorted(merged.values(), key=lambda x: (x.end is None, x.start))

    def edge_payload(self, b: Bucket, predicate: str) -> tuple[dict[str, Any], float]:
        ids = sorted(a["assertion_id"] for a in b.assertions)
        first = min(b.assertions, key=lambda a: (a["message_role"] != "user", a["message_time"] or "",
                                                 a["assertion_id"]))
        s = self.span(first["message_id"], first["char_start"], first["char_end"], STATEMENT,
                      first["assertion_id"])
        cap = self.cfg.assistant_edge_confidence_cap
        conf = max(a["confidence_final"] if a["message_role"] in ("user", "unknown")
                   else min(a["confidence_final"], cap) for a in b.assertions)
        payload = {"assertion_ids": ids, "predicate": predicate, "extraction_confidence": round(conf, 6),
                   "said_by": speaker(first["message_role"]),
                   "source_event": self.cfg.evidence[self.source_key(first["message_role"], STATEMENT)]}
        if s is not None:
            payload.update(quote=s.excerpt, quote_ref=s.source_ref, quoted_at=s.created_at)
        return payload, round(conf, 6)

    def publish_relation(self, key: tuple[str, str, str], assertions: list[dict[str, Any]]) -> None:
        subj, predicate, obj = key
        src, tgt = self.entity_nodes.get(subj), self.entity_nodes.get(obj)
        if src is None or tgt is None:
            self.counts["relation_skipped_no_node"] += 1
            return
        try:
            rel = check_relation(relation_name(predicate, self.cfg.relation_prefix))
        except RelationError as e:
            self.counts["relation_refused"] += 1
            self.ctx.warn("KNOWLEDGE_REFUSED", str(e), predicate=predicate)
            return
        existing = kb.triple_edges(self.conn, src, rel, tgt)
        ops: list[Any] = []
        ended = created = 0
        for b in self.buckets(assertions):
            payload, conf = self.edge_payload(b, predicate)
            ids = set(payload["assertion_ids"])
            match = next((e for e in sorted(existing, key=lambda e: e["end_date"] is not None)
                          if ids & set((e.get("payload") or {}).get("assertion_ids") or [])), None)
            current = next((e for e in existing if e["end_date"] is None), None)
            edge = CreateEdge(source_id=src, relation_type=rel, target_id=tgt, start_date=b.start, confidence=conf,
                              payload=payload)
            if match is not None:
                if match["end_date"] is not None or match.get("lifecycle_state") == "retracted":
                    continue  # history, or a person's rollback: never reopened or rewritten
                ops.append(edge)
                if b.end is not None:
                    if "edge_remove" in kb.rolled_back_mutation_types(self.conn, docs.edge_doc_key(match)):
                        continue  # a person undid this edge's end: it stays current
                    ops.append(EndEdge(source_id=src, relation_type=rel, target_id=tgt, end_date=b.end,
                                       reason=b.reason or "ended"))
                    ended += 1
            elif b.end is not None:
                if current is not None:
                    self.counts["relation_history_skipped"] += 1  # one current edge per triple holds the slot
                    continue
                ops += [edge, EndEdge(source_id=src, relation_type=rel, target_id=tgt, end_date=b.end,
                                      reason=b.reason or "ended")]
                created += 1
                ended += 1
            else:
                ops.append(edge)
                created += 1
        if not ops:
            self.counts["relation_unchanged"] += 1
            return
        name = f"{self.names.get(subj, subj)} {predicate} {self.names.get(obj, obj)}"
        summary = f"ingest: relation {name}" + (f" ({ended} ended)" if ended else "")
        if self.write("ingest:relation", summary, ops, "relation", not existing):
            self.counts["edges_ended"] += ended

    # ---- the owner's statements → directives, goals, obligations -------------------------------------------

    def _owners(self, rows: list[dict[str, Any]], owner: dict[str, Any] | None) -> list[dict[str, Any]]:
        if owner is None:
            return []
        return [a for a in rows if a["subject_key"] == SELF_KEY and a["message_role"] == "user"
                and a["modality"] != "question"]

    def statement_spans(self, group: list[dict[str, Any]]) -> tuple[list[Span], list[tuple[Span, str]]]:
        support, against = [], []
        for a in group:
            if a["status"] in ENDED:
                s, _when, reason = self.ending(a)
                if s is not None:
                    against.append((s, reason))
            elif (s := self.span(a["message_id"], a["char_start"], a["char_end"], STATEMENT, a["assertion_id"])):
                support.append(s)
        return support, against

    def publish_directives(self, rows: list[dict[str, Any]], owner: dict[str, Any] | None) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for a in self._owners(rows, owner):
            if a["category"] in self.cfg.directive_categories and a["modality"] != "intention" \
                    and a["predicate"] not in self.cfg.directive_skip_predicates:
                groups.setdefault((a["fact_key"], a["polarity"]), []).append(a)
        for (fact_key, polarity), group in sorted(groups.items()):
            support, against = self.statement_spans(group)
            first = next((a for a in group if a["status"] not in ENDED), group[0])
            mtype = self.cfg.directive_categories[first["category"]]
            obj = object_text(first, self.names)
            statement = first["surface_text"].strip()[:500]
            alias = f"{'not ' if polarity == 'negative' else ''}{first['predicate'].replace('_', ' ')} {obj}"
            self.publish_node(
                node_id=self.writer.ids.make("doc72_bridge_node", "memory_directive", fact_key, polarity),
                kind="memory_directive", name=statement, aliases=[alias.strip()], support=support, against=against,
                payload={"memory_type": mtype, "summary": statement, "assertion_class": mtype,
                         "applies_when": [self.cfg.applies_when[mtype].format(object=obj)[:300]],
                         "scope": "global", "source_certainty": "user_explicitly_stated",
                         "injection_format": self.cfg.injection_format[mtype], "capture_scope": "durable"},
                what=mtype)

    # ---- goals and obligations: the intake miners' (issue 18, I75) --------------------------------------------

    def retire_intentions(self) -> None:
        """Goals and obligations come from one path, the intake miners (explicit statements of aim, deadlines with
        their zone); stage 4's "intentions" made noise of them ("merge two sorted lists" as a goal). What an
        earlier version of this bridge published is archived through the writer, one commit per node, unless a
        person or the miners (on a person's words) touched it since: the node store is canonical."""
        for n in kb.bridge_made_nodes(self.conn, RETIRED_KINDS):
            res = self.writer.write(KnowledgeWrite(
                source_event="ingest:retire",
                change_summary=f"retired: {n['node_kind']} “{n['canonical_name'][:80]}” came from stage 4's "
                               "intentions; goals and obligations are mined by the intake miners",
                ops=[ArchiveNode(id=n["id"], lifecycle_state="archived",
                                 reason="retired: the intake miners make goals and obligations")]))
            if res.created:
                self.counts["commits"] += 1
                self.counts[f"{n['node_kind']}_retired"] += 1

    # ---- lexicon → domain concepts -------------------------------------------------------------------------

    def publish_concepts(self) -> None:
        terms = kb.latest_lexicon_terms(self.conn, self.cfg.lexicon_term_types)
        occ = {t["term_key"]: [o for o in (t["evidence"].get("occurrences") or []) if len(o) >= 4]
               for t in terms}
        self._load_messages([o[0] for os in occ.values() for o in os])
        for t in terms:
            found = [s for o in occ[t["term_key"]] if o[3] == "user"
                     if (s := self.span(o[0], o[1], o[2], MENTION, t["term_id"], window=True))]
            found.sort(key=lambda s: (s.created_at or "", s.message_id, s.char_start))
            if not found:
                continue  # the user never used it: not theirs to define
            titles = list(dict.fromkeys(s.title for s in found if s.title))[:3]
            aliases = [a for a in orjson.loads(t["aliases_json"] or "[]") if isinstance(a, str)]
            self.publish_node(
                node_id=self.writer.ids.make("doc72_bridge_node", "domain_concept", t["term_key"]),
                kind="domain_concept", name=t["canonical_surface"], aliases=aliases, support=found,
                payload={"concept_name": t["canonical_surface"][:200],
                         "definition": f"Your own term, as you used it: “{found[0].excerpt}”"[:2000],
                         "applies_in": [x[:300] for x in titles]},
                what="term")


def publish(ctx: Any, incognito: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """The `knowledge` stage's work: publish everything the pipeline holds except what ``incognito`` messages say;
    counts of what changed."""
    return Bridge(ctx, incognito).run()
