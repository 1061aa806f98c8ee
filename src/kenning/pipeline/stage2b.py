"""Stage 2B — personal lexicon and entity consolidation (seed 001 §2B), one transaction.

Phases: SELF + build id → induction → selection → LexiconMatch (and re-resolution of the messages it
touches) → entity upsert and mention linking → salience → build stats.

Reruns (docs/decisions.md E10): the stage's input fingerprint is the digest of stage 2A's per-message
state plus this stage's configuration; when it equals the last successful run's, the stage does nothing.
Otherwise it builds a new lexicon version (old builds stay for audit), replaces every LEXICON detection,
and recomputes entities deterministically.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from kenning.detect.candidates import Candidate, apply_eligibility, select_winners
from kenning.detect.detectors import ORDER
from kenning.detect.entities import aggregate_mentions, by_type, group_links, plan_upserts, self_entity_id
from kenning.detect.lexicon import (GENERATORS_VERSION, Inducer, LexiconMatcher, LexTerm, infer_type, select)
from kenning.detect.noise import NoiseRules
from kenning.detect.spans import Exclusions
from kenning.pipeline.incognito import incognito_skip
from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import canonicalize, jcs_hash
from kenning.store import entities as esql
from kenning.store import mentions as msql

LEXICON_CONFIDENCE = 0.85  # E21: every LexiconMatch candidate; LEXICON ranks by class, not confidence (E9)


class LexiconConfigError(ValueError):
    pass


def load_denylist(cfg: Any) -> tuple[frozenset[str], str | None]:
    items = {x.strip().lower() for x in cfg.denylist}
    file_hash = None
    if cfg.lexicon_denylist_path:
        p = Path(cfg.lexicon_denylist_path).expanduser()
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise LexiconConfigError(f"cannot read entities.lexicon.lexicon_denylist_path {p}: {e.strerror}") from e
        file_hash = hashlib.sha256(text.encode()).hexdigest()
        items |= {" ".join(ln.strip().lower().split()) for ln in text.splitlines()
                  if ln.strip() and not ln.lstrip().startswith("#")}
    return frozenset(items), file_hash


def stage_2a_digest(ctx: StageContext) -> str:
    h = hashlib.sha256()
    for mid, ih in msql.detect_state_digest_rows(ctx.conn):
        h.update(f"{mid}:{ih.hex()}\n".encode())
    return h.hexdigest()


class LexiconAndEntities:
    name = "2B"
    title = "lexicon & entities"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config
        lcfg = cfg.entities.lexicon
        denylist, deny_file_hash = load_denylist(lcfg)
        skip = incognito_skip(ctx)  # §13.4 (I70): incognito messages feed neither the lexicon nor its matches
        fingerprint = jcs_hash({**({"incognito": skip.digest} if skip else {}),
                                "2A": stage_2a_digest(ctx), "lexicon": lcfg.model_dump(mode="json"),
                                "salience": cfg.entities.salience.model_dump(mode="json"),
                                "detectors": cfg.entities.detectors.model_dump(mode="json"),
                                "entity_detection": cfg.pipeline.entity_detection.model_dump(mode="json"),
                                "denylist_file": deny_file_hash, "generators": GENERATORS_VERSION})
        if msql.get_fingerprint(ctx.conn, "2B") == fingerprint:
            return {"skipped_unchanged": 1}
        counts: Counter = Counter()
        include_bq = cfg.pipeline.entity_detection.ignore_markdown_blockquotes

        # -- phase 2: induction (fences and blockquotes excluded from the counts, §2B.4.1) ----------------------
        build = None
        terms: list[LexTerm] = []
        if lcfg.enable_lexicon_induction:
            version = esql.next_build_version(ctx.conn)
            build_id = ctx.ids.make("lexicon_build", ctx.started_at_utc, version)
            build = {"build_id": build_id, "build_version": version, "started_at_utc": ctx.clock.now(),
                     "pipeline_run_id": ctx.run_id,
                     "config_json": canonicalize({**lcfg.model_dump(mode="json"), "generators_version": GENERATORS_VERSION,
                                                  "denylist_file_sha256": deny_file_hash})}
            esql.insert_build(ctx.conn, build)
            inducer = Inducer(allcaps_stoplist=lcfg.allcaps_stoplist, role_weights=dict(lcfg.role_weights),
                              sentence_initial_words=lcfg.sentence_initial_words)
            for (_rowid, mid, cid, role, _created, _q, text, fences, bqs, cits) in \
                    msql.iter_messages_for_detection(ctx.conn):
                if text and cid not in skip:
                    excl = Exclusions.build(fences, bqs, cits, include_blockquotes=True)
                    inducer.add_message(mid, cid, role, text, excl)
            cands = inducer.aggregate(lcfg.evidence_max_occurrences)
            select(cands, lcfg, denylist)
            cand_rows, term_rows = [], []
            for c in cands:
                c.candidate_id = ctx.ids.make("lex_cand", build_id, c.generator, c.term_key)
                cand_rows.append((c.candidate_id, build_id, c.generator, c.term_key, c.canonical_surface,
                                  canonicalize(c.aliases), c.total_count, c.user_weighted_count, c.conversation_count,
                                  c.code_likeness_ratio, c.context_diversity, c.score, 1 if c.is_selected else 0,
                                  c.rejection_reason, canonicalize({"generators": c.generators,
                                                                    "occurrences": c.evidence})))
                if c.is_selected:
                    hint = infer_type(c.canonical_surface, lcfg.org_suffixes)
                    term_id = ctx.ids.make("lex_term", build_id, c.term_key)
                    term_rows.append((term_id, build_id, c.candidate_id, c.term_key, c.canonical_surface,
                                      canonicalize(c.aliases), c.score, hint))
                    terms.append(LexTerm(term_id, c.term_key, c.canonical_surface, c.aliases, hint, c.score))
            esql.insert_term_candidates(ctx.conn, cand_rows)
            esql.insert_terms(ctx.conn, term_rows)
            counts["lexicon_candidates"] = len(cands)
            counts["lexicon_terms_selected"] = len(terms)
            rejections = Counter(c.rejection_reason for c in cands if c.rejection_reason)
            scores = sorted(c.score for c in cands if c.is_selected)
            build_stats = {"generators": dict(sorted(inducer.by_generator.items())),
                           "rejection_reasons": dict(sorted(rejections.items())),
                           "score_distribution": _distribution(scores),
                           "entity_type_hints": dict(sorted(Counter(t.entity_type_hint for t in terms).items()))}

        # -- phase 4: LexiconMatch, then re-resolve every message whose LEXICON candidates changed ----------------
        old_msgs = set(msql.messages_with_lexicon_candidates(ctx.conn))
        counts["lexicon_candidates_replaced"] = msql.delete_lexicon_detections(ctx.conn)
        new_by_msg: dict[str, list[Candidate]] = {}
        if terms:
            matcher = LexiconMatcher(terms)
            detector = f"LEXICON:{build['build_id']}"
            dversion = f"lexicon-v{build['build_version']}"
            for mid, text in msql.iter_message_texts(ctx.conn):
                if not text or (skip and mid in skip.messages):
                    continue
                hits = matcher.find(text)
                if hits:
                    new_by_msg[mid] = [Candidate(mid, detector, dversion, ORDER["LEXICON"], h.term.entity_type_hint,
                                                 h.start, h.end, h.surface, LEXICON_CONFIDENCE,
                                                 {"details": {"term_id": h.term.term_id, "term_key": h.term.term_key,
                                                              "build_id": build["build_id"]}}) for h in hits]
        self._reresolve(ctx, sorted(old_msgs | set(new_by_msg)), new_by_msg, include_bq, counts)

        # -- phases 5–6: entities, links, salience ----------------------------------------------------------------
        ed = cfg.pipeline.entity_detection
        key_opts = {"url_keep_query": cfg.entities.detectors.url_key_keep_query,
                    "url_sort_query": ed.url_sort_query_params,
                    "phone_region": cfg.entities.detectors.phone_default_region}
        aggs, relinks = aggregate_mentions(esql.iter_mentions_for_entities(ctx.conn), ctx.ids, key_opts)
        existing = esql.all_entities(ctx.conn)
        self_id = self_entity_id(ctx.ids)
        inserts, updates, ucounts = plan_upserts(aggs, existing, self_id, esql.max_message_time(ctx.conn),
                                                 cfg.entities.salience)
        esql.insert_entities(ctx.conn, inserts)
        esql.update_entity_stats(ctx.conn, updates)
        esql.link_mentions(ctx.conn, group_links(aggs))
        counts.update(ucounts)
        counts["mentions_linked"] = relinks
        counts["entities_with_mentions"] = len(aggs)
        if build is not None:
            build_stats["entities_by_type"] = by_type(aggs)
            esql.finish_build(ctx.conn, build["build_id"], ctx.clock.now(), counts["lexicon_candidates"],
                              counts["lexicon_terms_selected"], canonicalize(build_stats))
            counts["lexicon_build_version"] = build["build_version"]
        msql.set_fingerprint(ctx.conn, "2B", fingerprint, ctx.run_id)
        return {k: counts[k] for k in sorted(counts)}

    def _reresolve(self, ctx: StageContext, message_ids: list[str], new_by_msg: dict[str, list[Candidate]],
                   include_bq: bool, counts: Counter) -> None:
        """Winner selection over a message's 2A candidates plus its LEXICON candidates (E9, E14)."""
        if not message_ids:
            return
        noise = NoiseRules.from_config(ctx.config.entities.detectors)
        for i in range(0, len(message_ids), 500):
            chunk = message_ids[i:i + 500]
            texts = msql.message_texts(ctx.conn, chunk)
            existing: dict[str, list[dict]] = {}
            for r in msql.candidates_of_messages(ctx.conn, chunk):
                existing.setdefault(r["message_id"], []).append(r)
            new_rows, updates, mention_rows = [], [], []
            for mid in chunk:
                text, fences, bqs, cits = texts[mid]
                olds = []
                before: dict[str, tuple] = {}
                for r in existing.get(mid, []):
                    c = Candidate(mid, r["detector"], r["detector_version"], r["detector_order"], r["entity_type_hint"],
                                  r["char_start"], r["char_end"], r["surface_text"], r["confidence"],
                                  _loads(r["raw_candidate_json"]))
                    c.candidate_id = r["candidate_id"]
                    c.eligible = bool(r["is_eligible"])
                    if r["suppression_reason"] not in (None, "OVERLAP_HIGHER_SCORE"):
                        c.reason = r["suppression_reason"]
                    before[c.candidate_id] = (r["suppressed_by_candidate_id"], r["suppression_reason"])
                    olds.append(c)
                news = new_by_msg.get(mid, [])
                for c in news:
                    c.assign_id(ctx.ids)
                excl = Exclusions.build(fences, bqs, cits, include_blockquotes=include_bq)
                apply_eligibility(news, text, excl, noise)
                winners = select_winners(olds + news)
                for c in olds:
                    now = (c.suppressed_by, c.reason)
                    if before[c.candidate_id] != now:
                        updates.append((c.suppressed_by, c.reason, c.candidate_id))
                new_rows.extend(c.row() for c in news)
                for c in news:
                    counts["lexicon_mention_candidates"] += 1
                    if c.reason:
                        counts[f"lexicon_suppressed_{c.reason}"] += 1
                mention_rows.extend(c.mention_row(ctx.ids) for c in winners)
                counts["lexicon_mentions_emitted"] += sum(1 for c in winners if c.detector.startswith("LEXICON:"))
            msql.insert_candidates(ctx.conn, new_rows)
            msql.update_candidate_suppression(ctx.conn, updates)
            msql.replace_message_mentions(ctx.conn, chunk, mention_rows)
            counts["messages_reresolved"] += len(chunk)
            counts["candidates_resuppressed"] += len(updates)


def _loads(raw: str | None) -> dict:
    import orjson

    return orjson.loads(raw) if raw else {}


def _distribution(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    n = len(values)
    return {"n": n, "min": values[0], "max": values[-1], "median": values[n // 2],
            "p90": values[min(n - 1, int(n * 0.9))]}
