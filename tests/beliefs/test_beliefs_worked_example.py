"""Seed 002's worked example: the Acme OAuth refresh endpoint — current belief, superseded ancestor, the chain,
and "what did I think in April?"."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from .beliefs_helpers import write

from kenning.store import beliefs as sql

SUBJECT = "Acme OAuth refresh endpoint"
NEW, OLD = "b-2026-04-15-acme-auth-001", "b-2026-01-10-acme-auth-001"

# The sidecar exactly as printed in seed 002 "On-disk representation: belief sidecars".
SEED_SIDECAR = {
    "page": "wiki/topics/auth.md",
    "page_anchor_root": "#",
    "beliefs": [
        {"belief_id": NEW, "statement": "Acme's OAuth refresh endpoint is /auth/v2/refresh as of 2026-03-15.",
         "topic": "auth", "subject": SUBJECT, "predicate": "is_at", "object": "/auth/v2/refresh",
         "wiki_section_anchor": "#token-refresh-in-oauth-flow", "footnote_ids": ["2"],
         "provenance_ids": ["prov-acme-rfc-0034-3"], "source_valid_from": "2026-03-15", "source_valid_to": None},
        {"belief_id": OLD, "statement": "Acme's OAuth refresh endpoint is /oauth/refresh.", "topic": "auth",
         "subject": SUBJECT, "predicate": "is_at", "object": "/oauth/refresh",
         "wiki_section_anchor": "#token-refresh-in-oauth-flow", "footnote_ids": ["1"],
         "provenance_ids": ["prov-acme-api-v1-12"], "superseded_at": "2026-04-15",
         "superseded_by_belief_id": NEW, "supersession_reason": "contradicted_by_new_source"},
    ],
}


def test_why_subject_returns_current_history_chain(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    ans = vault.why(SUBJECT)
    assert ans["match_type"] == "subject"
    assert [b["belief_id"] for b in ans["current_beliefs"]] == [NEW]
    assert [b["belief_id"] for b in ans["history"]] == [OLD]
    assert ans["supersession_chain"] == [OLD, NEW]
    assert ans["contradicting_beliefs"] == []
    cur, old = ans["current_beliefs"][0], ans["history"][0]
    assert cur["statement"] == "Acme's OAuth refresh endpoint is /auth/v2/refresh as of 2026-03-15."
    assert cur["topic"] == "auth" and cur["asserted_at"].startswith("2026-04-15")
    assert cur["wiki_page"] == "wiki/topics/auth.md#token-refresh-in-oauth-flow"
    assert cur["source_valid_from"] == "2026-03-15"
    src = cur["supporting_sources"][0]
    assert src["raw_path"] == "raw/papers/acme-rfc-0034.md" and src["page_hint"] == 3
    assert src["quote"] == ("v2 moves the refresh endpoint to /auth/v2/refresh. The legacy path returns 301 "
                            "until 2026-12.")
    assert src["quote_hash"] == hashlib.sha256(src["quote"].encode()).hexdigest()
    assert src["verified_against_source"] is True and src["verified_at"]
    assert old["superseded_at"].startswith("2026-04-15") and old["asserted_at"].startswith("2026-01-10")
    assert old["superseded_by_belief_id"] == NEW
    assert old["supersession_reason"] == "contradicted_by_new_source"
    assert old["superseded_in_run"] and old["asserted_in_run"]
    assert old["supporting_sources"][0]["quote"] == "Token refresh is served at the path /oauth/refresh."
    assert old["supporting_sources"][0]["page_hint"] == 12
    assert old["supporting_sources"][0]["verified_against_source"] is True
    # the runs named are real run rows
    runs = {r[0] for r in vault.conn.execute("SELECT run_id FROM runs WHERE status='ok'")}
    assert {cur["asserted_in_run"], old["superseded_in_run"]} <= runs


def test_what_did_i_think_in_april(vault, acme):
    """The seed's single SQL filter, and the same question through why(since, until)."""
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    seed_rows = sql.believed_as_of(vault.conn, "personal", SUBJECT, "2026-05-01")
    assert [r["statement"] for r in seed_rows] == ["Acme's OAuth refresh endpoint is /auth/v2/refresh as of 2026-03-15."]
    end_of_april = vault.why(SUBJECT, since="2026-04-30", until="2026-04-30")
    assert [b["belief_id"] for b in end_of_april["current_beliefs"]] == [NEW]
    assert end_of_april["history"] == []
    assert end_of_april["as_of"]["belief_ids"] == [NEW]
    march = vault.why(SUBJECT, since="2026-03", until="2026-03")
    assert march["current_beliefs"] == [] and [b["belief_id"] for b in march["history"]] == [OLD]
    assert march["as_of"] == {"at": "2026-03-31T23:59:59.999Z", "belief_ids": [OLD]}
    # all of April: both were current at some point in it
    april = vault.why(SUBJECT, since="2026-04", until="2026-04")
    assert {b["belief_id"] for b in april["current_beliefs"] + april["history"]} == {OLD, NEW}
    # before the wiki believed anything about it
    assert vault.why(SUBJECT, until="2025-12-31")["match_type"] == "none"


