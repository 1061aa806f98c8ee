"""Issue 18 part 3: pending_extractions states, crash recovery, deep→shallow fallback, the critical lane never
archived, the daily budget deferring instead of dropping, audit records linking commits, and the CLI."""

from __future__ import annotations

import json

from kenning.api import Vault
from kenning.intake import extractors as seam
from kenning.intake.drain import Drain, recover_crashed
from kenning.intake.funnel import assess_chat, make_funnel
from kenning.pipeline.clock import Clock
from kenning.store import intake as isql
from kenning.store.connection import transaction
from tests.conftest import run_cli
from tests.intake.helpers import AS_OF, HASH, failing_extractor, remember_extractor, two_conversations

NOW = Clock.from_option(AS_OF).now()
BEFORE_THE_DRAIN = "0,1,2A,2B,3,4,5,knowledge,intake"


def vault_with_queue(tmp_path, overrides=None) -> Vault:
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, **(overrides or {})})
    v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=BEFORE_THE_DRAIN)
    return v


def drain(v: Vault, extractors, now: str = NOW, llm=None):
    with transaction(v.conn):
        return Drain(v.conn, v.config, now, llm, extractors).run()


def test_pending_rows_are_seed_shaped_and_end_audited(tmp_path):
    v = vault_with_queue(tmp_path)
    try:
        rows = isql.queue_rows(v.conn, limit=100)
        assert rows and {r["status"] for r in rows} == {"queued"}
        assert {r["priority"] for r in rows} <= {"critical", "normal", "deferred"}
        assert all(r["retries"] == 0 and r["max_retries"] == 3 and r["max_age_hours"] == 168 for r in rows)
        assert len({r["idempotency_key"] for r in rows}) == len(rows)
        order = [r["priority"] for r in isql.runnable(v.conn)]
        assert order[0] == "critical" and order == sorted(order, key=["critical", "normal", "deferred"].index)
        counts = drain(v, {"test_remember": remember_extractor})
        assert counts["extractions"] == len(rows)
        after = isql.queue_rows(v.conn, limit=100)
        assert {r["status"] for r in after} == {"audited"}
        # one audit per extraction, linked from its queue row; deep with no model says it ran the rules
        for r in after:
            (eid,) = isql.audits_of(v.conn, r["pending_id"])
            a = v.conn.execute("SELECT dispatch_decision, error_code FROM extraction_audit WHERE extraction_id=?",
                               (eid,)).fetchone()
            assert a[0] == r["depth"]
            assert a[1] == ("deep_rules_fallback:no_model_configured" if r["depth"] == "deep" else None)
        assert isql.runnable(v.conn) == []
    finally:
        v.close()


def test_crash_recovery_requeues_then_fails_exhausted(tmp_path):
    v = vault_with_queue(tmp_path)
    try:
        rows = isql.queue_rows(v.conn, limit=3)
        a, b, c = (r["pending_id"] for r in rows)
        with transaction(v.conn):
            isql.set_pending(v.conn, a, status="running", updated_at="2024-05-31T23:40:00.000Z")  # 20 min ago
            isql.set_pending(v.conn, b, status="running", updated_at="2024-05-31T23:40:00.000Z", retries=3)
            isql.set_pending(v.conn, c, status="running", updated_at="2024-05-31T23:55:00.000Z")  # 5 min: alive
            counts = recover_crashed(v.conn, v.config, NOW)
        assert counts == {"crash_requeued": 1, "crash_failed": 1}
        ra, rb, rc = (isql.get_pending(v.conn, p) for p in (a, b, c))
        assert (ra["status"], ra["retries"]) == ("queued", 1)
        assert (rb["status"], rb["error_code"]) == ("failed", "crash_recovery_exhausted")
        assert rc["status"] == "running"
    finally:
        v.close()


def test_failing_deep_downgrades_to_shallow_then_archives_but_never_critical(tmp_path):
    v = vault_with_queue(tmp_path)
    try:
        rows = {r["pending_id"]: r for r in isql.queue_rows(v.conn, limit=100)}
        counts = drain(v, {"broken": failing_extractor})
        after = {p: isql.get_pending(v.conn, p) for p in rows}
        crit = [p for p, r in rows.items() if r["priority"] == "critical"]
        normal_deep = [p for p, r in rows.items() if r["priority"] == "normal" and r["depth"] == "deep"]
        assert crit and normal_deep
        for p in crit:  # §24: never stale_archived
            assert after[p]["status"] == "failed" and after[p]["error_code"] == "extractor_error:RuntimeError"
        for p in normal_deep:  # deep out of retries → shallow, fresh retries → out again → stale_archived
            assert after[p]["status"] == "stale_archived" and after[p]["depth"] == "shallow"
            audits = isql.audits_of(v.conn, p)
            assert len(audits) == 6  # 3 deep attempts + 3 shallow attempts, each audited
        assert counts["downgraded_to_shallow"] == len(normal_deep) + len(crit)
        # nothing the broken extractor touched survived (each extraction is all-or-nothing)
        assert v.conn.execute("SELECT COUNT(*) FROM knowledge_commits WHERE source_event='test.extract'"
                              ).fetchone()[0] == 0
    finally:
        v.close()


