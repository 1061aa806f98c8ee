"""Retractions and corrections (seed 001 §4.7.3–4.7.4, docs/decisions.md A18–A22).

``link_local`` links a retraction found in a user(-grounded) message to the claim it takes back, inside its
conversation: the previous statement ("that's not true"), the previous clause ("— scratch that"), a claim about
something named ("I was wrong about X"), or, for a correction ("I meant Lisbon, not Porto"), the claim whose
object was X — which then gets a replacement claim and ``superseded_by``/``supersession_type='correction'``.
When the candidates name more than one fact, the retraction is ambiguous: no target, the candidates recorded.

``link_global`` runs after every conversation: retractions whose target is a fact (the positive form of "I
stopped running") or an entity never mentioned earlier in their own conversation are linked across the vault, to
the latest matching claim made before the retraction (§4.7.4 order: asserted_at DESC, order_index DESC,
assertion_id DESC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from kenning.extract.candidates import Candidate, ObjectRef, SubjectRef
from kenning.extract.grounding import Grounded
from kenning.extract.text import sentence_of, strip_determiners
from kenning.sources.jcs import canonicalize
from kenning.store import assertions as asql

if TYPE_CHECKING:
    from kenning.extract.conversation import ConversationProcessor, MessageState
    from kenning.extract.rules import MessageContext, RetractionHit


def retraction_id(ids, message_id: str, char_start: int | None, char_end: int | None, source: str,
                  seq: int = 0) -> str:
    """§4.7.4 ``uuid5(["retraction", message_id, char_start, char_end])``; a spanless retraction (a model's, whose
    quote could not be placed) adds its source and its index in the message, so two spanless retractions in one
    message never collide (docs/decisions.md A9)."""
    if char_start is None or char_end is None:
        return ids.make("retraction", message_id, None, None, source, seq)
    return ids.make("retraction", message_id, char_start, char_end)


def _eligible_target(g: Grounded, speaker_entity: str | None, is_transcript: bool) -> bool:
    if g.cand.modality == "question":
        return False
    if g.speaker_entity_id is not None and g.speaker_entity_id == speaker_entity:
        return True
    return g.asserted_role == "assistant" and not is_transcript


def _pick(group: list[Grounded]) -> Grounded:
    """§4.7.4 order among claims of the one targeted fact: asserted_at DESC, order_index DESC, assertion_id DESC."""
    return sorted(group, key=lambda g: (g.message.get("created_at_utc") or "", g.message["order_index"],
                                        g.assertion_id), reverse=True)[0]


def _decide(group: list[Grounded]) -> tuple[Grounded | None, str | None, dict]:
    facts = sorted({g.fact_key for g in group})
    info: dict[str, Any] = {"candidate_assertion_ids": sorted(g.assertion_id for g in group),
                            "candidate_fact_keys": facts}
    if not group:
        return None, None, {**info, "outcome": "NO_TARGET"}
    if len(facts) > 1:
        return None, None, {**info, "outcome": "AMBIGUOUS"}
    t = _pick(group)
    return t, t.fact_key, {**info, "outcome": "LINKED"}


def _obj_text_matches(g: Grounded, proc: "ConversationProcessor", text: str) -> bool:
    want = " ".join(strip_determiners(text).casefold().split())
    if g.object_entity is not None:
        rec = proc.index.get(g.object_entity.entity_id)
        if rec is None:
            return False
        names = {rec.canonical_name, *(str(a) for a in rec.aliases)}
        return want in {" ".join(n.casefold().split()) for n in names}
    if g.object_value_type == "string":
        return " ".join(strip_determiners(str(g.object_value)).casefold().split()) == want
    return False


def _subject_or_object_matches(g: Grounded, proc: "ConversationProcessor", entity_id: str | None, text: str) -> bool:
    if entity_id is not None and (g.subject.entity_id == entity_id or
                                  (g.object_entity is not None and g.object_entity.entity_id == entity_id)):
        return True
    return _obj_text_matches(g, proc, text)


def link_local(proc: "ConversationProcessor", hit: "RetractionHit", mc: "MessageContext", st: "MessageState",
               window: list["MessageState"], history: list["MessageState"]) -> dict:
    rp = hit.pattern
    sp = mc.speaker
    is_tr = mc.is_transcript
    before_here = [g for g in st.grounded if g.cand.char_end is not None and g.cand.char_end <= hit.start
                   and _eligible_target(g, sp.entity_id, is_tr)]
    target_info: dict[str, Any] = {"strategy": rp.target, "scope": "conversation"}
    group: list[Grounded] = []
    replacement: Grounded | None = None
    retraction_type = rp.type

    def previous_statement() -> list[Grounded]:
        if before_here:
            return before_here
        for w in reversed(window):
            cands = [g for g in w.grounded if _eligible_target(g, sp.entity_id, is_tr)]
            if cands:
                return cands
        return []

    if rp.target == "previous_clause":
        if before_here:
            last_sentence = max(sentence_of(mc.sentences, g.cand.char_start) for g in before_here)
            group = [g for g in before_here if sentence_of(mc.sentences, g.cand.char_start) == last_sentence]
        else:
            group = previous_statement()
    elif rp.target == "previous_statement":
        group = previous_statement()
    elif rp.target == "about":
        about, _s, _e = hit.groups.get("about", ("", None, None))
        res = proc.resolver.lookup(about, None, allow_fuzzy=False)
        eid = res.entity_id if res else None
        target_info.update({"about": about, "about_entity_id": eid})
        for scope in [st, *reversed(history)]:
            cands = [g for g in scope.grounded if _eligible_target(g, sp.entity_id, is_tr)
                     and (scope is not st or (g.cand.char_end or 0) <= hit.start)
                     and _subject_or_object_matches(g, proc, eid, about)]
            if cands:
                group = cands
                break
        if not group:
            target_info["scope"] = "global"
    elif rp.target == "replace_object":
        new, ns, ne = hit.groups.get("new", (None, None, None))
        old = hit.groups.get("old", (None, None, None))[0]
        new_res = proc.resolver.by_span(ns, ne, new, mc.mentions) or proc.resolver.lookup(new, None, allow_fuzzy=False)
        new_type = proc.index.get(new_res.entity_id).entity_type if new_res and proc.index.get(new_res.entity_id) else None
        target_info.update({"new": new, "old": old})
        for scope in [st, *reversed(window)]:
            cands = [g for g in scope.grounded if g.cand.modality != "question"
                     and (scope is not st or (g.cand.char_end or 0) <= hit.start)
                     and (_eligible_target(g, sp.entity_id, is_tr))]
            if old:
                cands = [g for g in cands if _obj_text_matches(g, proc, old)]
            else:
                cands = [g for g in cands if g.object_entity is not None and new_type is not None and
                         proc.index.get(g.object_entity.entity_id) is not None and
                         proc.index.get(g.object_entity.entity_id).entity_type == new_type and
                         not _obj_text_matches(g, proc, new)]
            if cands:
                group = cands
                break
    target, fact_key, outcome = _decide(group)
    target_info.update(outcome)
    if target_info["scope"] == "global":
        target_info["outcome"] = "PENDING_GLOBAL"
    if rp.type == "correction" and target is not None:
        replacement = _replacement(proc, target, hit, mc, st, window)
        if replacement is None:
            target_info["replacement"] = "UNCHANGED_OR_UNGROUNDED"
        else:
            st.grounded.append(replacement)
            target.superseded_by = replacement.assertion_id
            target.supersession_type = "correction"
            proc.counts["corrections_applied"] += 1
    if outcome["outcome"] == "AMBIGUOUS":
        proc.warn("RETRACTION_TARGET_AMBIGUOUS", f"{rp.id}: {len(outcome['candidate_fact_keys'])} facts",
                  message_id=mc.message["message_id"])
    proc.counts[f"retractions_{retraction_type}"] += 1
    proc.counts[f"retraction_targets_{target_info['outcome'].lower()}"] += 1
    raw = {"v": 1, "pattern": rp.id, "pattern_sha": rp.sha, "type": retraction_type,
           "groups": {k: {"text": v[0], "char_start": v[1], "char_end": v[2]} for k, v in sorted(hit.groups.items())},
           "target": target_info}
    return {"retraction_id": retraction_id(proc.ids, mc.message["message_id"], hit.start, hit.end, rp.id),
            "retraction_message_id": mc.message["message_id"],
            "target_assertion_id": target.assertion_id if target else None, "target_fact_key": fact_key,
            "retraction_type": retraction_type,
            "replacement_assertion_id": replacement.assertion_id if replacement else None,
            "confidence": rp.confidence, "char_start": hit.start, "char_end": hit.end,
            "surface_text": mc.text[hit.start:hit.end], "raw": raw}


def _replacement(proc: "ConversationProcessor", target: Grounded, hit: "RetractionHit", mc: "MessageContext",
                 st: "MessageState", window: list["MessageState"]) -> Grounded | None:
    """The corrected claim: the target's subject and predicate with the new object, spoken in this message."""
    new, ns, ne = hit.groups["new"]
    if target.object_entity is not None:
        rec = proc.index.get(target.object_entity.entity_id)
        obj = ObjectRef("entity", new, ns, ne, type_hint=rec.entity_type if rec else None)
    else:
        obj = ObjectRef("literal", new, ns, ne, value_type="string", value=new)
    tc = target.cand
    c = Candidate(message_id=mc.message["message_id"], method="rule_based", source_id=hit.pattern.id,
                  subject=SubjectRef("entity", target.subject.entity_id), predicate_label=target.predicate.canonical_label,
                  obj=obj, modality=tc.modality, polarity=tc.polarity, char_start=hit.start, char_end=hit.end,
                  confidence=hit.pattern.confidence, source_sha=hit.pattern.sha,
                  notes={"corrects_fact_key": target.fact_key})
    g = proc.ground(c, mc, st, window, subject=target.subject)
    if g is None or g.signature == target.signature:
        return None
    return g


