"""The seed-002 CLI as a user runs it: why, beliefs list/history/supersede/export/verify/m1, reindex, ingest
dispatch, demo."""

from __future__ import annotations

import csv
import io
import json

import pytest
from .beliefs_helpers import add_conversation

from kenning.beliefs.judge import CallableJudge

NEW, OLD = "b-2026-04-15-acme-auth-001", "b-2026-01-10-acme-auth-001"
AS_OF = "2026-04-20T00:00:00Z"


@pytest.fixture
def ingested(kenning, db, acme):
    kenning("ingest", str(acme), "--as-of", AS_OF, db=db)
    return db


def test_why_reads_like_an_answer(kenning, ingested):
    text = kenning("why", "Acme OAuth refresh endpoint", db=ingested).stdout
    lines = text.splitlines()
    now = next(i for i, line in enumerate(lines) if line.startswith("Now: "))
    replaced = lines.index("What it replaced:")
    assert now < replaced, "the current belief comes first, then what it replaced"
    assert lines[now] == "Now: Acme's OAuth refresh endpoint is /auth/v2/refresh as of 2026-03-15."
    assert "believed since 2026-04-15" in lines[now + 1]
    assert any('"v2 moves the refresh endpoint to /auth/v2/refresh.' in line for line in lines[now:replaced])
    assert "believed 2026-01-10 → 2026-04-15" in text and "contradicted by a new source" in text
    assert f"Chain: {OLD} → {NEW}" in text


def test_why_json_and_options(kenning, ingested):
    ans = json.loads(kenning("why", "Acme OAuth refresh endpoint", "--json", db=ingested).stdout)
    assert {"query", "match_type", "current_beliefs", "history", "contradicting_beliefs",
            "supersession_chain"} <= set(ans)
    assert {"raw_path", "page_hint", "quote", "quote_hash", "verified_against_source", "verified_at"} <= \
        set(ans["current_beliefs"][0]["supporting_sources"][0])
    no_hist = json.loads(kenning("why", "auth", "--no-history", "--json", db=ingested).stdout)
    assert no_hist["history"] == [] and no_hist["include_history"] is False
    april = kenning("why", "Acme OAuth refresh endpoint", "--since", "2026-03", "--until", "2026-03", db=ingested).stdout
    assert "On 2026-03-31 you believed:" in april and "/oauth/refresh" in april
    other = json.loads(kenning("why", "auth", "--workspace", "nobody", "--json", db=ingested).stdout)
    assert other["match_type"] == "none"
    bad = kenning("why", "auth", "--since", "last week", db=ingested, check=False)
    assert bad.returncode == 1 and "ISO" in bad.stderr


def test_beliefs_list_and_history(kenning, ingested):
    listed = json.loads(kenning("beliefs", "list", "--topic", "auth", "--json", db=ingested).stdout)
    assert listed["total"] == 4
    current = json.loads(kenning("beliefs", "list", "--topic", "auth", "--current-only", "--json", db=ingested).stdout)
    assert {b["belief_id"] for b in current["beliefs"]} == {NEW, "b-2026-01-10-acme-auth-002",
                                                            "b-2026-03-20-acme-auth-003"}
    table = kenning("beliefs", "list", db=ingested).stdout
    assert "7 belief(s)" in table and "current" in table
    hist = json.loads(kenning("beliefs", "history", NEW, "--json", db=ingested).stdout)
    assert [e["belief_id"] for e in hist["chain"]] == [OLD, NEW]
    assert hist["chain"][0]["supersession_reason"] == "contradicted_by_new_source"
    text = kenning("beliefs", "history", OLD, db=ingested).stdout
    assert "← this one" in text and "contradicted by a new source" in text
    missing = kenning("beliefs", "history", "b-nope", db=ingested, check=False)
    assert missing.returncode == 1 and "no belief b-nope" in missing.stderr


def test_beliefs_supersede(kenning, ingested):
    kenning("beliefs", "supersede", "b-2026-01-10-acme-auth-002", "b-2026-03-20-acme-auth-003", "--reason",
            "manual_correction", "--note", "ops confirmed 60", "--as-of", "2026-04-21T00:00:00Z", db=ingested)
    ans = json.loads(kenning("why", "Acme access token lifetime", "--json", db=ingested).stdout)
    assert [b["belief_id"] for b in ans["current_beliefs"]] == ["b-2026-03-20-acme-auth-003"]
    old = ans["history"][0]
    assert old["supersession_reason"] == "manual_correction" and old["superseded_at"] == "2026-04-21T00:00:00.000Z"
    bad = kenning("beliefs", "supersede", OLD, NEW, "--reason", "because", db=ingested, check=False)
    assert bad.returncode == 1 and "not one of" in bad.stderr
    cycle = kenning("beliefs", "supersede", NEW, OLD, "--reason", "manual_correction", db=ingested, check=False)
    assert cycle.returncode == 1 and "cycle" in cycle.stderr
    gone = kenning("beliefs", "supersede", "b-x", NEW, "--reason", "manual_correction", db=ingested, check=False)
    assert gone.returncode == 1 and "no belief b-x" in gone.stderr


