"""Drift detection after a raw file is edited, explicit drift marking, and `reindex --rebuild-beliefs` equality."""

from __future__ import annotations

import json
from pathlib import Path

from .beliefs_helpers import load_sidecar, save_sidecar, table_rows

from kenning.store import beliefs as sql

RFC = "raw/papers/acme-rfc-0034.md"
NEW, OLD = "b-2026-04-15-acme-auth-001", "b-2026-01-10-acme-auth-001"
QUOTE = "v2 moves the refresh endpoint to /auth/v2/refresh."


def test_editing_the_quoted_sentence_is_drift(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", "2026-04-20T00:00:00Z", db=db)
    ok = kenning("beliefs", "verify", "--json", db=db)
    assert json.loads(ok.stdout)["drifted"] == 0
    raw = acme / RFC
    raw.write_text(raw.read_text().replace(QUOTE, "v2 moves the refresh endpoint to /auth/refresh2."))
    proc = kenning("beliefs", "verify", db=db, check=False)
    assert proc.returncode == 3
    assert "1 drifted" in proc.stdout and NEW in proc.stdout and RFC in proc.stdout
    report = json.loads(kenning("beliefs", "verify", "--json", db=db, check=False).stdout)
    assert report["beliefs_with_drifted_quotes"] == [NEW]
    [d] = report["drifted_quotes"]
    assert d["provenance_id"] == "prov-acme-rfc-0034-3" and d["status"] == "drifted"
    why = json.loads(kenning("why", "Acme OAuth refresh endpoint", "--json", db=db).stdout)
    [cur] = why["current_beliefs"]
    assert cur["belief_id"] == NEW   # still current: nothing marks it drifted but an explicit command
    assert cur["supporting_sources"][0]["verified_against_source"] is False
    assert "DRIFTED" in kenning("why", "Acme OAuth refresh endpoint", db=db).stdout
    # the hostile verifier will not accept the page again while its quote is gone
    again = kenning("ingest", str(acme), "--as-of", "2026-04-21T00:00:00Z", db=db, check=False)
    assert again.returncode == 2 and "quote_not_found" in again.stderr


def test_edits_elsewhere_in_the_file_keep_quotes_verified(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    raw = acme / RFC
    raw.write_text("Preface added after import.\n\n" + raw.read_text())
    s = vault.why(NEW)["current_beliefs"][0]["supporting_sources"][0]
    assert s["verified_against_source"] is True and s["verification"] == "relocated"
    report = vault.verify_beliefs()
    assert report["drifted"] == 0 and report["relocated"] == 1


def test_missing_raw_file_is_reported(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    (acme / RFC).unlink()
    report = vault.verify_beliefs()
    assert report["source_missing"] == 1 and report["beliefs_with_drifted_quotes"] == [NEW]
    assert vault.why(NEW)["current_beliefs"][0]["supporting_sources"][0]["verification"] == "source_missing"


def test_mark_drifted_only_on_request_and_it_survives_rebuild(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", "2026-04-20T00:00:00Z", db=db)
    raw = acme / RFC
    raw.write_text(raw.read_text().replace(QUOTE, "v3 is coming."))
    kenning("beliefs", "verify", db=db, check=False)
    assert json.loads(kenning("why", NEW, "--json", db=db).stdout)["current_beliefs"]
    marked = kenning("beliefs", "verify", "--mark-drifted", "--as-of", "2026-05-01T00:00:00Z", "--json", db=db,
                     check=False)
    assert marked.returncode == 3 and json.loads(marked.stdout)["beliefs_marked_drifted"] == 1
    ans = json.loads(kenning("why", "Acme OAuth refresh endpoint", "--json", db=db).stdout)
    assert ans["current_beliefs"] == []
    by_id = {b["belief_id"]: b for b in ans["history"]}
    assert by_id[NEW]["supersession_reason"] == "source_drifted"
    assert by_id[NEW]["superseded_at"] == "2026-05-01T00:00:00.000Z"
    raw.write_text(raw.read_text().replace("v3 is coming.", QUOTE))   # fix the file, then rebuild
    kenning("reindex", "--rebuild-beliefs", "--as-of", "2026-05-02T00:00:00Z", db=db)
    rebuilt = json.loads(kenning("why", NEW, "--json", db=db).stdout)
    assert rebuilt["history"][0]["supersession_reason"] == "source_drifted"   # your decision is kept (W9)


def test_reindex_rebuilds_identical_rows(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", "2026-04-20T00:00:00Z", db=db)
    # a later wiki run: the token lifetime is settled at 60 minutes (supersession applied from the sidecar)
    data = load_sidecar(acme, "wiki/topics/auth.md")
    fifteen = next(b for b in data["beliefs"] if b["belief_id"] == "b-2026-01-10-acme-auth-002")
    fifteen.update(superseded_by_belief_id="b-2026-03-20-acme-auth-003", supersession_reason="contradicted_by_new_source")
    save_sidecar(acme, "wiki/topics/auth.md", data)
    kenning("ingest", str(acme), "--as-of", "2026-05-10T00:00:00Z", db=db)
    kenning("beliefs", "supersede", "b-2026-03-02-maya-001", "b-2026-05-02-acme-deploy-002", "--reason",
            "manual_correction", "--as-of", "2026-05-11T00:00:00Z", db=db)

    from kenning.api import Vault

    with Vault.open(db) as v:
        before = table_rows(v.conn, "wiki_beliefs", "belief_id")
        links = table_rows(v.conn, "belief_provenance", "belief_id, provenance_id")
        superseded = {r[0]: r for r in v.conn.execute(
            "SELECT belief_id, superseded_at, superseded_in_run, asserted_in_run FROM wiki_beliefs WHERE belief_id=?",
            ("b-2026-01-10-acme-auth-002",))}
        second_run = v.conn.execute("SELECT run_id FROM runs WHERE stage='wiki' AND started_at_utc LIKE '2026-05-10%'"
                                    ).fetchone()[0]
        v.conn.execute("DELETE FROM wiki_beliefs")
        assert v.conn.execute("SELECT COUNT(*) FROM wiki_beliefs").fetchone()[0] == 0
    # no superseded_at in the sidecar: it ends when its successor was asserted (W5); the run that applied it is
    # the second one, and a rebuild must keep that
    _, at, in_run, asserted_in = superseded["b-2026-01-10-acme-auth-002"]
    assert at == "2026-03-20T00:00:00.000Z" and in_run == second_run != asserted_in
    out = kenning("reindex", "--rebuild-beliefs", "--as-of", "2026-06-01T00:00:00Z", db=db)
    assert "beliefs-rebuild" in out.stderr
    with Vault.open(db) as v:
        assert table_rows(v.conn, "wiki_beliefs", "belief_id") == before
        assert table_rows(v.conn, "belief_provenance", "belief_id, provenance_id") == links
        assert sql.fts_integrity(v.conn)
        assert v.why("failover")["match_type"] == "fts"
    # and a rebuild over a full table is a no-op
    kenning("reindex", "--rebuild-beliefs", "--as-of", "2026-06-02T00:00:00Z", db=db)
    with Vault.open(db) as v:
        assert table_rows(v.conn, "wiki_beliefs", "belief_id") == before


def test_reindex_skips_missing_or_unparseable_sidecars_with_a_warning(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", "2026-04-20T00:00:00Z", db=db)
    (acme / "wiki/people/maya.beliefs.json").unlink()
    (acme / "wiki/topics/deploy.beliefs.json").write_text('{"page": "wiki/topics/deploy.md", "beliefs": [')
    res = json.loads(kenning("reindex", "--rebuild-beliefs", "--as-of", "2026-06-01T00:00:00Z", "--json",
                             db=db).stdout)
    run, feeds = res["runs"]
    assert feeds["stage"] == "beliefs-rebuild-feeds" and feeds["counts"]["beliefs_deleted"] == 0
    assert {"SIDECAR_MISSING_SKIPPED", "SIDECAR_UNPARSEABLE_SKIPPED"} <= set(run["warnings"])
    assert run["counts"]["pages_skipped"] == 2
    listed = json.loads(kenning("beliefs", "list", "--json", db=db).stdout)
    assert {b["topic"] for b in listed["beliefs"]} == {"auth"}
    # the same folder through `kenning ingest` is rejected, not skipped
    proc = kenning("ingest", str(acme), "--as-of", "2026-06-02T00:00:00Z", db=db, check=False)
    assert proc.returncode == 2 and "missing_sidecar" in proc.stderr and "unparseable_sidecar" in proc.stderr


def test_removed_belief_leaves_the_ledger(vault, acme: Path):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    data = load_sidecar(acme, "wiki/topics/auth.md")
    data["beliefs"] = [b for b in data["beliefs"] if b["belief_id"] != "b-2026-03-20-acme-auth-003"]
    save_sidecar(acme, "wiki/topics/auth.md", data)
    page = acme / "wiki/topics/auth.md"
    page.write_text(page.read_text().replace(",[^3] but the March security review found\nthem living for 60 "
                                             "minutes in production.[^4]", ".[^3]"))
    [r] = vault.ingest([acme], as_of="2026-05-01T00:00:00Z")
    assert r.counts["beliefs_removed"] == 1 and any(e[3] == "BELIEF_REMOVED" for e in r.events)
    assert vault.why("Acme access token lifetime")["current_beliefs"][0]["contradicting_belief_ids"] == []