def test_budget_defers_deep_work_and_resumes_it_the_next_day(tmp_path):
    """With a model configured, deep work over the day's slots waits as 'deferred' (never dropped) and runs when
    a later day has room; the critical lane keeps its reserved slots."""
    cfg = {"intake": {"budget": {"deep_max_total": 3, "reserved_critical_slots": 2},
                      "calibration": {"first_week_deep_max_total": 3}}}
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, **cfg})
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages="0,1,2A,2B,3,4,5,knowledge")
        with transaction(v.conn):
            f = make_funnel(v.conn, v.config, NOW, "run-test", model_configured=True)
            assess_chat(f)
        decs = isql.decisions(v.conn)
        deferred = [d for d in decs if d["decision"] == "defer"]
        crit = [d for d in decs if "critical_lane" in d["reason_codes"]]
        assert deferred and all(d["reason_codes"] == ["budget_deferred"] for d in deferred)
        assert len(crit) == 3 and sum(d["decision"] == "deep" for d in crit) >= 2
        day = isql.budget_days(v.conn)[0]
        assert day["deep_used"] == 3 and day["deferred"] == len(deferred)
        deferred_rows = [r for r in isql.queue_rows(v.conn, limit=100) if r["priority"] == "deferred"]
        assert len(deferred_rows) == len(deferred)
        # same day: they wait
        counts = drain(v, {"test_remember": remember_extractor}, llm=object())
        assert counts["still_deferred"] == len(deferred)
        # later days: they run, as many a day as the day's normal (unreserved) slots allow
        resumed = 0
        for day in ("2024-06-02", "2024-06-03", "2024-06-04"):
            counts = drain(v, {"test_remember": remember_extractor}, now=f"{day}T00:00:00.000Z", llm=object())
            assert counts.get("deferred_resumed", 0) <= 1   # deep_max_total 3 - reserved_critical_slots 2
            resumed += counts.get("deferred_resumed", 0)
        assert resumed == len(deferred)
        assert {r["status"] for r in isql.queue_rows(v.conn, limit=100)} == {"audited"}
    finally:
        v.close()


def test_without_a_model_over_budget_deep_runs_shallow_now(tmp_path):
    cfg = {"intake": {"budget": {"deep_max_total": 1, "reserved_critical_slots": 0},
                      "calibration": {"first_week_deep_max_total": 1}}}
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, **cfg})
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=BEFORE_THE_DRAIN)
        decs = isql.decisions(v.conn)
        assert not [d for d in decs if d["decision"] == "defer"]
        waited = [d for d in decs if "budget_deferred" in d["reason_codes"]]
        assert waited and {d["decision"] for d in waited} == {"shallow"}
    finally:
        v.close()