def test_beliefs_export(kenning, ingested, tmp_path):
    data = json.loads(kenning("beliefs", "export", db=ingested).stdout)
    assert len(data["beliefs"]) == 7
    row = next(b for b in data["beliefs"] if b["belief_id"] == NEW)
    assert row["footnote_ids"] == ["2"] and row["provenance_ids"] == ["prov-acme-rfc-0034-3"]
    text = kenning("beliefs", "export", "--format", "csv", db=ingested).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 7 and rows[0].keys() >= {"belief_id", "statement", "superseded_by_belief_id"}
    out = tmp_path / "b.csv"
    kenning("beliefs", "export", "--format", "csv", "--out", str(out), db=ingested)
    assert out.read_text() == text


def test_beliefs_m1_hash_gate_first(kenning, ingested, acme):
    report = json.loads(kenning("beliefs", "m1", "--sample", "50", "--json", db=ingested).stdout)
    assert report["sample_size"] == 5 and report["judge"] == "none"
    assert report["m1"] is None and report["votes"]["not_checked"] == 5 and "not judged" in report["m1_note"]
    raw = acme / "raw/papers/acme-rfc-0034.md"
    raw.write_text(raw.read_text().replace("/auth/v2/refresh.", "/auth/v3/refresh."))
    again = json.loads(kenning("beliefs", "m1", "--json", db=ingested).stdout)
    gated = [r for r in again["results"] if not r["hash_gate"]]
    assert [r["belief_id"] for r in gated] == [NEW] and gated[0]["vote"] == "does_not_support"
    assert again["judge_calls"] == 4
    assert "M1 = n/a" in kenning("beliefs", "m1", db=ingested).stdout
    live = kenning("beliefs", "m1", "--llm", "live", db=ingested, check=False)
    assert live.returncode == 1 and "needs an endpoint" in live.stderr  # no model configured: a clear error


def test_m1_with_a_judge(vault, acme):
    vault.ingest([acme], as_of=AS_OF)
    judge = CallableJudge(lambda p: {"vote": "partially_supports" if "60 minutes" in p else "supports"})
    report = vault.m1(judge, sample=50)
    assert report["votes"] == {"supports": 4, "partially_supports": 1, "does_not_support": 0, "not_checked": 0}
    assert report["m1"] == 0.8 and report["judge_calls"] == 5
    assert vault.m1(judge, sample=2, seed=7)["sample_size"] == 2
    assert vault.m1(judge, sample=2, seed=7)["results"] == vault.m1(judge, sample=2, seed=7)["results"]


def test_ingest_dispatches_wiki_and_chatgpt_in_one_command(kenning, db, acme, tmp_path):
    export = tmp_path / "conversations.json"
    node = {"id": "m1", "message": {"id": "m1", "author": {"role": "user"}, "create_time": 1.7e9,
                                    "content": {"content_type": "text", "parts": ["I live in Berlin now."]}},
            "parent": None, "children": []}
    export.write_text(json.dumps([{"conversation_id": "c1", "id": "c1", "title": "Moving", "create_time": 1.7e9,
                                   "update_time": 1.7e9, "mapping": {"m1": node}, "current_node": "m1"}]))
    res = json.loads(kenning("ingest", str(export), str(acme), "--as-of", AS_OF, "--json", "--workspace", "acme",
                             db=db).stdout)
    runs = {r["stage"]: r for r in res["runs"]}
    assert list(runs)[:2] == ["0", "1"] and list(runs)[-1] == "wiki"   # the conversation stages, then the wiki
    assert runs["1"]["counts"]["conversations_new"] == 1
    assert runs["wiki"]["counts"]["workspace"] == "acme" and runs["wiki"]["counts"]["beliefs"] == 7
    status = json.loads(kenning("status", "--json", db=db).stdout)["tables"]
    # the wiki's 7 beliefs, plus the conversation's "I live in Berlin" (stage 5 feeds the ledger, issue 8 item 3)
    assert status["conversations"] == 1 and status["wiki_beliefs"] == 7 + 1
    # the wiki/ folder itself works too, and re-ingesting changes nothing
    again = json.loads(kenning("ingest", str(acme / "wiki"), "--workspace", "acme", "--as-of", AS_OF, "--json",
                               db=db).stdout)
    assert again["runs"][0]["counts"]["beliefs_new"] == 0 and again["runs"][0]["counts"]["documents_changed"] == 0
    llm = kenning("ingest", str(acme), "--llm", "live", db=db, check=False)
    assert llm.returncode == 1 and "--llm none" in llm.stderr


def test_reindex_plain_rebuilds_fts(kenning, ingested):
    out = kenning("reindex", db=ingested)
    assert "7 beliefs" in out.stderr


def test_conversation_beliefs_in_the_cli(vault, db, kenning):
    from kenning.beliefs.ledger import BeliefInput, BeliefSource
    from kenning.store import transaction

    text = "I live in Berlin now."
    with transaction(vault.conn):
        add_conversation(vault.conn, "c1", "Moving", [("m1", "user", "2024-01-05T09:00:00.000Z", text)])
    vault.publish_beliefs([BeliefInput(belief_id="b-berlin", statement="I live in Berlin.", topic="home",
                                       subject="my home city", asserted_at="2024-01-05T09:00:00Z",
                                       sources=(BeliefSource(kind="conversation", conversation_id="c1",
                                                             message_id="m1", char_start=0, char_end=len(text) - 1,
                                                             quote=text[:-1]),))], as_of="2024-01-06T00:00:00Z")
    vault.close()
    out = kenning("why", "my home city", db=db).stdout
    assert 'Moving · 2024-01-05T09:00:00.000Z says:' in out and '"I live in Berlin now"' in out
