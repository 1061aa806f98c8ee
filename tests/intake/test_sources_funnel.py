"""Issue 18 (b): notes, mail and calendar events go through the same funnel as chat — an envelope per note version,
mail and event with the seed's dedup key, one dispatch decision each (the note session-close rules and the
calendar/mail rules as reason codes), queued in pending_extractions, drained into the same miners, with provenance
to the quote and the audit record; re-imports add nothing; bad records are rejected alone; incognito folders are
never mined (decisions I90–I95)."""

from __future__ import annotations

import json
from pathlib import Path

from kenning.api import Vault
from kenning.store.connection import rows, scalar
from tests.conftest import run_kenning

HASH = {"embeddings": {"backend": "hash"}}
STAGES = "0,1,intake,extract"
SELF = {"corpus": {"mail": {"self_addresses": ["sam@example.com"]}}}

NOTE = """---
date: 2024-05-01
---
# Tax plan

My goal is to get my finances in order this year. I have to file the tax return by July 31.
Whenever a bank statement arrives, file it in the Finance folder and tell me the balance.
Always answer me in British English when we talk about money.
"""

MBOX = """From billing@utility.example Mon Mar  4 10:00:00 2024
From: City Power <billing@utility.example>
To: Sam Rivera <sam@example.com>
Subject: Your invoice
Date: Mon, 04 Mar 2024 10:00:00 +0000
Message-ID: <inv-1@utility.example>
Content-Type: text/plain; charset=utf-8

Dear customer,

Your invoice INV-2041 is due on March 20. Thank you for choosing City Power.

From sam@example.com Mon Mar  4 12:30:00 2024
From: Sam Rivera <sam@example.com>
To: City Power <billing@utility.example>
Subject: Re: Your invoice
Date: Mon, 04 Mar 2024 12:30:00 +0000
Message-ID: <inv-2@example.com>
In-Reply-To: <inv-1@utility.example>
References: <inv-1@utility.example>
Content-Type: text/plain; charset=utf-8

Thanks. I have to renew my parking permit by April 2 as well, so I will pay both then.

From news@shop.example Tue Mar  5 08:00:00 2024
From: Shop <news@shop.example>
To: Sam Rivera <sam@example.com>
Subject: Spring sale
Date: Tue, 05 Mar 2024 08:00:00 +0000
Message-ID: <sale-1@shop.example>

Would you like 20% off? Our spring sale starts today.

From nobody Tue Mar  5 09:00:00 2024
To: Sam Rivera <sam@example.com>
Subject: No sender
Date: Tue, 05 Mar 2024 09:00:00 +0000
Message-ID: <bad-1@example.net>

The payment is due on March 30.
"""

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example//Calendar//EN
BEGIN:VEVENT
UID:dentist@example.com
DTSTART;TZID=Europe/Lisbon:20240412T093000
DTEND;TZID=Europe/Lisbon:20240412T101500
SUMMARY:Dentist appointment
LOCATION:Rua Augusta 10
END:VEVENT
BEGIN:VEVENT
UID:standup@example.com
DTSTART:20240311T090000Z
DTEND:20240311T091500Z
RRULE:FREQ=WEEKLY;BYDAY=MO
SUMMARY:Team standup
ORGANIZER;CN=Mia Chen:mailto:mia@globex.example
END:VEVENT
BEGIN:VEVENT
UID:broken@example.com
SUMMARY:An event without a start
END:VEVENT
END:VCALENDAR
"""


def _write(tmp_path: Path) -> dict[str, Path]:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text(NOTE)
    (notes / "todo.md").write_text("buy milk\n")     # a placeholder: kept, never mined
    (notes / "latin1.md").write_bytes("Caf\u00e9 notes: I have to pay the caf\u00e9 bill by June 1.\n".encode("latin-1"))
    (tmp_path / "mail.mbox").write_text(MBOX)
    (tmp_path / "cal.ics").write_text(ICS)
    return {"notes": notes, "mail": tmp_path / "mail.mbox", "ics": tmp_path / "cal.ics"}


def funnel_rows(conn, surface: str | None = None) -> list[dict]:
    out = rows(conn, "SELECT o.surface, o.unit_kind, o.source_ref, o.source_version_id, o.dedup_key, d.decision, "
                     "d.reason_codes, d.persistence_mode, p.status AS queue_status FROM intake_observations o "
                     "JOIN intake_dispatch_decisions d USING (observation_id) "
                     "LEFT JOIN pending_extractions p ON p.observation_id = o.observation_id "
                     "ORDER BY o.surface, o.unit_kind, o.source_ref, o.source_version_id")
    for r in out:
        r["reason_codes"] = json.loads(r["reason_codes"])
    return [r for r in out if surface is None or r["surface"] == surface]


def nodes(conn, kind: str) -> dict[str, dict]:
    return {r["canonical_name"]: r for r in rows(conn, "SELECT * FROM nodes WHERE node_kind=? ORDER BY 1", (kind,))}


def quotes(conn, name: str) -> list[tuple[str, str]]:
    return [(r["entry_type"], r["verbatim_excerpt"]) for r in rows(
        conn, "SELECT p.entry_type, p.verbatim_excerpt FROM provenance_entries p JOIN nodes n ON n.id = p.node_id "
              "WHERE n.canonical_name=? ORDER BY p.entry_type", (name,))]


def counts_of(conn) -> dict[str, int]:
    return {t: scalar(conn, f"SELECT count(*) FROM {t}") for t in
            ("intake_observations", "intake_dispatch_decisions", "pending_extractions", "nodes", "knowledge_commits",
             "extraction_audit")}


def audited(conn, source_ref: str) -> list[dict]:
    return rows(conn, "SELECT dispatch_decision, skip_reason, knowledge_commit_ids FROM extraction_audit "
                      "WHERE source_content_ref=? ORDER BY extracted_at, extraction_id", (source_ref,))


def test_note_versions_are_observations_and_the_session_close_rules_are_reason_codes(tmp_path):
    paths = _write(tmp_path)
    plan = paths["notes"] / "plan.md"
    with Vault.open(tmp_path / "v.db", overrides=HASH) as v:
        v.ingest([paths["notes"]], as_of="2024-05-01T10:00:00Z", stages=STAGES, llm="none")
        notes = funnel_rows(v.conn, "note")
        assert sorted((r["unit_kind"], r["decision"], r["reason_codes"]) for r in notes) == [
            ("note_version", "deep", ["score_dispatch", "deep_first_write"]),
            ("note_version", "skip", ["score_dispatch", "skip_placeholder"])]
        # a note that is not UTF-8 is rejected alone (file, record, reason); the rest is observed and mined
        assert [(Path(r["source_path"]).name, r["reason_code"]) for r in rows(
            v.conn, "SELECT source_path, reason_code FROM rejects WHERE action='skipped'")] == [("latin1.md", "NOT_UTF8")]
        deep = next(r for r in notes if r["decision"] == "deep")
        assert deep["queue_status"] == "audited" and deep["persistence_mode"] == "durable_graph"
        skip = next(r for r in notes if r["decision"] == "skip")
        assert skip["queue_status"] is None        # a skip is never queued, but it is audited with its reason
        assert audited(v.conn, skip["source_ref"])[0]["skip_reason"] == "score_dispatch,skip_placeholder"
        # the note's version id is its source_version_id: the seed's dedup key names the version
        assert deep["source_version_id"] == scalar(v.conn, "SELECT version_id FROM note_versions WHERE path='plan.md'")
        # one mined node of each class the note states, with provenance to the quote in the note (§20B.11 entry)
        assert nodes(v.conn, "goal")["get my finances in order"]["lifecycle_state"] == "managed"
        assert quotes(v.conn, "file the tax return") == [
            ("learned_from_note", "I have to file the tax return by July 31.")]
        assert "a bank statement arrives → file it in the Finance folder and tell me the balance" in \
            nodes(v.conn, "standing_procedure")
        assert nodes(v.conn, "memory_directive")
        commits = json.loads(audited(v.conn, deep["source_ref"])[0]["knowledge_commit_ids"])
        assert len(commits) == 4                   # the audit links every commit of the extraction

        # re-import unchanged: no new observation, no new node, nothing queued
        before = counts_of(v.conn)
        v.ingest([paths["notes"]], as_of="2024-05-01T10:05:00Z", stages=STAGES, llm="none")
        assert counts_of(v.conn) == before

        # a micro-edit is a new version, observed and skipped with the session-close rule as its reason
        plan.write_text(NOTE + "ok\n")
        v.ingest([paths["notes"]], as_of="2024-05-01T11:00:00Z", stages=STAGES, llm="none")
        latest = [r for r in funnel_rows(v.conn, "note") if r["source_ref"] == deep["source_ref"]]
        assert len(latest) == 2
        assert {r["reason_codes"][-1] for r in latest} == {"deep_first_write", "skip_micro_edit"}
        assert counts_of(v.conn)["nodes"] == before["nodes"]

        # a real addition is mined; the goal stated again is the same node (no duplicate)
        plan.write_text(NOTE + "ok\nMy goal is to get my finances in order this year. I need to pay the "
                               "plumber by June 3 and send the insurance form before June 10.\n")
        v.ingest([paths["notes"]], as_of="2024-05-02T09:00:00Z", stages=STAGES, llm="none")
        third = [r for r in funnel_rows(v.conn, "note") if r["source_ref"] == deep["source_ref"]]
        assert len(third) == 3 and {r["decision"] for r in third} == {"deep", "skip"}
        assert len([n for n in nodes(v.conn, "goal") if "finances" in n]) == 1
        assert "pay the plumber" in nodes(v.conn, "obligation")


def test_mail_through_the_funnel_with_candidates_from_senders(tmp_path):
    paths = _write(tmp_path)
    with Vault.open(tmp_path / "v.db", overrides={**HASH, **SELF}) as v:
        v.ingest([paths["mail"]], as_of="2024-03-06T00:00:00Z", stages=STAGES, llm="none")
        mail = [r for r in funnel_rows(v.conn, "email") if r["unit_kind"] == "mail"]
        assert len(mail) == 3                      # the mail without From: is rejected alone
        assert scalar(v.conn, "SELECT reason_code FROM rejects WHERE action='skipped'") == "MISSING_SENDER"
        by_reason = {tuple(r["reason_codes"]): r for r in mail}
        sender = by_reason[("score_dispatch", "mail_deadline_from_sender")]
        assert sender["decision"] == "shallow" and sender["queue_status"] == "audited"
        # someone else's "due on …" is an obligation candidate with the mail's quote; the user's own mail is theirs
        inv = nodes(v.conn, "obligation")["invoice INV-2041"]
        assert (inv["lifecycle_state"], inv["lifecycle_substate"]) == ("suggested", "candidate")
        assert json.loads(inv["payload"])["deadline"]["date"] == "2024-03-20T23:59:00+00:00"
        assert quotes(v.conn, "invoice INV-2041") == [
            ("learned_from_email", "Your invoice INV-2041 is due on March 20.")]
        permit = nodes(v.conn, "obligation")["renew my parking permit"]
        assert (permit["lifecycle_state"], permit["lifecycle_substate"]) == ("managed", "active")
        # a newsletter with a question is observed and decided, and mines nothing
        assert set(nodes(v.conn, "obligation")) == {"invoice INV-2041", "renew my parking permit"}
        before = counts_of(v.conn)
        v.ingest([paths["mail"]], as_of="2024-03-07T00:00:00Z", stages=STAGES, llm="none")
        assert counts_of(v.conn) == before


def test_calendar_events_through_the_funnel(tmp_path):
    paths = _write(tmp_path)
    with Vault.open(tmp_path / "v.db", overrides=HASH) as v:
        v.ingest([paths["ics"]], as_of="2024-03-06T00:00:00Z", stages=STAGES, llm="none")
        cal = funnel_rows(v.conn, "calendar")
        assert sorted((r["unit_kind"], r["decision"], r["reason_codes"][-1]) for r in cal) == [
            ("calendar_event", "deep", "calendar_binding_event"),
            ("calendar_event", "shallow", "calendar_recurring_routine")]
        assert all(r["queue_status"] == "audited" for r in cal)
        assert scalar(v.conn, "SELECT reason_code FROM rejects WHERE action='skipped'") == "NO_START"
        dentist = nodes(v.conn, "obligation")["Dentist appointment"]
        assert (dentist["lifecycle_state"], dentist["lifecycle_substate"]) == ("suggested", "candidate")
        # due at the event's start, in the event's own zone
        assert json.loads(dentist["payload"])["deadline"]["date"] == "2024-04-12T09:30:00+01:00"
        assert quotes(v.conn, "Dentist appointment") == [("learned_from_calendar", "Dentist appointment")]
        assert "Team standup" not in nodes(v.conn, "obligation")   # routine, not an obligation
        before = counts_of(v.conn)
        v.ingest([paths["ics"]], as_of="2024-03-07T00:00:00Z", stages=STAGES, llm="none")
        assert counts_of(v.conn) == before


def test_an_incognito_folder_is_observed_but_never_mined(tmp_path):
    paths = _write(tmp_path)
    over = {**HASH, "intake": {"incognito": {"folders": [str(paths["notes"])]}}}
    with Vault.open(tmp_path / "v.db", overrides=over) as v:
        v.ingest([paths["notes"], paths["ics"]], as_of="2024-05-01T10:00:00Z", stages=STAGES, llm="none")
        notes = funnel_rows(v.conn, "note")
        assert notes and all(r["decision"] == "skip" and r["reason_codes"] == ["incognito_mode"] for r in notes)
        assert not [r for r in rows(v.conn, "SELECT * FROM extraction_audit WHERE surface='note'")
                    if r["skip_content_fingerprint"]]
        assert set(nodes(v.conn, "obligation")) == {"Dentist appointment"}   # the calendar is not incognito
        assert not nodes(v.conn, "goal")


def test_cli_ingest_mines_every_source_by_default(tmp_path):
    """The real CLI: a default ingest observes, queues and drains every source; `kenning queue --json` counts the
    surfaces; a second ingest adds nothing."""
    paths = _write(tmp_path)
    db = tmp_path / "cli.db"
    cfg = tmp_path / "k.yaml"
    cfg.write_text("embeddings:\n  backend: hash\ncorpus:\n  mail:\n    self_addresses: [sam@example.com]\n")
    common = ["--db", str(db), "--config", str(cfg), "--llm", "none"]
    args = [str(paths["notes"]), str(paths["mail"]), str(paths["ics"])]
    r = run_kenning("ingest", *args, "--as-of", "2024-05-01T10:00:00Z", "--json", *common)
    assert r.returncode == 0, r.stderr
    q = run_kenning("queue", "--json", "--db", str(db), "--config", str(cfg))
    assert q.returncode == 0, q.stderr
    o = run_kenning("obligations", "--json", "--db", str(db), "--config", str(cfg))
    assert o.returncode == 0, o.stderr
    shown = {x["name"]: x for x in json.loads(o.stdout)}
    assert shown["Dentist appointment"]["lifecycle_substate"] == "candidate"     # a candidate, said so
    assert shown["file the tax return"]["lifecycle_state"] == "managed"          # the note's own words
    # the .ics export says the same to a calendar app: a candidate is TENTATIVE, the user's own CONFIRMED (I174)
    from icalendar import Calendar

    ics = tmp_path / "due.ics"
    assert run_kenning("obligations", "--ics", str(ics), "--db", str(db), "--config", str(cfg)).returncode == 0
    status = {str(e["summary"]): str(e["status"]) for e in Calendar.from_ical(ics.read_bytes()).walk("VEVENT")}
    assert status["Due: Dentist appointment"] == "TENTATIVE" and status["Due: file the tax return"] == "CONFIRMED"
    with Vault.open(db, overrides=HASH) as v:
        surfaces = {r["surface"] for r in funnel_rows(v.conn)}
        assert surfaces == {"note", "email", "calendar"}
        kinds = {r["node_kind"] for r in rows(v.conn, "SELECT DISTINCT node_kind FROM nodes")}
        assert {"goal", "obligation", "standing_procedure", "memory_directive"} <= kinds
        before = counts_of(v.conn)
    r = run_kenning("ingest", *args, "--as-of", "2024-05-02T10:00:00Z", "--json", *common)
    assert r.returncode == 0, r.stderr
    with Vault.open(db, overrides=HASH) as v:
        assert counts_of(v.conn) == before


def test_the_funnel_over_every_source_is_deterministic(tmp_path):
    """Same inputs, config and frozen clock ⇒ the same observations, decisions, queue, audit and nodes in two
    separate vaults."""
    paths = _write(tmp_path)
    tables = ("intake_observations", "intake_dispatch_decisions", "pending_extractions", "extraction_audit")
    dumps = []
    for name in ("a.db", "b.db"):
        with Vault.open(tmp_path / name, overrides={**HASH, **SELF}) as v:
            v.ingest([paths["notes"], paths["mail"], paths["ics"]], as_of="2024-05-01T10:00:00Z", stages=STAGES,
                     llm="none")
            d = {t: rows(v.conn, f"SELECT * FROM {t} ORDER BY 1") for t in tables}
            for r in d["intake_observations"]:
                r.pop("run_id")   # a run id is the run's own, not content
            d["nodes"] = rows(v.conn, "SELECT id, node_kind, canonical_name, payload, lifecycle_state FROM nodes "
                                      "ORDER BY id")
            dumps.append(d)
    assert dumps[0] == dumps[1] and dumps[0]["nodes"]
