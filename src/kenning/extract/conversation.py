"""One conversation through stage 4 (seed 001 §4.3.5–§4.7.4): eligibility, masking, extraction, validation,
grounding, retractions and corrections, then the second pass (corroboration, §4.6.7), confidence composition
(§4.6.8), keys and ids (§4.6.9, §4.7.1) and the upsert policy among the run's candidates (§4.7.2).

A conversation is the unit of work: everything stage 4 links (coreference, corrections, "that's not true",
corroboration) lies inside one conversation, except retractions whose target is named by a fact or an entity;
those are linked across the vault afterwards (kenning.extract.retractions.link_global).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable

from rapidfuzz.distance import JaroWinkler

from kenning.detect.keys import entity_key
from kenning.extract.candidates import Candidate, validate
from kenning.extract.grounding import (EntityIndex, EntityRecord, Grounded, Mention, PredicateTable, Resolution,
                                       Resolver, STRONG_TYPES, SELF_WORDS, final_confidence, grounding_confidence,
                                       normalize_literal, salience_factor)
from kenning.extract.rules import MessageContext, RuleExtractor
from kenning.extract.speakers import Speaker, SpeakerResolver
from kenning.extract.text import exclusion_ranges, excluded_length, mask, strip_determiners
from kenning.sources.ids import IdFactory

RAW_VERSION = 1


@dataclass
class MessageState:
    message: dict
    speaker: Speaker
    grounded: list[Grounded] = field(default_factory=list)
    persons: list[tuple[int, str]] = field(default_factory=list)     # (position, entity_id), in text order
    locations: list[tuple[int, str]] = field(default_factory=list)
    eligible: bool = False
    masked: str | None = None          # eligible and too-short messages (context for the model, §4.4.1)
    mentions: list[Mention] = field(default_factory=list)
    times: list[dict] = field(default_factory=list)


@dataclass
class ConversationResult:
    assertions: list[Grounded]
    retractions: list[dict]
    created: dict[str, tuple]


class ConversationProcessor:
    def __init__(self, config: Any, ids: IdFactory, rules: RuleExtractor, index: EntityIndex, resolver: Resolver,
                 predicates: PredicateTable, speakers: SpeakerResolver, *, warn: Callable[..., None],
                 info: Callable[..., None], counts: Counter, llm: Any = None):
        self.cfg = config
        self.acfg = config.assertions
        self.ids, self.rules, self.index, self.resolver = ids, rules, index, resolver
        self.preds, self.speakers = predicates, speakers
        self.warn, self.info, self.counts, self.llm = warn, info, counts, llm
        self.k_context = config.pipeline.assertion_extraction.k_context
        self.window_k = config.pipeline.corroboration.coref_window_size
        self.trust = config.pipeline.trust_weights
        self.policy = config.pipeline.assertion_extraction.assertion_upsert_policy
        self.rc = self.acfg.resolution_confidence
        self.include_bq = config.pipeline.entity_detection.ignore_markdown_blockquotes
        self.created: dict[str, tuple] = {}

    # -- §4.3.5 eligibility ----------------------------------------------------------------------------------------
    def eligibility(self, m: dict, sp: Speaker) -> tuple[bool, str, list[tuple[int, int]]]:
        if m["role"] in ("system", "tool"):
            return False, "role_excluded", []
        if m["text_raw"] is None:
            return False, "no_text", []
        if sp.trust_role is None:
            return False, "no_speaker", []
        kinds = set((m.get("context_kinds") or "").split(",")) - {""}
        if kinds & set(self.acfg.skip_context_kinds):
            return False, "context_kind_skipped", []
        rcpt = m.get("recipient")
        if m["role"] == "assistant" and rcpt not in (None, "all") and rcpt not in self.acfg.memory_write_recipients:
            return False, "tool_call", []
        excl = exclusion_ranges(m["code_fence_ranges_json"], m["blockquote_ranges_json"], m["citation_ranges_json"],
                                include_blockquotes=self.include_bq, include_citations=self.acfg.mask_citations)
        if len(m["text_raw"]) - excluded_length(excl, len(m["text_raw"])) < self.acfg.min_extractable_chars:
            return False, "too_short", excl
        return True, "eligible", excl

    # -- the conversation --------------------------------------------------------------------------------------------
    def process(self, messages: list[dict], mentions: dict[str, list[tuple]],
                times: dict[str, list[dict]]) -> ConversationResult:
        window: deque[MessageState] = deque(maxlen=max(self.k_context, 1))
        history: list[MessageState] = []
        retractions: list[dict] = []
        all_grounded: list[Grounded] = []
        for m in messages:
            sp = self.speakers.speaker(m)
            ok, reason, excl = self.eligibility(m, sp)
            self.counts[f"messages_{reason}"] += 1
            st = MessageState(m, sp, eligible=ok)
            ments = [Mention(*t) for t in mentions.get(m["message_id"], [])]
            st.mentions, st.times = ments, times.get(m["message_id"], [])
            if not ok and reason == "too_short":
                st.masked = mask(m["text_raw"], excl)
            text = m["text_raw"] or ""
            st.persons = [(x.start or 0, _ref(x, text)) for x in ments if x.entity_type == "PERSON"]
            st.locations = [(x.start or 0, _ref(x, text)) for x in ments if x.entity_type == "LOCATION"]
            if ok:
                if sp.created and sp.entity_id not in self.created:
                    self.created[sp.entity_id] = ("PERSON", entity_key("PERSON", sp.name or ""), sp.name,
                                                  "transcript_speaker")
                    self.index.add(EntityRecord(sp.entity_id, "PERSON", entity_key("PERSON", sp.name or ""),
                                                sp.name, [sp.name], None, 0, None, None, 4))
                st.masked = mask(m["text_raw"], excl)
                mc = MessageContext(m, m["text_raw"], st.masked, sp, ments, times.get(m["message_id"], []),
                                    is_transcript=self.speakers.is_transcript(m["conversation_id"]),
                                    name_words=self.index.name_words)
                self._extract_message(mc, st, list(window), history)
                if sp.trust_role == "user" and sp.human:
                    retractions.extend(self._retractions(mc, st, list(window), history))
                all_grounded.extend(st.grounded)
            window.append(st)
            history.append(st)
        self._corroborate(all_grounded)
        kept = self._apply_policy(all_grounded, retractions)
        for g in kept:
            self._compose(g)
        created, self.created = self.created, {}
        return ConversationResult(kept, retractions, created)

    # -- extraction + grounding of one message -------------------------------------------------------------------------
    def _extract_message(self, mc: MessageContext, st: MessageState, window: list[MessageState],
                         history: list[MessageState]) -> None:
        cands = self.rules.extract(mc)
        llm_cands: list[Candidate] = []
        if self.llm is not None:
            llm_cands = self.llm.extract(mc, window, self)
        self.counts["candidates_rule_based"] += len(cands)
        self.counts["candidates_llm"] += len(llm_cands)
        cands.sort(key=lambda c: c.sort_key())
        grounded = self._ground_all(cands, mc, st, window)
        if llm_cands:
            llm_cands.sort(key=lambda c: c.sort_key())
            # the model's kin references ("my sister") may name someone this message's rule claims named
            n = len(st.grounded)
            st.grounded.extend(grounded)
            llm_grounded = self._ground_all(llm_cands, mc, st, window)
            del st.grounded[n:]
            grounded = self._merge_hybrid(grounded, llm_grounded)
        st.grounded.extend(grounded)

    def _ground_all(self, cands: list[Candidate], mc: MessageContext, st: MessageState,
                    window: list[MessageState]) -> list[Grounded]:
        out = []
        for c in cands:
            ok, reason, warns = validate(c, mc.text)
            for code, msg in warns:
                self.warn(code, msg, message_id=c.message_id, source=c.source_id)
            if not ok:
                self.counts["candidates_invalid"] += 1
                self.warn("CANDIDATE_INVALID", f"{reason}", message_id=c.message_id, candidate=c.record())
                continue
            g = self.ground(c, mc, st, window)
            if g is not None:
                out.append(g)
        return out

    def _merge_hybrid(self, rule_g: list[Grounded], llm_g: list[Grounded]) -> list[Grounded]:
        """§4.4.5: an LLM claim equal to a rule claim (subject, predicate, object signature; spans overlapping
        when both have them) is absorbed: the rule claim stays, becomes 'hybrid', and records the model's
        candidate in raw_assertion_json."""
        out = list(rule_g)
        for lg in llm_g:
            twin = None
            for rg in rule_g:
                if (rg.subject.entity_id, rg.predicate.predicate_id, rg.signature) != \
                        (lg.subject.entity_id, lg.predicate.predicate_id, lg.signature):
                    continue
                a, b = rg.cand, lg.cand
                if a.char_start is not None and b.char_start is not None and \
                        not (a.char_start < b.char_end and b.char_start < a.char_end):
                    continue
                twin = rg
                break
            if twin is None:
                out.append(lg)
                continue
            twin.cand.llm_audit = (twin.cand.llm_audit or []) + [lg.cand.record()]
            twin.raw["llm_candidates"] = twin.cand.llm_audit
            twin.finalize_identity(self.ids)
            self.counts["candidates_hybrid_merged"] += 1
        return out

    # -- §4.6.1 subject resolution -------------------------------------------------------------------------------
    def _resolve_subject(self, c: Candidate, mc: MessageContext, st: MessageState,
                         window: list[MessageState]) -> Resolution | None:
        s = c.subject
        sp = mc.speaker
        if s.kind == "speaker":
            if not sp.entity_id:
                return None
            conf = self.rc.first_person_plural if s.plural else self.rc.elided_subject if s.elided else sp.confidence
            step = "speaker_plural" if s.plural else "speaker_elided" if s.elided else "speaker"
            return Resolution(sp.entity_id, sp.tier or 1, conf, step)
        if s.kind == "self":
            return Resolution(self.speakers.self_id, 1, 1.0, "self_second_person")
        if s.kind == "entity":
            rec = self.index.get(s.text)
            if rec is None:
                return None
            return Resolution(rec.entity_id, rec.best_detector_tier, 1.0, "entity_id")
        if s.kind == "text":
            if s.text.strip().lower() in SELF_WORDS:
                if not sp.entity_id:
                    return None
                return Resolution(sp.entity_id, sp.tier or 1, sp.confidence, "self_reference")
            if self.index.get(s.text.strip()):
                rec = self.index.get(s.text.strip())
                return Resolution(rec.entity_id, rec.best_detector_tier, 1.0, "entity_id")
            res = self.resolver.by_span(s.start, s.end, s.text, mc.mentions) or self.resolver.lookup(s.text, None)
            return res or self._create(s.text, None, "grounding_fallback")
        if s.kind == "named":
            res = self.resolver.by_span(s.name_start, s.name_end, s.text, mc.mentions) or \
                self.resolver.lookup(s.text, "PERSON" if s.kin else None)
            if res is None and s.kin:
                res = self._create(s.text, "PERSON", "grounding_fallback")
            return res
        if s.kind == "kin":
            owner = sp.entity_id if s.owner == "speaker" else self.speakers.self_id
            if owner is None:
                return None
            pred = self.rules.kin_pred.get(s.kin or "")
            named = self._kin_in_window(owner, pred, st, window) if pred else set()
            if len(named) == 1:
                eid = next(iter(named))
                rec = self.index.get(eid)
                return Resolution(eid, rec.best_detector_tier if rec else 4, self.rc.kin_coreference,
                                  "kin_coreference")
            owner_rec = self.index.get(owner)
            owner_name = "SELF" if owner == self.speakers.self_id else (owner_rec.canonical_name if owner_rec else
                                                                      (sp.name or "someone"))
            name = f"{owner_name}'s {s.kin}"
            res = self._create(name, "PERSON", "kin_descriptor")
            res.confidence, res.step = self.rc.kin_descriptor, "kin_descriptor"
            return res
        if s.kind == "pronoun":
            eid = self._coref(st.persons, [w.persons for w in window], c.char_start, exclude={sp.entity_id,
                                                                                               self.speakers.self_id})
            if eid is None:
                self.counts["subjects_pronoun_unresolved"] += 1
                return None
            rec = self.index.get(eid)
            return Resolution(eid, rec.best_detector_tier if rec else 4, self.rc.pronoun_coreference,
                              "pronoun_coreference")
        return None

    def _kin_in_window(self, owner: str, pred: str, st: MessageState, window: list[MessageState]) -> set[str]:
        """People named as the owner's <kin> earlier in this message, else in the nearest window message that names
        one."""
        for scope in [st, *reversed(window)]:
            found = {g.object_entity.entity_id for g in scope.grounded
                     if g.object_entity and g.subject.entity_id == owner and g.predicate.label_norm == pred}
            if found:
                return found
        return set()

    def _coref(self, current: list[tuple[int, str]], previous: list[list[tuple[int, str]]], pos: int | None,
               exclude: set) -> str | None:
        """The one candidate referent: in this message before ``pos``, else in the nearest earlier message that
        has any. Two or more distinct candidates in that scope: unresolved (never guessed)."""
        here = {e for p, e in current if (pos is None or p < pos) and e not in exclude}
        if here:
            return _single(here)
        for refs in reversed(previous):
            found = {e for _p, e in refs if e not in exclude}
            if found:
                return _single(found)
        return None

    def _create(self, text: str, type_hint: str | None, reason: str) -> Resolution:
        res = self.resolver.create(text, type_hint, reason)
        if res.created is not None and res.entity_id not in self.created:
            etype, key, name, why = res.created
            self.created[res.entity_id] = (etype, key, name, why)
            self.index.add(EntityRecord(res.entity_id, etype, key, name, [name], None, 0, None, None, 4))
            self.warn("ENTITY_CREATED_DURING_GROUNDING", f"{etype} {name!r}", entity_id=res.entity_id, reason=why)
            self.counts["entities_created_during_grounding"] += 1
        return res

    # -- §4.6.2 objects ------------------------------------------------------------------------------------------------
    def _resolve_object(self, c: Candidate, mc: MessageContext, st: MessageState, window: list[MessageState]
                        ) -> tuple[str, Resolution | None, str | None, Any] | None:
        """('entity', res, None, None) | ('literal', None, value_type, value) | ('none', …) or None to drop."""
        o = c.obj
        if o.kind == "none":
            return "none", None, None, None
        if o.kind == "literal":
            try:
                vt = o.value_type or "string"
                return "literal", None, vt, normalize_literal(vt, o.value if o.value is not None else o.text)
            except (ValueError, TypeError) as e:
                self.warn("LITERAL_INVALID", str(e), message_id=c.message_id, source=c.source_id)
                return None
        if o.entity_id:
            rec = self.index.get(o.entity_id)
            if rec is not None:
                return "entity", Resolution(rec.entity_id, rec.best_detector_tier, 1.0, "entity_id"), None, None
        if o.kind == "entity" and o.pro_form:
            refs_now = st.locations if o.type_hint == "LOCATION" else st.persons
            prev = [w.locations if o.type_hint == "LOCATION" else w.persons for w in window]
            eid = self._coref(refs_now, prev, o.start, exclude={self.speakers.self_id})
            if eid is None:
                self.counts["objects_pro_form_unresolved"] += 1
                self.info("OBJECT_UNRESOLVED", f"{o.text!r} has no single antecedent", message_id=c.message_id)
                return None
            rec = self.index.get(eid)
            return "entity", Resolution(eid, rec.best_detector_tier if rec else 4, self.rc.pronoun_coreference,
                                        "pro_form_coreference"), None, None
        text = o.text or ""
        if o.kind == "entity_or_literal":
            value = o.value if o.value is not None else strip_determiners(text)
            res = self.resolver.by_span(o.start, o.end, value if o.start is None else text, mc.mentions)
            if res is None and value[:1].isupper():
                res = self.resolver.lookup(value, o.type_hint, allow_fuzzy=False)
            if res is not None and self._type_ok(res, o.type_hint):
                return "entity", res, None, None
            try:
                return "literal", None, "string", normalize_literal("string", value)
            except ValueError:
                return None
        res = self.resolver.by_span(o.start, o.end, text, mc.mentions) or self.resolver.lookup(text, o.type_hint)
        if res is None:
            res = self._create(text, o.type_hint, "grounding_fallback")
        if not self._type_ok(res, o.type_hint):
            self.counts["objects_type_mismatch"] += 1
            return None
        return "entity", res, None, None

    def _type_ok(self, res: Resolution, hint: str | None) -> bool:
        if hint not in STRONG_TYPES:
            return True
        rec = self.index.get(res.entity_id)
        return rec is None or rec.entity_type not in STRONG_TYPES or rec.entity_type == hint

    # -- §4.6 grounding of one candidate -------------------------------------------------------------------------------
    def ground(self, c: Candidate, mc: MessageContext, st: MessageState, window: list[MessageState],
               subject: Resolution | None = None) -> Grounded | None:
        subj = subject or self._resolve_subject(c, mc, st, window)
        if subj is None:
            self.counts["candidates_subject_unresolved"] += 1
            return None
        obj = self._resolve_object(c, mc, st, window)
        if obj is None:
            self.counts["candidates_object_unresolved"] += 1
            return None
        okind, ores, vtype, value = obj
        label = c.predicate_label
        otp = c.notes.pop("object_type_predicate", None)
        if otp and ores is not None:
            rec = self.index.get(ores.entity_id)
            if rec is not None and rec.entity_type in otp:
                label = otp[rec.entity_type]
        if okind == "none" and self.preds.vocab.lookup(label.lower()) and \
                self.preds.vocab.lookup(label.lower()).arity == 2 and c.method == "llm":
            pass
        pred = self.preds.get(label, 1 if okind == "none" else 2)
        # §4.6.5 temporal qualifier
        qtype = qid = None
        qraw: dict[str, Any] | None = None
        times = {t["time_mention_id"]: t for t in mc.times}
        if c.qualifier is not None:
            q = c.qualifier
            t = times.get(q.time_mention_id) if q.time_mention_id else None
            link = "time_mention_id" if t else None
            if t is None and q.surface:
                same = sorted((x for x in mc.times if x["surface_text"] == q.surface),
                              key=lambda x: (-(x["confidence"] or 0), x["char_start"]))
                if same:
                    t, link = same[0], "surface"
            if t is not None:
                qtype, qid = q.type, t["time_mention_id"]
                qraw = {"type": q.type, "time_mention_id": qid, "surface": t["surface_text"], "link": link,
                        "resolved_type": t["resolved_type"]}
            elif q.value:
                qtype = q.type
                qraw = {"type": q.type, "temporal_qualifier_value": q.value, "link": "value"}
            else:
                self.info("TEMPORAL_QUALIFIER_UNLINKED", f"{q.surface!r}", message_id=c.message_id)
                qraw = {"type": q.type, "surface": q.surface, "link": None}
        # §4.6.6 temporal bounds
        penalty = 0.0
        bounds = None
        if self.acfg.enable_temporal_bounds_validation and qid is not None:
            vf = times[qid]["valid_from_utc"]
            subj_rec = self.index.get(subj.entity_id)
            obj_rec = self.index.get(ores.entity_id) if ores else None
            s_ok = not (vf and subj_rec and subj_rec.first_seen_at_utc and vf < subj_rec.first_seen_at_utc)
            o_ok = None if obj_rec is None else not (vf and obj_rec.first_seen_at_utc and vf < obj_rec.first_seen_at_utc)
            if not s_ok or o_ok is False:
                penalty = self.acfg.temporal_bounds_violation_penalty
                self.counts["temporal_bounds_violations"] += 1
                self.warn("ASSERTION_PRECEDES_ENTITY_FIRST_SEEN", f"qualifier {vf} before first mention",
                          message_id=c.message_id)
            bounds = {"subject_bounds_valid": s_ok, "object_bounds_valid": o_ok, "penalty_applied": penalty}
        sp = mc.speaker
        raw: dict[str, Any] = {
            "v": RAW_VERSION, "extraction": c.record(), "subject_resolution": subj.audit(),
            "predicate": {"canonical_label": pred.canonical_label, "from_label": c.predicate_label},
            "speaker": {"kind": sp.kind, **({"name": sp.name} if sp.name else {})},
        }
        if ores is not None:
            raw["object_resolution"] = ores.audit()
        elif okind == "literal":
            raw["object_literal"] = {"value_type": vtype, "value": value}
        if qraw is not None:
            raw["temporal_qualifier"] = qraw
        if bounds is not None:
            raw["temporal_bounds_check"] = bounds
        if c.llm_audit:
            raw["llm_candidates"] = c.llm_audit
        g = Grounded(cand=c, message=mc.message, subject=subj, predicate=pred, object_entity=ores,
                     object_value_type=vtype, object_value=value, qualifier_type=qtype, qualifier_id=qid,
                     asserted_role=sp.trust_role or "assistant", temporal_penalty=penalty, raw=raw,
                     speaker_entity_id=sp.entity_id)
        g.confidence_extraction = c.confidence
        g.confidence_grounding = grounding_confidence(subj.confidence, subj.tier, ores is not None,
                                                      ores.confidence if ores else None, ores.tier if ores else None,
                                                      self.acfg.detector_grounding_bonus)
        g.finalize_identity(self.ids)
        # remember who/where was referred to, for later pronouns in this conversation
        rec = self.index.get(subj.entity_id)
        if rec is not None and rec.entity_type == "PERSON" and subj.entity_id not in (self.speakers.self_id,
                                                                                      sp.entity_id):
            st.persons.append((c.char_start or 0, subj.entity_id))
        if ores is not None:
            orec = self.index.get(ores.entity_id)
            if orec is not None and orec.entity_type == "PERSON":
                st.persons.append((c.obj.start or 0, ores.entity_id))
            elif orec is not None and orec.entity_type == "LOCATION":
                st.locations.append((c.obj.start or 0, ores.entity_id))
        st.persons.sort()
        st.locations.sort()
        self.counts[f"assertions_{c.method}"] += 1
        return g

    # -- §4.7.3–4.7.4 retractions and corrections -------------------------------------------------------------------
    def _retractions(self, mc: MessageContext, st: MessageState, window: list[MessageState],
                     history: list[MessageState]) -> list[dict]:
        from kenning.extract.retractions import link_local

        out = []
        for hit in self.rules.scan_retractions(mc):
            out.append(link_local(self, hit, mc, st, window, history))
        for g in list(st.grounded):
            if g.cand.retraction == "temporal_bound":
                out.append(self._temporal_bound(g, mc))
        return out

    def _temporal_bound(self, g: Grounded, mc: MessageContext) -> dict:
        c = g.cand
        from kenning.extract.retractions import retraction_id

        rid = retraction_id(self.ids, c.message_id, c.char_start, c.char_end, c.source_id)
        raw = {"v": RAW_VERSION, "pattern": c.source_id, "pattern_sha": c.source_sha, "type": "temporal_bound",
               "negative_assertion_id": g.assertion_id,
               "target": {"strategy": "fact_key", "scope": "global", "fact_key": g.fact_key,
                          "note": "the positive form of the claim made before this message"}}
        self.counts["retractions_temporal_bound"] += 1
        return {"retraction_id": rid, "retraction_message_id": c.message_id, "target_assertion_id": None,
                "target_fact_key": g.fact_key, "retraction_type": "temporal_bound",
                "replacement_assertion_id": None, "confidence": c.confidence, "char_start": c.char_start,
                "char_end": c.char_end, "surface_text": mc.text[c.char_start:c.char_end] if c.char_start is not None
                else None, "raw": raw}

    # -- §4.6.7 corroboration (second pass) ------------------------------------------------------------------------
    def _corroborate(self, grounded: list[Grounded]) -> None:
        users: dict[str, list[Grounded]] = {}
        for g in grounded:
            if g.asserted_role == "user" and g.cand.modality != "question":
                users.setdefault(g.subject.entity_id, []).append(g)
        thr = self.acfg.predicate_similarity_threshold
        for a in grounded:
            if a.asserted_role != "assistant":
                a.has_user_corroboration, a.corroboration = 0, None
                continue
            matches = []
            for u in users.get(a.subject.entity_id, []):
                if abs(u.message["order_index"] - a.message["order_index"]) > self.window_k:
                    continue
                if self.acfg.corroboration_same_polarity and u.cand.polarity != a.cand.polarity:
                    continue
                if not _objects_compatible(a, u):
                    continue
                if u.predicate.predicate_id == a.predicate.predicate_id:
                    matches.append((u, "exact_predicate", None))
                else:
                    sim = JaroWinkler.normalized_similarity(a.predicate.label_norm, u.predicate.label_norm)
                    if sim >= thr:
                        matches.append((u, "fuzzy_predicate", round(sim, 6)))
            if not matches:
                a.has_user_corroboration, a.corroboration = 0, None
                continue
            matches.sort(key=lambda t: (t[0].message["order_index"], t[0].message["message_id"], t[0].assertion_id))
            a.has_user_corroboration = 1
            best = next((t for t in matches if t[1] == "exact_predicate"), matches[0])
            a.corroboration = {"corroborating_assertion_ids": [t[0].assertion_id for t in matches],
                               "match_type": best[1], "window": self.window_k}
            if best[2] is not None:
                a.corroboration["similarity_score"] = best[2]
            self.counts["assertions_corroborated"] += 1

    # -- §4.7.2 upsert policy among this run's candidates --------------------------------------------------------------
    def _apply_policy(self, grounded: list[Grounded], retractions: list[dict]) -> list[Grounded]:
        for g in grounded:
            self._compose(g)
        if self.policy == "keep_all":
            seen: dict[str, Grounded] = {}
            for g in grounded:
                seen.setdefault(g.assertion_id, g)
            return list(seen.values())
        by_key: dict[str, Grounded] = {}
        remap: dict[str, str] = {}
        for g in grounded:
            old = by_key.get(g.assertion_key)
            if old is None:
                by_key[g.assertion_key] = g
                continue
            if self.policy == "keep_highest_confidence" and g.confidence_final > old.confidence_final + 0.001:
                by_key[g.assertion_key] = g
                remap[old.assertion_id] = g.assertion_id
            else:
                remap[g.assertion_id] = old.assertion_id
            self.counts["assertions_duplicate_key_skipped"] += 1
        if remap:
            for g in by_key.values():
                if g.superseded_by in remap:
                    g.superseded_by = remap[g.superseded_by]
            for r in retractions:
                for k in ("target_assertion_id", "replacement_assertion_id"):
                    if r.get(k) in remap:
                        r[k] = remap[r[k]]
        kept = set(id(g) for g in by_key.values())
        return [g for g in grounded if id(g) in kept]

    # -- §4.6.8 final confidence -------------------------------------------------------------------------------------
    def _compose(self, g: Grounded) -> None:
        t = self.trust
        if g.asserted_role == "user":
            trust = t.trust_weight_user
        elif g.has_user_corroboration:
            trust = t.trust_weight_assistant_corroborated
        else:
            trust = t.trust_weight_assistant_uncorroborated
        sal = salience_factor(self.index.get(g.subject.entity_id), self.index.max_salience,
                              self.acfg.enable_salience_confidence_boost, self.acfg.salience_confidence_bonus)
        g.confidence_final = final_confidence(g.confidence_extraction, g.confidence_grounding, trust, sal,
                                              1.0 - g.temporal_penalty)


_COORD_AFTER = re.compile(r"\s*(?:,|and\b|or\b|&)\s*(?!I\b)[A-Z]")
_COORD_BEFORE = re.compile(r"(?<!\w)(?!I\b)[A-Z]\w*\s*(?:,|\band|\bor|&)\s*$")
PLURAL = "__PLURAL__"


def _ref(m: Mention, text: str) -> str:
    """A mention as a coreference candidate; a coordinated one ("Vienna and Graz") stands for several referents."""
    if m.start is not None and m.end is not None and (_COORD_AFTER.match(text, m.end) or
                                                      _COORD_BEFORE.search(text[max(0, m.start - 24):m.start])):
        return PLURAL
    return m.entity_id


def _single(found: set[str]) -> str | None:
    return next(iter(found)) if len(found) == 1 and PLURAL not in found else None


def _norm_value(v: Any) -> str:
    return " ".join(strip_determiners(str(v)).casefold().split()) if v is not None else ""


def _objects_compatible(a: Grounded, u: Grounded) -> bool:
    """§4.6.7: same object entity, same signature, or equal normalized strings (an entity's name counts)."""
    if a.signature == u.signature:
        return True
    if a.object_entity is None and u.object_entity is None:
        if a.object_value_type is None or u.object_value_type is None:
            return False
        return _norm_value(a.object_value) == _norm_value(u.object_value)
    return False
