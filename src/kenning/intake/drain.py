"""The extraction queue's drain (§20A.3, §23, §24, §38): crash recovery, then every runnable row — critical first —
through every registered extractor (``kenning.intake.extractors``), each extraction all-or-nothing, audited once
with the KnowledgeCommit ids it produced. Deep with no model runs the rules and says so (never a silent skip);
a failing deep extraction downgrades to shallow with fresh retries; a failing shallow one is stale_archived —
except on the critical lane, which is never archived (it fails with its error instead)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from kenning.intake import extractors as seam
from kenning.intake.budget import FIRST_WEEK_DAYS, DailyExtractionBudget, calibrating
from kenning.intake.funnel import extraction_id_for
from kenning.intake.modes import incognito_conversations
from kenning.sources.timestamps import format_utc, parse_utc
from kenning.store import intake as isql
from kenning.store import knowledge as ksql


def _minus(now: str, **delta: float) -> str:
    return format_utc(parse_utc(now) - timedelta(**delta))


def recover_crashed(conn: Any, config: Any, now: str) -> Counter:
    """recoverCrashedExtractions (§20A.3): running rows untouched for crash_minutes are re-queued with one more
    retry, or failed 'crash_recovery_exhausted' when their retries are used up."""
    counts: Counter = Counter()
    for r in isql.stuck_running(conn, _minus(now, minutes=config.intake.queue.crash_minutes)):
        if r["retries"] < r["max_retries"]:
            isql.set_pending(conn, r["pending_id"], status="queued", retries=r["retries"] + 1, updated_at=now)
            counts["crash_requeued"] += 1
        else:
            isql.set_pending(conn, r["pending_id"], status="failed", error_code="crash_recovery_exhausted",
                             updated_at=now)
            counts["crash_failed"] += 1
    return counts


def expire_old(conn: Any, now: str) -> Counter:
    """Normal rows still queued after their max_age_hours are stale_archived 'max_age_exceeded' (I15). Critical
    rows never are (§24), and deferred rows wait for budget, never for age (§23: defer, never drop)."""
    counts: Counter = Counter()
    for r in isql.queued_normal(conn):
        if r["queued_at"] < _minus(now, hours=r["max_age_hours"]):
            isql.set_pending(conn, r["pending_id"], status="stale_archived", error_code="max_age_exceeded",
                             updated_at=now)
            counts["expired"] += 1
    return counts


class Drain:
    def __init__(self, conn: Any, config: Any, now: str, llm: Any = None,
                 extractors: dict[str, seam.Extractor] | None = None):
        self.conn, self.config, self.now, self.llm = conn, config, now, llm
        self.extractors = seam.registered() if extractors is None else extractors
        self.budget = DailyExtractionBudget(conn, config, now,
                                            calibrating=calibrating(conn, config, now, FIRST_WEEK_DAYS))
        self.incognito = incognito_conversations(conn, config)
        self.counts: Counter = Counter()
        self._turns: dict[str, list[dict[str, Any]]] = {}

    # ---- the observation an extractor sees ------------------------------------------------------------------

    def observation(self, item: dict[str, Any]) -> seam.Observation | None:
        obs = isql.get_observation(self.conn, item["observation_id"])
        dec = isql.get_decision(self.conn, item["observation_id"])
        if obs is None or dec is None:
            return None
        text, role, created, context, meta = "", None, None, (), None
        cid, mid = obs["conversation_id"], obs["message_id"]
        if obs["unit_kind"] == "note_version":
            # the version's own content: the quote of its provenance is this version's text (I93)
            text = isql.note_version_text(self.conn, obs["source_version_id"] or "") or ""
            role = "user"
            turns = self._conversation(cid) if cid else []
            created = next((t["created_at_utc"] for t in turns if t["message_id"] == mid), None)
        elif obs["unit_kind"] in ("message", "mail", "calendar_event") and mid:
            turns = self._conversation(cid) if cid else []
            idx = next((i for i, t in enumerate(turns) if t["message_id"] == mid), None)
            if idx is None:
                return None
            m = turns[idx]
            text, role, created = m["text_raw"] or "", m["role"], m["created_at_utc"]
            n = self.config.intake.context_turns
            context = tuple({"role": t["role"], "text": t["text_raw"] or "", "message_id": t["message_id"]}
                            for t in turns[max(0, idx - n):idx]) if n else ()
            if obs["unit_kind"] == "calendar_event" and cid:
                meta = isql.part_metadata(self.conn, cid).get(mid, {})
        elif obs["unit_kind"] == "conversation" and cid:
            conv = next((c for c in isql.find_conversations(self.conn, cid)), None)
            text = (conv or {}).get("title") or ""
        return seam.Observation(
            observation_id=obs["observation_id"], unit_kind=obs["unit_kind"], text=text, role=role,
            conversation_id=cid, message_id=mid, created_at=created or obs["observed_at"],
            persistence_mode=dec["persistence_mode"], critical=item["priority"] == "critical", context=context,
            surface=obs["surface"], meta=meta)

    def _conversation(self, cid: str) -> list[dict[str, Any]]:
        if cid not in self._turns:
            if len(self._turns) > 256:
                self._turns.clear()
            self._turns[cid] = isql.message_units(self.conn, cid)
        return self._turns[cid]

    # ---- the run ---------------------------------------------------------------------------------------------

    def run(self, limit: int | None = None, progress: Any = None) -> Counter:
        self.counts.update(recover_crashed(self.conn, self.config, self.now))
        self.counts.update(expire_old(self.conn, self.now))
        items = isql.runnable(self.conn)
        for i, item in enumerate(items):
            if limit is not None and self.counts["extractions"] >= limit:
                self.counts["left_queued"] += len(items) - i
                break
            self.one(item)
            if progress is not None and (i + 1) % 50 == 0:
                progress(records=i + 1, file="extraction queue")
        return self.counts

    def one(self, item: dict[str, Any]) -> None:
        pid = item["pending_id"]
        if item["priority"] == "deferred":
            # A deferred deep item waits for a free slot of a later day; it is never dropped (§23, I9).
            if not self.budget.deep_ok():
                self.counts["still_deferred"] += 1
                return
            self.budget.take_deep()
            isql.set_pending(self.conn, pid, priority="normal", updated_at=self.now)
            item = {**item, "priority": "normal"}
            self.counts["deferred_resumed"] += 1
        obs = self.observation(item)
        if obs is None:
            isql.set_pending(self.conn, pid, status="failed", error_code="observation_missing", updated_at=self.now)
            self.counts["failed"] += 1
            return
        if obs.conversation_id and obs.conversation_id in self.incognito:
            isql.set_pending(self.conn, pid, status="failed", error_code="incognito_mode", updated_at=self.now)
            self.counts["cancelled_incognito"] += 1
            return
        retries, depth = item["retries"], item["depth"]
        while True:
            isql.set_pending(self.conn, pid, status="running", updated_at=self.now, retries=retries, depth=depth)
            error = self.attempt(item, obs, depth, retries)
            if error is None:
                return
            retries += 1
            if retries < item["max_retries"]:
                continue
            if depth == "deep":
                # §20A.3: deep out of retries → shallow with a fresh retry count.
                depth, retries = "shallow", 0
                self.counts["downgraded_to_shallow"] += 1
                continue
            if item["priority"] == "critical":
                # stale_archived is forbidden for the critical lane (§20A.3, §24).
                isql.set_pending(self.conn, pid, status="failed", error_code=error, retries=retries,
                                 updated_at=self.now)
                self.counts["failed"] += 1
            else:
                isql.set_pending(self.conn, pid, status="stale_archived", error_code=error, retries=retries,
                                 updated_at=self.now)
                self.counts["stale_archived"] += 1
            return

    def attempt(self, item: dict[str, Any], obs: seam.Observation, depth: str, retries: int) -> str | None:
        """One extraction: every extractor inside one savepoint (all of it commits or none of it, §20A.3), then
        the queue row's states and one audit record. Returns an error code, or None on success."""
        pid = item["pending_id"]
        sp = "intake_extraction"
        fallback = None
        llm = self.llm if depth == "deep" else None
        if depth == "deep" and self.llm is None:
            fallback = "deep_rules_fallback:no_model_configured"
        ctx = seam.ExtractionContext(self.conn, self.config, depth, self.now, llm)  # type: ignore[arg-type]
        results: list[seam.ExtractionResult] = []
        isql.savepoint(self.conn, sp)
        try:
            for name, fn in self.extractors.items():
                isql.savepoint(self.conn, "intake_extractor")
                res = fn(ctx, obs)
                if not isinstance(res, seam.ExtractionResult):
                    raise TypeError(f"extractor {name} returned {type(res).__name__}, not ExtractionResult")
                if obs.persistence_mode == "episodic_recall" and res.commit_ids:
                    # §20A.1 MUST: episodic content is never auto-promoted into the graph; the extractor's
                    # other work (a thread summary, say) would go with it, so it is all undone and said why.
                    isql.rollback_to(self.conn, "intake_extractor")
                    res = seam.ExtractionResult(name, skipped_reason="episodic_not_promoted")
                    self.counts["episodic_promotions_blocked"] += 1
                else:
                    isql.release(self.conn, "intake_extractor")
                results.append(res)
        except Exception as e:  # an extractor's failure is this extraction's failure, audited, never the stage's
            isql.rollback_to(self.conn, sp)
            code = f"extractor_error:{type(e).__name__}"
            self.audit(item, obs, depth, retries, [], error=code, note=f"{str(e)[:300]}")
            self.counts["errors"] += 1
            return code
        isql.release(self.conn, sp)
        commit_ids = [c for r in results for c in r.commit_ids]
        isql.set_pending(self.conn, pid, status="extracted", updated_at=self.now)
        if commit_ids:
            isql.set_pending(self.conn, pid, status="write_committed", updated_at=self.now)
        calls = [c for r in results for c in r.model_call_ids]
        if calls:
            self.budget.spend(isql.model_call_usage(self.conn, calls))
        skipped = sorted({f"{r.extractor}:{r.skipped_reason}" for r in results if r.skipped_reason})
        if not self.extractors:
            skipped = ["no_extractors_registered"]
        self.audit(item, obs, depth, retries, results, error=fallback, note=";".join(skipped) or None)
        isql.set_pending(self.conn, pid, status="audited", error_code=None, updated_at=self.now, retries=retries,
                         depth=depth)
        self.counts["extractions"] += 1
        self.counts[f"extracted_{depth}"] += 1
        self.counts["commits"] += len(commit_ids)
        return None

    def audit(self, item: dict[str, Any], obs: seam.Observation, depth: str, retries: int,
              results: list[seam.ExtractionResult], *, error: str | None, note: str | None) -> str:
        dec = isql.get_decision(self.conn, obs.observation_id) or {}
        o = isql.get_observation(self.conn, obs.observation_id) or {}
        eid = extraction_id_for(item["pending_id"], depth, retries, len(isql.audits_of(self.conn, item["pending_id"])))
        commit_ids = [c for r in results for c in r.commit_ids]
        version = self.config.intake.queue.rules_version
        if depth == "deep" and self.llm is not None:
            version = f"{version}+model"
        ksql.insert_audit(self.conn, {
            "extraction_id": eid, "surface": o.get("surface", "chat"), "source_content_ref": o.get("source_ref", ""),
            "extraction_prompt_version": version, "significance_score": dec.get("score", 0.0),
            "dispatch_decision": depth, "skip_reason": note, "error_code": error, "retry_count": retries,
            "skip_content_fingerprint": None, "skip_entity_mentions": None,
            "items_extracted": sum(r.items for r in results), "items_promoted": len(commit_ids),
            "items_filtered_by_write_gate": 0, "knowledge_commit_ids": commit_ids, "extracted_at": self.now})
        isql.link_audit(self.conn, item["pending_id"], eid)
        return eid
