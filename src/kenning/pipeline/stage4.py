"""Stage 4 — assertion extraction and grounding (seed 001 §4), one transaction.

Phases (§4.2): initialize (exclusions, entity resolution index, salience order, eligible messages) → extraction
per message in (conversation_id, order_index, message_id) order → validation → grounding → persistence
(assertions, retractions, predicates) → stats. The model is optional (``--llm live|replay``).

Reruns (docs/decisions.md A2): the stage's input fingerprint covers the raw messages, stage 2A/2B/3 state, the
transcript participants, this stage's configuration and the extractor version (registry hashes, code version,
model settings). When it equals the last successful run's, the stage does nothing. Otherwise every conversation
is recomputed and the result is written as a diff against the stored rows, so unchanged assertions keep their
ids and their rows are not touched.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kenning.detect.entities import self_entity_id
from kenning.extract.conversation import ConversationProcessor
from kenning.extract.grounding import EntityIndex, PredicateTable, Resolver
from kenning.extract.registry import extractor_version, load_registry, load_vocabulary
from kenning.extract.retractions import link_global
from kenning.extract.rules import RuleExtractor
from kenning.extract.speakers import SpeakerResolver
from kenning.pipeline.incognito import incognito_skip
from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import canonicalize, jcs_hash
from kenning.store import assertions as asql
from kenning.store import mentions as msql


def stage4_config(cfg: Any) -> dict[str, Any]:
    return {"assertions": cfg.assertions.model_dump(mode="json"),
            "assertion_extraction": cfg.pipeline.assertion_extraction.model_dump(mode="json"),
            "trust_weights": cfg.pipeline.trust_weights.model_dump(mode="json"),
            "corroboration": cfg.pipeline.corroboration.model_dump(mode="json"),
            "ignore_markdown_blockquotes": cfg.pipeline.entity_detection.ignore_markdown_blockquotes,
            "id_namespace": cfg.ids.id_namespace}


class AssertionExtraction:
    name = "4"
    title = "assertions"

    def __init__(self, llm_extractor_factory: Any = None):
        # The model path (``--llm``, kenning.extract.llm) plugs in here; tests may inject a factory.
        if llm_extractor_factory is None:
            from kenning.extract.llm import LLMExtractorFactory

            llm_extractor_factory = LLMExtractorFactory()
        self.llm_extractor_factory = llm_extractor_factory

    @staticmethod
    def model_wanted(config: Any, explicit: bool) -> bool:
        """M30/A32: the seed's switch (enable_llm_assertion_extraction) is off by default, so an endpoint found by
        ``llm.mode: auto`` alone does not send every message to the model; ``--llm live|replay`` does."""
        return explicit or config.pipeline.assertion_extraction.enable_llm_assertion_extraction

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config
        acfg = cfg.assertions
        registry = load_registry(acfg.pattern_registry)
        vocab = load_vocabulary(acfg.predicate_vocabulary)
        # A32/M30: ctx.llm_mode is live/replay only when model_wanted said so; otherwise this stage is rules-only
        # whatever the run's mode, and its fingerprint says so.
        use_llm = self.llm_extractor_factory is not None and self.llm_extractor_factory.wanted(ctx)
        llm_mode = (getattr(ctx, "llm_mode", "none") or "none") if use_llm else "none"
        llm_extra = self.llm_extractor_factory.version_info(ctx) if use_llm else {}
        ev = extractor_version(registry, vocab, llm_extra)
        skip = incognito_skip(ctx)  # §13.4 (I70): no claims from incognito conversations
        fingerprint = jcs_hash({**({"incognito": skip.digest} if skip else {}),
            "messages": asql.message_digest(ctx.conn), "2A": _digest_2a(ctx), "2B": msql.get_fingerprint(ctx.conn, "2B"),
            "3": msql.get_fingerprint(ctx.conn, "3"), "participants": asql.participants_digest(ctx.conn),
            "config": stage4_config(cfg), "extractor_version": ev, "llm_mode": llm_mode})
        if msql.get_fingerprint(ctx.conn, "4") == fingerprint:
            return {"skipped_unchanged": 1}

        counts: Counter = Counter()
        policy = cfg.pipeline.assertion_extraction.assertion_upsert_policy
        asql.set_assertion_key_unique(ctx.conn, policy != "keep_all")
        self_id = self_entity_id(ctx.ids)
        index = EntityIndex(asql.iter_entities_for_index(ctx.conn), self_id=self_id)
        resolver = Resolver(index, ctx.ids, fuzzy_enabled=acfg.enable_fuzzy_entity_linking,
                            fuzzy_threshold=cfg.pipeline.assertion_extraction.threshold_link_string_sim,
                            created_confidence=acfg.resolution_confidence.created_entity)
        preds = PredicateTable(vocab, ctx.ids, asql.all_predicates(ctx.conn))
        speakers = SpeakerResolver(ctx.conn, ctx.ids, speaker_confidence=acfg.resolution_confidence.speaker,
                                   existing_entity=lambda eid: index.get(eid) or asql.entity_exists(ctx.conn, eid))
        rules = RuleExtractor(registry, acfg)
        llm = self.llm_extractor_factory.open(ctx, ev, vocab) if use_llm else None

        def info(code: str, message: str, **context: Any) -> None:
            counts[f"info_{code}"] += 1

        proc = ConversationProcessor(cfg, ctx.ids, rules, index, resolver, preds, speakers, warn=ctx.warn,
                                     info=info, counts=counts, llm=llm)
        conv_ids = sorted(set(asql.conversation_ids(ctx.conn)) | asql.stored_conversation_ids(ctx.conn))
        if skip:
            # passed over, not processed: their stored claims (if any) are the purge's to remove
            counts["conversations_incognito"] = sum(1 for c in conv_ids if c in skip)
            conv_ids = [c for c in conv_ids if c not in skip]
        counts["entities_indexed"] = len(index.by_id)
        batch = acfg.batch_conversations
        try:
            for i in range(0, len(conv_ids), batch):
                chunk = conv_ids[i:i + batch]
                self._process_chunk(ctx, proc, preds, chunk, counts)
                ctx.progress(records=min(i + batch, len(conv_ids)), total=len(conv_ids), file="stage 4",
                             unit="conversations")
        except BaseException:
            if llm is not None:
                llm.abort()
            raise
        counts["retraction_links_updated"] = link_global(ctx.conn, counts)
        counts["predicate_rows_updated"] = asql.refresh_predicate_stats(ctx.conn)
        counts["created_entities_deleted"] = asql.delete_unused_created_entities(ctx.conn)
        asql.set_entity_assertion_counts(ctx.conn, acfg.update_entity_assertion_counts)
        if llm is not None:
            # §4.8.1: the run row is finished in this transaction; assertions_extracted = llm + hybrid rows
            llm.finish(counts, asql.count_model_assertions(ctx.conn))
            counts["llm_mode"] = llm_mode
            counts["llm_extractor_version"] = llm_extra.get("llm")
            counts["llm_run_id"] = llm.run_id
        if llm is not None and llm.budget_exhausted:
            # A37: messages the budget left unread got rules only; the next run must ask again, so this
            # run's fingerprint is stored marked incomplete (it never equals a real one).
            ctx.warn("LLM_BUDGET_EXHAUSTED_STAGE_INCOMPLETE", "the LLM budget ran out; some messages have rule "
                     "claims only. Raise llm.budget and run stage 4 again to read them")
            counts["llm_incomplete_budget"] = 1
            msql.set_fingerprint(ctx.conn, "4", fingerprint + ":incomplete", ctx.run_id)
        else:
            msql.set_fingerprint(ctx.conn, "4", fingerprint, ctx.run_id)
        out: dict[str, Any] = {k: counts[k] for k in sorted(counts) if not k.startswith("info_")}
        out["extractor_version"] = ev
        out["temporal_qualifiers_unlinked"] = counts.get("info_TEMPORAL_QUALIFIER_UNLINKED", 0)
        return out

    def _process_chunk(self, ctx: StageContext, proc: ConversationProcessor, preds: PredicateTable,
                       chunk: list[str], counts: Counter) -> None:
        messages = asql.messages_of_conversations(ctx.conn, chunk)
        mentions = asql.mentions_of_conversations(ctx.conn, chunk)
        times = asql.time_mentions_of_conversations(ctx.conn, chunk)
        by_conv: dict[str, list[dict]] = {}
        for m in messages:
            by_conv.setdefault(m["conversation_id"], []).append(m)
        texts = {m["message_id"]: m["text_raw"] for m in messages}
        new_assertions: dict[str, Any] = {}
        new_retractions: dict[str, tuple] = {}
        created_rows, marker_rows = [], []
        for conv in chunk:
            res = proc.process(by_conv.get(conv, []), mentions, times)
            for g in res.assertions:
                new_assertions[g.assertion_id] = g
            for r in res.retractions:
                row = (r["retraction_id"], r["retraction_message_id"], r["target_assertion_id"], r["target_fact_key"],
                       r["retraction_type"], r["replacement_assertion_id"], r["confidence"], r["char_start"],
                       r["char_end"], r["surface_text"], canonicalize(r["raw"]))
                if row[0] in new_retractions:
                    counts["retractions_duplicate_span_skipped"] += 1
                    continue
                new_retractions[row[0]] = row
            for eid, (etype, key, name, reason) in sorted(res.created.items()):
                created_rows.append((eid, etype, key, name, canonicalize([name]),
                                     canonicalize({"created_by": "stage4", "reason": reason})))
                marker_rows.append((eid, reason, name, ctx.run_id))
        asql.insert_created_entities(ctx.conn, created_rows, marker_rows)
        asql.insert_predicates(ctx.conn, preds.take_new_rows())
        # assertions: diff against what is stored for these conversations
        stored = asql.assertions_of_conversations(ctx.conn, chunk)
        gone = sorted(set(stored) - set(new_assertions))
        asql.delete_assertions(ctx.conn, gone)

        def surface(s: int, e: int, mid: str) -> str:
            return texts[mid][s:e]

        inserts, updates = [], []
        for aid in sorted(new_assertions):
            g = new_assertions[aid]
            row = g.row(lambda s, e, mid=g.message["message_id"]: surface(s, e, mid))
            if aid not in stored:
                inserts.append(row)
            elif stored[aid] != row:
                updates.append(row)
        asql.insert_assertions(ctx.conn, inserts)
        asql.update_assertions(ctx.conn, updates)
        counts["assertions_inserted"] += len(inserts)
        counts["assertions_updated"] += len(updates)
        counts["assertions_deleted"] += len(gone)
        counts["assertions_total"] += len(new_assertions)
        # retractions
        stored_r = asql.retractions_of_conversations(ctx.conn, chunk)
        gone_r = sorted(set(stored_r) - set(new_retractions))
        asql.delete_retractions(ctx.conn, gone_r)
        ins_r = [r for rid, r in sorted(new_retractions.items()) if rid not in stored_r]
        upd_r = [r for rid, r in sorted(new_retractions.items()) if rid in stored_r and stored_r[rid] != r]
        asql.insert_retractions(ctx.conn, ins_r)
        asql.update_retractions(ctx.conn, upd_r)
        counts["retractions_total"] += len(new_retractions)
        counts["retractions_inserted"] += len(ins_r)
        counts["retractions_deleted"] += len(gone_r)
        counts["conversations_processed"] += len(chunk)


def _digest_2a(ctx: StageContext) -> str:
    from kenning.pipeline.stage2b import stage_2a_digest

    return stage_2a_digest(ctx)