def test_cli_queue_mine_and_mode(tmp_path):
    db = tmp_path / "v.db"
    export = two_conversations(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n", encoding="utf-8")
    run_cli("ingest", str(export), "--as-of", AS_OF, "--stages", BEFORE_THE_DRAIN, "--config", str(cfg), "-q",
            db=db)
    q = json.loads(run_cli("queue", "--json", "--config", str(cfg), db=db).stdout)
    queued = q["by_status"]["queued"]
    assert queued > 0 and q["next"][0]["priority"] == "critical"
    assert any(k.startswith("skip:") for k in q["decisions"])
    text = run_cli("queue", "--config", str(cfg), db=db).stdout
    assert "extraction queue" in text and "critical" in text
    mined = json.loads(run_cli("mine", "--json", "--as-of", AS_OF, "--config", str(cfg), db=db).stdout)
    extract = mined["runs"][-1]
    assert extract["stage"] == "extract" and extract["counts"]["extractions"] == queued
    q2 = json.loads(run_cli("queue", "--json", "--config", str(cfg), db=db).stdout)
    assert q2["by_status"] == {"audited": queued}
    # mode: incognito a conversation by the export's id, show it, clear it
    out = json.loads(run_cli("mode", "incognito", "conv-secret", "--json", "--as-of", AS_OF, "--config", str(cfg),
                             db=db).stdout)
    assert out["rules_set"] == 1
    shown = json.loads(run_cli("mode", "show", "--json", "--config", str(cfg), db=db).stdout)
    assert [c["title"] for c in shown["incognito_conversations"]] == ["Private journal"]
    assert "Private journal" in run_cli("mode", "show", "--config", str(cfg), db=db).stdout
    bad = run_cli("mode", "incognito", "no-such-conv", "--config", str(cfg), db=db, check=False)
    assert bad.returncode != 0 and "no conversation 'no-such-conv'" in (bad.stdout + bad.stderr)
    cleared = json.loads(run_cli("mode", "clear", "conv-secret", "--json", "--config", str(cfg), db=db).stdout)
    assert cleared["rules_cleared"] == 1
    assert json.loads(run_cli("mode", "show", "--json", "--config", str(cfg), db=db).stdout)[
        "incognito_conversations"] == []
    # by its exact title, case-insensitive, as `kenning forget --conversation` takes it (I170)
    by_title = json.loads(run_cli("mode", "incognito", "private JOURNAL", "--json", "--as-of", AS_OF, "--config",
                                  str(cfg), db=db).stdout)
    assert by_title["rules_set"] == 1 and by_title["conversation_id"] == out["conversation_id"]
    assert json.loads(run_cli("mode", "clear", "Private journal", "--json", "--config", str(cfg), db=db).stdout
                      )["rules_cleared"] == 1
    bad = run_cli("mode", "incognito", "Private", "--config", str(cfg), db=db, check=False)   # no partial titles
    assert bad.returncode != 0 and "exact title" in (bad.stdout + bad.stderr)


def test_old_normal_rows_expire_but_critical_and_deferred_never(tmp_path):
    v = vault_with_queue(tmp_path)
    try:
        rows = isql.queue_rows(v.conn, limit=100)
        crit = next(r["pending_id"] for r in rows if r["priority"] == "critical")
        normal = next(r["pending_id"] for r in rows if r["priority"] == "normal")
        with transaction(v.conn):
            isql.set_pending(v.conn, normal, priority="deferred")  # a deferred row waits, whatever its age
        later = "2024-06-09T00:00:01.000Z"  # 8 days: past the 168-hour default
        counts = drain(v, {}, now=later)
        assert counts["expired"] == sum(r["priority"] == "normal" for r in rows) - 1
        assert isql.get_pending(v.conn, crit)["status"] == "audited"
        assert isql.get_pending(v.conn, normal)["status"] in ("queued", "audited")
        expired = [r for r in isql.queue_rows(v.conn, limit=100) if r["status"] == "stale_archived"]
        assert expired and {r["error_code"] for r in expired} == {"max_age_exceeded"}
        assert {r["priority"] for r in expired} == {"normal"}
    finally:
        v.close()


def test_surface_caps_bind_per_surface(tmp_path):
    from kenning.intake.budget import DailyExtractionBudget

    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"budget": {"deep_max_notes": 1}}})
    try:
        with transaction(v.conn):
            b = DailyExtractionBudget(v.conn, v.config, NOW)
            assert b.deep_ok("note") and b.deep_ok("chat")
            b.take_deep(surface="note")
            assert not b.deep_ok("note") and b.deep_ok("chat")
            again = DailyExtractionBudget(v.conn, v.config, NOW)  # stored, not only in memory
            assert not again.deep_ok("note") and again.as_dict()["deep_by_surface"] == {"note": 1}
    finally:
        v.close()


def test_deep_extraction_uses_the_configured_model_and_counts_its_tokens(tmp_path, llm_server, monkeypatch):
    """Deep work gets the run's model (a real OpenAI-compatible server on 127.0.0.1), shallow never does; the
    calls' tokens land in the day's budget and the audit names the model path."""
    from tests.conftest import TEST_KEY
    from tests.llm_helpers import AtomizerOutput, atomizer_responder

    seen: list[tuple[str, bool]] = []

    def asks_the_model(ctx, obs):
        res = seam.ExtractionResult("asks_the_model")
        seen.append((ctx.depth, ctx.llm is not None))
        if ctx.llm is not None and obs.unit_kind == "message" and obs.role == "user":
            out = ctx.llm.structured("atomizer", {"candidates": [{"idx": 0, "text": obs.text}]}, AtomizerOutput,
                                     message_id=obs.message_id, item_key="0")
            res.model_call_ids.extend(out.call_ids)
            res.items = len(out.value.atoms) if out.ok else 0
        return res

    llm_server.default_chat = atomizer_responder
    monkeypatch.setattr(seam, "registered", lambda: {"asks_the_model": asks_the_model})
    over = {**HASH, "llm": {"base_url": llm_server.base_url, "model": "scripted", "api_key": TEST_KEY,
                            "timeout_s": 5, "backoff_initial_s": 0.001, "backoff_max_s": 0.01}}
    v = Vault.open(tmp_path / "v.db", overrides=over)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages="0,1,2A,2B,3,knowledge,intake,extract",
                 llm="live")
        assert ("deep", True) in seen and ("shallow", False) in seen and ("shallow", True) not in seen
        assert llm_server.chat_requests
        day = isql.budget_days(v.conn)[0]
        assert day["tokens_used"] > 0
        versions = {r[0] for r in v.conn.execute(
            "SELECT extraction_prompt_version FROM extraction_audit WHERE dispatch_decision='deep'")}
        assert versions == {"intake_rules_v1+model"}
        assert v.conn.execute("SELECT COUNT(*) FROM extraction_audit WHERE error_code LIKE 'deep_rules_fallback%'"
                              ).fetchone()[0] == 0
    finally:
        v.close()