def link_global(conn, counts) -> int:
    """Link the retractions that look beyond their conversation; returns how many rows changed."""
    pending = asql.retractions_needing_global_links(conn)
    if not pending:
        return 0
    fact_keys, entities = [], []
    for r in pending:
        t = orjson.loads(r["raw_retraction_json"])["target"]
        if t.get("strategy") == "fact_key":
            fact_keys.append(t["fact_key"])
        elif t.get("about_entity_id"):
            entities.append(t["about_entity_id"])
    by_fact = asql.assertions_by_fact_keys(conn, fact_keys)
    by_ent = asql.assertions_about_entities(conn, entities)
    updates = []
    for r in pending:
        raw = orjson.loads(r["raw_retraction_json"])
        t = raw["target"]
        when = r["created_at_utc"]

        def before(a: dict) -> bool:
            if a["message_id"] == r["retraction_message_id"]:
                return False
            if a["conversation_id"] == r["conversation_id"]:
                return a["order_index"] < r["order_index"]
            return bool(when and a["asserted_at_utc"] and a["asserted_at_utc"] < when)

        if t.get("strategy") == "fact_key":
            cands = [a for a in by_fact.get(t["fact_key"], []) if a["polarity"] == "positive"
                     and a["modality"] != "question" and before(a)]
            facts = {t["fact_key"]} if cands else set()
        else:
            cands = [a for a in by_ent.get(t.get("about_entity_id") or "", []) if a["modality"] != "question"
                     and a["asserted_role"] == "user" and before(a)]
            facts = {a["fact_key"] for a in cands}
        cands.sort(key=lambda a: (a["asserted_at_utc"] or "", a["order_index"], a["assertion_id"]), reverse=True)
        if len(facts) == 1:
            target_id, fk, outcome = cands[0]["assertion_id"], next(iter(facts)), "LINKED"
        elif facts:
            target_id, fk, outcome = None, None, "AMBIGUOUS"
        else:
            target_id, fk, outcome = None, t.get("fact_key"), "NO_TARGET"
        t2 = {**t, "outcome": outcome, "candidate_assertion_ids": sorted(a["assertion_id"] for a in cands)[:20]}
        new_raw = canonicalize({**raw, "target": t2})
        if (target_id, fk, new_raw) != (r["target_assertion_id"], r["target_fact_key"], r["raw_retraction_json"]):
            updates.append((target_id, fk, new_raw, r["retraction_id"]))
        counts[f"retraction_global_{outcome.lower()}"] += 1
    asql.set_retraction_targets(conn, updates)
    return len(updates)