def test_seed_sidecar_verbatim_ingests(vault, acme):
    """The seed's sidecar has no asserted_at: the current belief starts when its predecessor was superseded;
    the ancestor, first seen already superseded, gets its superseded_at and a warning (W5)."""
    shutil.rmtree(acme / "wiki" / "topics")
    write(acme, "wiki/topics/auth.md",
          "# Auth\n\n## Token refresh in OAuth flow\n\n::: disputed\nNow /auth/v2/refresh.[^2] Before: /oauth/refresh.[^1]\n"
          ":::\n\n"
          '[^1]: raw/papers/acme-api-spec-v1.md, p. 12: "Token refresh is served at the path /oauth/refresh." '
          "<!-- prov:prov-acme-api-v1-12 -->\n"
          '[^2]: raw/papers/acme-rfc-0034.md, p. 3: "v2 moves the refresh endpoint to /auth/v2/refresh. The legacy '
          'path returns 301 until 2026-12." <!-- prov:prov-acme-rfc-0034-3 -->\n')
    (acme / "wiki/topics/auth.beliefs.json").write_text(json.dumps(SEED_SIDECAR, indent=2))
    [res] = vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    assert any(e[3] == "ASSERTED_AT_UNKNOWN" for e in res.events)
    ans = vault.why(SUBJECT)
    assert ans["supersession_chain"] == [OLD, NEW]
    assert ans["current_beliefs"][0]["asserted_at"] == "2026-04-15T00:00:00.000Z"
    assert ans["history"][0]["superseded_at"] == "2026-04-15T00:00:00.000Z"


def test_resolution_order_and_match_types(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    by_id = vault.why(OLD)
    assert by_id["match_type"] == "belief_id"
    assert [b["belief_id"] for b in by_id["history"]] == [OLD]
    # the chain brings the successor in, marked as reached through the chain
    assert [(b["belief_id"], b["match_type"]) for b in by_id["current_beliefs"]] == [(NEW, "supersession_chain")]
    topic = vault.why("auth")
    assert topic["match_type"] == "topic" and len(topic["current_beliefs"]) == 3
    fts = vault.why("failover region")
    assert fts["match_type"] == "fts"
    assert [b["belief_id"] for b in fts["current_beliefs"]] == ["b-2026-05-02-acme-deploy-002"]
    nothing = vault.why("zebra quantum")
    assert nothing["match_type"] == "none" and nothing["current_beliefs"] == []


def test_tie_returns_all_matches_with_match_type(vault, acme):
    """A topic that is also a subject: both resolvers match, every result says how it matched."""
    data = json.loads((acme / "wiki/people/maya.beliefs.json").read_text())
    data["beliefs"][0]["subject"] = "auth"   # the subject now equals the topic name "auth"
    (acme / "wiki/people/maya.beliefs.json").write_text(json.dumps(data))
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    ans = vault.why("auth")
    assert ans["match_type"] == "tie" and ans["match_types"] == ["subject", "topic"]
    kinds = {b["belief_id"]: b["match_type"] for b in ans["current_beliefs"] + ans["history"]}
    assert kinds["b-2026-03-02-maya-001"] == "subject"
    assert kinds[NEW] == "topic"


def test_predicate_and_history_switch(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    assert vault.why(SUBJECT, predicate="depends_on")["match_type"] == "none"
    assert len(vault.why(SUBJECT, predicate="is_at")["current_beliefs"]) == 1
    no_hist = vault.why(SUBJECT, include_history=False)
    assert no_hist["history"] == [] and no_hist["supersession_chain"] == [OLD, NEW]


def test_contradicting_beliefs_are_linted_and_returned(vault, acme):
    vault.ingest([acme], as_of="2026-04-20T00:00:00Z")
    ans = vault.why("Acme access token lifetime")
    ids = {b["belief_id"] for b in ans["current_beliefs"]}
    assert ids == {"b-2026-01-10-acme-auth-002", "b-2026-03-20-acme-auth-003"}
    for b in ans["current_beliefs"]:
        assert b["confidence_hint"] == "contested"
        assert b["contradicting_belief_ids"] == sorted(ids - {b["belief_id"]})
    one = vault.why("b-2026-01-10-acme-auth-002")
    assert [b["belief_id"] for b in one["contradicting_beliefs"]] == ["b-2026-03-20-acme-auth-003"]
    assert one["contradicting_beliefs"][0]["supporting_sources"][0]["verified_against_source"] is True


def test_max_results_truncates(tmp_path: Path, acme):
    from kenning.api import Vault

    with Vault.open(tmp_path / "t.db", overrides={"beliefs": {"why": {"max_results": 1}}}) as v:
        v.ingest([acme], as_of="2026-04-20T00:00:00Z")
        ans = v.why("auth")
        assert ans["truncated"] is True and ans["total_matches"] == 4
