"""Stage 2A — entity and time detection (seed 001 §2A), one transaction.

Reruns (docs/decisions.md E10): a message is recomputed only when its input hash changed (its text,
structure ranges, timestamp, quality, role, conversation, or the detector/NER/time configuration and
versions); everything it derived before is deleted first. A rerun on an unchanged vault writes nothing.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any

from kenning.detect.mentions import MessageDetector, MessageInput
from kenning.detect.ner import NerBackend, NerUnavailable, make_backend, replayed_by_rerun
from kenning.pipeline.incognito import incognito_skip
from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import canonicalize
from kenning.store import mentions as msql

BATCH = 2000


class EntityTimeDetection:
    name = "2A"
    title = "entity & time detection"

    def __init__(self, ner_backend: NerBackend | None = None):
        # Tests and replays may inject a backend; otherwise entities.ner decides.
        self.ner_backend = ner_backend

    @staticmethod
    def model_wanted(config: Any, explicit: bool) -> bool:
        """M30: LLM NER (E27) is this stage's only model use; entities.ner.llm.enabled (default on) or
        backend llm switch it on whenever the run has a model."""
        ner = config.entities.ner
        return config.pipeline.entity_detection.enable_ner and (ner.backend == "llm" or ner.llm.enabled)

    def run(self, ctx: StageContext) -> dict[str, Any]:
        with contextlib.ExitStack() as stack:
            return self._run(ctx, stack)

    def _run(self, ctx: StageContext, stack: contextlib.ExitStack) -> dict[str, Any]:
        cfg = ctx.config
        try:
            ner = self.ner_backend if self.ner_backend is not None else make_backend(cfg.entities.ner)
        except NerUnavailable as e:
            raise NerUnavailable(str(e)) from None
        llm_ner = self._llm_backend(ctx, stack)
        det = MessageDetector(cfg, ner, (llm_ner,) if llm_ner is not None else ())
        fp = det.fingerprint()
        states = msql.detect_states(ctx.conn)          # messages.rowid → input hash (N12)
        detected = msql.messages_with_detections(ctx.conn)  # messages holding rows a recompute must clear first
        stats: Counter = Counter()
        ner_runs: dict[int, str] = {}      # id(backend) -> ner_model_runs.run_id
        ner_io_counts: Counter = Counter()
        batch: list[MessageInput] = []
        gone: list[tuple[int, str]] = []
        hashes: dict[str, tuple[int, bytes]] = {}

        def ner_run_id(backend) -> str:
            rid = ner_runs.get(id(backend))
            if rid is None:
                rid = ner_runs[id(backend)] = ctx.ids.make("ner_run", ctx.run_id, backend.name, backend.version)
                msql.insert_ner_run(ctx.conn, {
                    "run_id": rid, "model_name": backend.name, "model_version": backend.version,
                    "config_json": canonicalize({"backend": backend.config(),
                                                 "entity_detection": cfg.pipeline.entity_detection.model_dump(mode="json"),
                                                 "label_map": dict(cfg.entities.ner.label_map)}),
                    "started_at_utc": ctx.clock.now(), "pipeline_run_id": ctx.run_id})
            return rid

        def flush() -> None:
            if not batch:
                return
            msql.delete_message_detections(ctx.conn, [m.message_id for m in batch if m.message_id in detected])
            if llm_ner is not None:  # one batched round of model requests for the whole batch (E28)
                llm_ner.prefetch((m.conversation_id, m.message_id, m.text) for m in batch)
            cand_rows, mention_rows, time_rows, io_rows, state_rows = [], [], [], [], []
            for m in batch:
                out = det.run(m, ctx.ids, stats)
                for code, message, context in out.warnings:
                    ctx.warn(code, message, **context)
                cand_rows.extend(c.row() for c in out.candidates)
                mention_rows.extend(c.mention_row(ctx.ids) for c in out.winners)
                for t in out.times:
                    res = t.resolution
                    raw = {k: v for k, v in res.items() if k not in ("resolved_type", "valid_from_utc",
                                                                       "valid_to_utc", "resolution_granularity")}
                    raw["relative"] = t.relative
                    if t.overlapped:
                        raw["overlapped"] = t.overlapped
                    time_rows.append((ctx.ids.make("time", m.message_id, t.start, t.surface_hash), m.message_id,
                                      t.start, t.end, t.surface, t.surface_hash, t.pattern_id, t.precedence,
                                      m.created_at_utc, res["resolved_type"], res["valid_from_utc"],
                                      res["valid_to_utc"], res["resolution_granularity"], det.tz, t.confidence,
                                      canonicalize(raw)))
                    stats[f"times_{res['resolved_type']}"] += 1
                for backend, io in out.ner_ios:
                    rid = ner_run_id(backend)
                    if io is not None:  # None: a backend replayed by rerunning it keeps no per-message log (N10)
                        io_rows.append((rid, m.message_id, *io))
                    ner_io_counts[rid] += 1
                rowid, h = hashes[m.message_id]
                if out.ner_retry:  # a state that never matches: the next run detects this message again
                    h = b""
                    stats["messages_ner_retry"] += 1
                state_rows.append((rowid, h))
            msql.insert_candidates(ctx.conn, cand_rows)
            msql.insert_mentions(ctx.conn, mention_rows)
            msql.insert_time_mentions(ctx.conn, time_rows)
            if io_rows:
                msql.insert_ner_io(ctx.conn, io_rows)
            msql.upsert_detect_states(ctx.conn, state_rows)
            stats["messages_processed"] += len(batch)
            batch.clear()
            hashes.clear()
            # Counted in messages looked at (unchanged ones too), of all the vault's messages.
            ctx.progress(records=stats["messages_seen"], total=n_messages, file="stage 2A", unit="messages")

        n_messages = msql.count_messages_for_detection(ctx.conn)
        skip = incognito_skip(ctx)
        stats.update({f"incognito_{k}": v for k, v in skip.purged.items() if v and k != "incognito_conversations"})
        for (rowid, mid, cid, role, created, quality, text, fences, bqs, cits) in \
                msql.iter_messages_for_detection(ctx.conn):
            if cid in skip:  # §13.4 (I70): never mined, and no state kept, so a cleared mode detects it afresh
                stats["messages_incognito"] += 1
                continue
            if text is None:
                if rowid in states or mid in detected:
                    gone.append((rowid, mid))
                continue
            stats["messages_seen"] += 1
            m = MessageInput(mid, cid, role, created, quality, text, fences, bqs, cits)
            h = det.input_hash(m, fp)
            if states.get(rowid) == h:
                stats["messages_unchanged"] += 1
                continue
            hashes[mid] = (rowid, h)
            batch.append(m)
            if len(batch) >= BATCH:
                flush()
        flush()
        if gone:
            msql.delete_message_detections(ctx.conn, [mid for _, mid in gone if mid in detected])
            msql.delete_detect_states(ctx.conn, [rowid for rowid, _ in gone])
            stats["messages_cleared"] += len(gone)
        pruned = msql.prune_detect_states(ctx.conn) if states else 0  # message rows gone (a re-import replaced them)
        if pruned:
            stats["detect_states_pruned"] += pruned
        for backend in det.ners:
            rid = ner_runs.get(id(backend))
            if rid is None:
                continue
            summary = {"io_table": "ner_model_run_io", "messages": ner_io_counts[rid]}
            if replayed_by_rerun(backend):  # N10: no per-message log; the replay is a rerun of the same version
                summary.update(io_table=None, replay="rerun")
            if len(det.ners) == 1:
                summary.update(spans_raw=stats["ner_spans_raw"], spans_label_filtered=stats["ner_spans_label_filtered"])
            if hasattr(backend, "summary"):
                summary["llm"] = backend.summary()
            msql.finish_ner_run(ctx.conn, rid, ctx.clock.now(), canonicalize(summary))
            stats["ner_runs"] += 1
        if llm_ner is not None and llm_ner.client is not None:
            llm_ner.client.run.add(messages_processed=ner_io_counts[ner_runs.get(id(llm_ner), "")],
                                   assertions_extracted=0)
        counts: dict[str, Any] = {k: stats[k] for k in sorted(stats)}
        counts["detector_versions"] = det.versions()["detectors"]
        if llm_ner is not None:
            counts["llm_ner"] = {k: llm_ner.stats[k] for k in sorted(llm_ner.stats)}
        return counts

    @staticmethod
    def _llm_backend(ctx: StageContext, stack: contextlib.ExitStack):
        """LLM NER when the run has a model (``--llm live|replay``) and ``entities.ner.llm.enabled`` or
        ``backend: llm`` asks for it (E27). Its model-layer run opens on the first request."""
        cfg = ctx.config
        mode = getattr(ctx, "llm_mode", "none") or "none"   # already "none" unless model_wanted (M30)
        if not EntityTimeDetection.model_wanted(cfg, True):
            return None
        if mode == "none":
            if cfg.entities.ner.backend == "llm":
                raise NerUnavailable("entities.ner.backend is 'llm' but this run has no model: run with --llm live "
                                     "(KENNING_LLM_BASE_URL and KENNING_LLM_MODEL set) or --llm replay, or choose "
                                     "backend rules")
            return None
        from kenning.detect.llm_ner import LlmNerBackend, llm_ner_version
        from kenning.llm.client import open_llm_run

        version = llm_ner_version(cfg, mode)
        return LlmNerBackend(cfg, version=version,
                             open_client=lambda: stack.enter_context(open_llm_run(ctx, "ner", extractor_version=version)))
