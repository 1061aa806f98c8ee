"""Stage 2A — entity and time detection (seed 001 §2A), one transaction.

Reruns (docs/decisions.md E10): a message is recomputed only when its input hash changed (its text,
structure ranges, timestamp, quality, role, conversation, or the detector/NER/time configuration and
versions); everything it derived before is deleted first. A rerun on an unchanged vault writes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kenning.detect.mentions import MessageDetector, MessageInput
from kenning.detect.ner import NerBackend, NerUnavailable, make_backend
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

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config
        try:
            ner = self.ner_backend if self.ner_backend is not None else make_backend(cfg.entities.ner)
        except NerUnavailable as e:
            raise NerUnavailable(str(e)) from None
        det = MessageDetector(cfg, ner)
        fp = det.fingerprint()
        states = msql.detect_states(ctx.conn)
        stats: Counter = Counter()
        ner_run_id = None
        ner_io_count = 0
        batch: list[MessageInput] = []
        gone: list[str] = []
        hashes: dict[str, str] = {}

        def flush() -> None:
            nonlocal ner_run_id, ner_io_count
            if not batch:
                return
            msql.delete_message_detections(ctx.conn, [m.message_id for m in batch if m.message_id in states])
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
                if out.ner_io is not None:
                    if ner_run_id is None:
                        ner_run_id = ctx.ids.make("ner_run", ctx.run_id, det.ner.name, det.ner.version)
                        msql.insert_ner_run(ctx.conn, {
                            "run_id": ner_run_id, "model_name": det.ner.name, "model_version": det.ner.version,
                            "config_json": canonicalize({"backend": det.ner.config(),
                                                         "entity_detection": cfg.pipeline.entity_detection.model_dump(mode="json"),
                                                         "label_map": dict(cfg.entities.ner.label_map)}),
                            "started_at_utc": ctx.clock.now(), "pipeline_run_id": ctx.run_id})
                    io_rows.append((ner_run_id, m.message_id, *out.ner_io))
                state_rows.append((m.message_id, hashes[m.message_id], ctx.run_id))
            msql.insert_candidates(ctx.conn, cand_rows)
            msql.insert_mentions(ctx.conn, mention_rows)
            msql.insert_time_mentions(ctx.conn, time_rows)
            if io_rows:
                msql.insert_ner_io(ctx.conn, io_rows)
                ner_io_count += len(io_rows)
            msql.upsert_detect_states(ctx.conn, state_rows)
            stats["messages_processed"] += len(batch)
            batch.clear()
            hashes.clear()
            ctx.progress(records=stats["messages_processed"], file="stage 2A")

        for (mid, cid, role, created, quality, text, fences, bqs, cits) in msql.iter_messages_for_detection(ctx.conn):
            if text is None:
                if mid in states:
                    gone.append(mid)
                continue
            stats["messages_seen"] += 1
            m = MessageInput(mid, cid, role, created, quality, text, fences, bqs, cits)
            h = det.input_hash(m, fp)
            if states.get(mid) == h:
                stats["messages_unchanged"] += 1
                continue
            hashes[mid] = h
            batch.append(m)
            if len(batch) >= BATCH:
                flush()
        flush()
        if gone:
            msql.delete_message_detections(ctx.conn, gone)
            msql.delete_detect_states(ctx.conn, gone)
            stats["messages_cleared"] += len(gone)
        if ner_run_id is not None:
            msql.finish_ner_run(ctx.conn, ner_run_id, ctx.clock.now(), canonicalize({
                "io_table": "ner_model_run_io", "messages": ner_io_count, "spans_raw": stats["ner_spans_raw"],
                "spans_label_filtered": stats["ner_spans_label_filtered"]}))
            stats["ner_runs"] += 1
        counts: dict[str, Any] = {k: stats[k] for k in sorted(stats)}
        counts["detector_versions"] = det.versions()["detectors"]
        return counts
