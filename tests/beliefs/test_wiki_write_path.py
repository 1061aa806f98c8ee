"""Seed 002's write path — `kenning wiki stage | verify | commit` — against the scripted OpenAI-compatible test
server: the guardian drafts, the hostile verifier votes, a verified run commits in one transaction, and a
rejected run changes nothing (decisions W60–W79)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .beliefs_helpers import write

AS_OF = "2026-06-10T09:00:00Z"
GUARDIAN_MARK = "You are the guardian of a personal wiki"

DRILL = ("# DR drill, June 2026\n\nThe drill confirmed production runs in eu-west-1 with failover to eu-central-1.\n"
         "Failover took 18 minutes.\n")
SUPPORTING = [
    {"page": "wiki/topics/deploy.md", "section": "Regions", "relation": "supports",
     "target_belief_id": "b-2026-05-02-acme-deploy-002", "topic": "deploy",
     "statement": "Acme's production API runs in eu-west-1 with a warm failover region in eu-central-1.",
     "quote": "The drill confirmed production runs in eu-west-1 with failover to eu-central-1."},
    {"page": "wiki/topics/deploy.md", "section": "Failover", "relation": "new", "topic": "deploy",
     "subject": "Acme failover", "predicate": "takes", "object": "18 minutes",
     "statement": "In the June 2026 drill, failing over took 18 minutes.", "quote": "Failover took 18 minutes."},
]
POLICY = "# Token policy update\n\nFrom 2026-06-01 access tokens expire 30 minutes after issue.\n"
CONTRADICTING = [
    {"page": "wiki/topics/auth.md", "section": "Token lifetime", "relation": "contradicts",
     "target_belief_id": "b-2026-01-10-acme-auth-002", "topic": "auth", "subject": "Acme access token lifetime",
     "predicate": "has_value", "object": "30 minutes", "source_valid_from": "2026-06-01",
     "statement": "Acme access tokens expire 30 minutes after issue.",
     "quote": "From 2026-06-01 access tokens expire 30 minutes after issue."},
]
ROADMAP = "# Q2 review\n\nMaya presented the Q2 roadmap to the board.\n"
UNJUSTIFIED = [
    {"page": "wiki/people/maya.md", "section": "Role", "relation": "contradicts",
     "target_belief_id": "b-2026-03-02-maya-001", "topic": "people", "statement": "Maya presented the Q2 roadmap.",
     "quote": "Maya presented the Q2 roadmap to the board."},
]


def model(claims: list[dict], statement_vote: str = "supports", supersession_vote: str | None = None):
    """A scripted model: the guardian answers ``claims``; the verifier votes as told (by default, a supersession
    recorded as elaborated refines and any other contradicts)."""

    def answer(body: dict) -> dict:
        text = "\n".join(m["content"] for m in body["messages"])
        if GUARDIAN_MARK in text:
            return {"claims": claims}
        if "Read this source quote and the belief statement" in text:
            return {"vote": statement_vote, "rationale": "scripted"}
        vote = supersession_vote or ("refines" if 'the reason "elaborated"' in text else "contradicts")
        return {"vote": vote, "rationale": "scripted"}

    return answer


def snapshot(*dirs: Path) -> dict[str, bytes]:
    return {str(f): f.read_bytes() for d in dirs for f in sorted(d.rglob("*")) if f.is_file()}


@pytest.fixture
def ws(acme: Path, tmp_path: Path, db: Path):
    """The sample wiki imported into a fresh vault (no model), and an inbox of new sources outside it."""
    from kenning.api import Vault

    with Vault.open(db) as v:
        v.ingest([acme], as_of="2026-06-01T00:00:00Z")
    inbox = tmp_path / "inbox"
    write(inbox, "dr-drill-2026-06.md", DRILL)
    write(inbox, "token-policy-2026-06.md", POLICY)
    write(inbox, "q2-review.md", ROADMAP)
    return acme, inbox


def open_vault(db: Path, cfg: Any = None):
    from kenning.api import Vault

    v = Vault.open(db)
    if cfg is not None:
        v.config = cfg
    return v


def stage_run(v, root: Path, source: Path, mode: str = "live", **kw) -> Path:
    from kenning.beliefs.wiki_commit import stage

    r = stage(v.conn, v.config, root, source, llm_mode=mode, as_of=AS_OF, **kw)
    return Path(r.counts["run_dir"])


def test_supporting_source_is_staged_verified_and_committed(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import commit, verify
    from kenning.beliefs.wiki_run import RunFolderError

    root, inbox = ws
    llm_server.default_chat = model(SUPPORTING)
    wiki_before = snapshot(root / "wiki", root / "raw")
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "dr-drill-2026-06.md")
        assert run.parent == root / "runs" and run.name.startswith("run-2026-06-10-")
        assert snapshot(root / "wiki", root / "raw") == wiki_before   # staging writes only the run folder
        page = (run / "staged/topics/deploy.md").read_text()
        assert ("[^3]: [DR drill, June 2026](raw/inbox/dr-drill-2026-06.md): \"The drill confirmed production runs "
                "in eu-west-1 with failover to eu-central-1.\"") in page
        assert ("since May 2026.[^2][^3]\n\n## Failover\n\n"
                "In the June 2026 drill, failing over took 18 minutes.[^4]\n\n[^1]:") in page
        sidecar = json.loads((run / "staged/topics/deploy.beliefs.json").read_text())
        target = next(b for b in sidecar["beliefs"] if b["belief_id"] == "b-2026-05-02-acme-deploy-002")
        assert target["footnote_ids"] == ["1", "2", "3"]
        assert target["provenance_ids"][-1] == f"prov-{run.name}-1"
        # the same source at the same frozen instant is the same run (deterministic id), not a second one
        assert stage_run(v, root, inbox / "dr-drill-2026-06.md") == run

        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert verdict["verdict"] == "commit", verdict
        assert verdict["checks"] == {"coverage": "passed", "provenance_link": "passed",
                                     "supersession_sanity": "passed", "statement_support": "passed",
                                     "convergence": "passed"}
        assert json.loads((run / "verdict.json").read_text())["verdict"] == "commit"
        row = v.conn.execute("SELECT status, counts_json FROM runs WHERE stage='wiki-verify'").fetchone()
        assert row[0] == "ok" and json.loads(row[1])["verdict"] == "commit"

        others = "SELECT * FROM wiki_verifier_findings WHERE belief_id LIKE '%auth%' OR belief_id LIKE '%maya%'"
        untouched = sorted(v.conn.execute(others).fetchall())
        done = commit(v.conn, v.config, run, as_of=AS_OF)
        assert done["already_committed"] is False
        assert sorted(v.conn.execute(others).fetchall()) == untouched and untouched   # other pages keep theirs
        judged = dict(v.conn.execute("SELECT belief_id, outcome FROM wiki_verifier_findings WHERE "
                                     "check_name='statement_support' AND (belief_id LIKE '%deploy%' OR "
                                     "belief_id LIKE 'b-2026-06-10-%')").fetchall())
        assert set(judged.values()) == {"passed"} and len(judged) == 3
        assert (root / "raw/inbox/dr-drill-2026-06.md").read_text() == DRILL
        assert (root / "wiki/topics/deploy.md").read_bytes() == (run / "staged/topics/deploy.md").read_bytes()
        new = v.conn.execute("SELECT belief_id, superseded_at FROM wiki_beliefs WHERE statement LIKE "
                             "'%took 18 minutes%'").fetchall()
        assert len(new) == 1 and new[0][1] is None
        hits = v.conn.execute("SELECT statement FROM wiki_beliefs_fts WHERE wiki_beliefs_fts MATCH 'failing'") \
            .fetchall()
        assert hits == [("In the June 2026 drill, failing over took 18 minutes.",)]
        n = v.conn.execute("SELECT supporting_count FROM wiki_beliefs WHERE belief_id="
                           "'b-2026-05-02-acme-deploy-002'").fetchone()[0]
        assert n == 3
        calls = [r[0] for r in v.conn.execute("SELECT prompt_name FROM llm_extraction_calls ORDER BY rowid")]
        assert calls[0] == "wiki_guardian" and "wiki_statement_support" in calls
    # committing again changes nothing; a committed run is not verified again
    before = snapshot(db.parent, root / "wiki", root / "raw")
    with open_vault(db) as v:
        assert commit(v.conn, v.config, run, as_of=AS_OF)["already_committed"] is True
        with pytest.raises(RunFolderError, match="already committed"):
            verify(v.conn, v.config, run)
    assert snapshot(db.parent, root / "wiki", root / "raw") == before


def test_contradicting_source_needs_its_disputed_block(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import CommitRefused, commit, verify

    root, inbox = ws
    llm_server.default_chat = model(CONTRADICTING)
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "token-policy-2026-06.md")
        staged = run / "staged/topics/auth.md"
        drafted = staged.read_text()
        block = drafted[drafted.index("::: disputed\nAcme access tokens expire 30"):]
        assert block.startswith("::: disputed\nAcme access tokens expire 30 minutes after issue.[^5] Earlier the "
                                "wiki said: Acme access tokens expire 15 minutes after issue.[^3]\n:::")
        sc = json.loads((run / "staged/topics/auth.beliefs.json").read_text())
        old = next(b for b in sc["beliefs"] if b["belief_id"] == "b-2026-01-10-acme-auth-002")
        assert old["supersession_reason"] == "contradicted_by_new_source"
        assert old["superseded_at"] == "2026-06-10T09:00:00.000Z"

        # without the hedge the verifier rejects the run with the convergence code
        staged.write_text(drafted.replace("::: disputed\nAcme access tokens expire 30", "Acme access tokens "
                                          "expire 30", 1).replace("[^3]\n:::\n", "[^3]\n", 1))
        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert verdict["verdict"] == "reject" and verdict["reasons"] == ["missing_disputed_block"]
        assert verdict["checks"]["convergence"] == "failed"
        with pytest.raises(CommitRefused) as e:
            commit(v.conn, v.config, run)
        assert e.value.kind == "reject"

        staged.write_text(drafted)
        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert verdict["verdict"] == "commit", verdict
        assert verdict["contradictions"] == 1
        commit(v.conn, v.config, run, as_of=AS_OF)
        row = v.conn.execute("SELECT superseded_by_belief_id, supersession_reason, superseded_in_run FROM "
                             "wiki_beliefs WHERE belief_id='b-2026-01-10-acme-auth-002'").fetchone()
        new_id = row[0]
        assert row[1] == "contradicted_by_new_source" and row[2] is not None
        cur = v.conn.execute("SELECT statement, source_valid_from, superseded_at FROM wiki_beliefs WHERE belief_id=?",
                             (new_id,)).fetchone()
        assert cur == ("Acme access tokens expire 30 minutes after issue.", "2026-06-01", None)
        ans = v.why("Acme access token lifetime")
        assert new_id in [b["belief_id"] for b in ans["current_beliefs"]]
        assert "b-2026-01-10-acme-auth-002" in [b["belief_id"] for b in ans["history"]]


def test_unjustified_supersession_is_rejected_and_changes_nothing(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import CommitRefused, commit, verify

    root, inbox = ws
    llm_server.default_chat = model(UNJUSTIFIED, supersession_vote="unrelated")
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "q2-review.md")
        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert verdict["verdict"] == "reject"
        assert verdict["reasons"] == ["unjustified_supersession"]
        assert verdict["checks"]["supersession_sanity"] == "failed"
        events = [r[0] for r in v.conn.execute("SELECT e.code FROM run_events e JOIN runs r USING (run_id) "
                                               "WHERE r.stage='wiki-verify'")]
        assert "VERDICT_UNJUSTIFIED_SUPERSESSION" in events
    before = snapshot(db.parent, root / "wiki", root / "raw")
    with open_vault(db, llm_config(llm_server)) as v:
        with pytest.raises(CommitRefused):
            commit(v.conn, v.config, run)
    assert snapshot(db.parent, root / "wiki", root / "raw") == before


def test_unverified_or_changed_run_is_refused(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import CommitRefused, commit, verify

    root, inbox = ws
    llm_server.default_chat = model(SUPPORTING)
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "dr-drill-2026-06.md")
        before = snapshot(root / "wiki", root / "raw")
        with pytest.raises(CommitRefused) as e:
            commit(v.conn, v.config, run)
        assert e.value.kind == "unverified"
        assert verify(v.conn, v.config, run, llm_mode="live")["verdict"] == "commit"
        p = run / "staged/topics/deploy.md"
        p.write_text(p.read_text() + "\nOne more line.\n")
        with pytest.raises(CommitRefused) as e:
            commit(v.conn, v.config, run)
        assert e.value.kind == "stale"
        assert snapshot(root / "wiki", root / "raw") == before


def test_manual_run_without_a_model_shows_not_checked(ws, db: Path, kenning):
    root, inbox = ws
    out = json.loads(kenning("wiki", "stage", str(root), "--source", str(inbox / "dr-drill-2026-06.md"),
                             "--as-of", AS_OF, "--llm", "none", "--json", db=db).stdout)
    run = Path(out["run_dir"])
    assert out["mode"] == "manual" and (run / "staged/topics/deploy.md").is_file()
    assert (run / "raw/inbox/dr-drill-2026-06.md").read_text() == DRILL
    # a person edits the staged copy and its sidecar
    page = run / "staged/topics/deploy.md"
    page.write_text(page.read_text().replace("## Regions", "## Failover\n\nFailover took 18 minutes in the June "
                                             "drill.[^3]\n\n## Regions")
                    + '[^3]: [DR drill](raw/inbox/dr-drill-2026-06.md): "Failover took 18 minutes." '
                      "<!-- prov:prov-drill-1 -->\n")
    sc_path = run / "staged/topics/deploy.beliefs.json"
    sc = json.loads(sc_path.read_text())
    sc["beliefs"].append({"belief_id": "b-manual-failover", "statement": "Failover took 18 minutes in the June drill.",
                          "topic": "deploy", "wiki_section_anchor": "#failover", "footnote_ids": ["3"],
                          "provenance_ids": ["prov-drill-1"], "asserted_at": "2026-06-10"})
    sc_path.write_text(json.dumps(sc, indent=2))
    proc = kenning("wiki", "verify", str(run), "--llm", "none", db=db)
    assert f"verdict for {run.name}: COMMIT" in proc.stdout
    assert "statement_support    not_checked — no model configured" in proc.stdout
    v = json.loads((run / "verdict.json").read_text())
    assert v["checks"]["statement_support"] == "not_checked"
    assert {b["belief_id"]: b["statement_support"]["outcome"] for b in v["beliefs"]}["b-manual-failover"] == \
        "not_checked"
    kenning("wiki", "commit", str(run), db=db)
    with open_vault(db) as vault:
        f = vault.conn.execute("SELECT outcome, judge FROM wiki_verifier_findings WHERE belief_id='b-manual-failover' "
                               "AND check_name='statement_support'").fetchone()
        assert f == ("not_checked", "none")
    assert "Failover took 18 minutes in the June drill.[^3]" in (root / "wiki/topics/deploy.md").read_text()


def test_replay_with_the_server_stopped_gives_the_same_verdict(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import verify

    root, inbox = ws
    llm_server.default_chat = model(CONTRADICTING, statement_vote="partially_supports")
    cfg = llm_config(llm_server)
    with open_vault(db, cfg) as v:
        run = stage_run(v, root, inbox / "token-policy-2026-06.md")
        live = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert live["verdict"] == "revise" and live["reasons"] == ["statement_partially_supported"]
        n = len(llm_server.requests)
        llm_server.stop()
        replay = verify(v.conn, v.config, run, llm_mode="replay", as_of=AS_OF)
        # the guardian replays too: the same run drafted again from the stored answer
        drafted = snapshot(run / "staged")
        shutil.rmtree(run)
        assert stage_run(v, root, inbox / "token-policy-2026-06.md", mode="replay") == run
        assert snapshot(run / "staged") == drafted
    assert len(llm_server.requests) == n
    keep = ("verdict", "reasons", "checks", "findings", "revise", "beliefs", "votes", "content_hash")
    assert {k: replay[k] for k in keep} == {k: live[k] for k in keep}


@pytest.mark.slow
def test_cli_stage_verify_commit_and_a_rejected_run(ws, db: Path, llm_server, kenning):
    from .test_beliefs_llm_judge import TEST_KEY

    root, inbox = ws
    env = {"KENNING_LLM_BASE_URL": llm_server.base_url, "KENNING_LLM_MODEL": "kenning-test-model",
           "KENNING_LLM_API_KEY": TEST_KEY}
    llm_server.default_chat = model(UNJUSTIFIED, supersession_vote="unrelated")
    out = kenning("wiki", "stage", str(root), "--source", str(inbox / "q2-review.md"), "--llm", "live", "--as-of",
                  AS_OF, db=db, env=env).stdout
    run = root / "runs" / out.split("staged ", 1)[1].split(":", 1)[0]
    assert run.is_dir()
    proc = kenning("wiki", "verify", str(run), "--llm", "live", db=db, env=env, check=False)
    assert proc.returncode == 2 and "REJECT (unjustified_supersession)" in proc.stdout
    proc = kenning("wiki", "commit", str(run), db=db, check=False)
    assert proc.returncode == 2 and "not committed" in proc.stderr and "reject" in proc.stderr

    llm_server.default_chat = model(SUPPORTING)
    out = json.loads(kenning("wiki", "stage", str(root), "--source", str(inbox / "dr-drill-2026-06.md"),
                             "--llm", "live", "--as-of", AS_OF, "--json", db=db, env=env).stdout)
    run = Path(out["run_dir"])
    v = json.loads(kenning("wiki", "verify", str(run), "--llm", "live", "--json", db=db, env=env).stdout)
    assert v["verdict"] == "commit"
    done = json.loads(kenning("wiki", "commit", str(run), "--json", db=db).stdout)
    assert done["already_committed"] is False and "wiki/topics/deploy.md" in done["files"]
    again = kenning("wiki", "commit", str(run), db=db)
    assert "already committed" in again.stderr
    assert "18 minutes" in kenning("why", "failing over", db=db).stdout


def test_guardian_plan_is_checked_before_it_is_staged(acme: Path):
    """Claims whose quote is not verbatim, whose target is unknown, or that would edit a structural page are
    dropped with the reason; a new page gets its title, section, footnote and sidecar."""
    from kenning.beliefs.wiki_stage import GuardianPlan, apply_plan, write_drafts
    from kenning.config import load_config

    claims = [
        {"page": "wiki/topics/dr.md", "section": "Drills", "relation": "new", "topic": "dr",
         "statement": "A failover drill took 18 minutes.", "quote": "Failover took 18 minutes."},
        {"page": "wiki/topics/dr.md", "section": "Drills", "relation": "new", "topic": "dr",
         "statement": "Failover is instant.", "quote": "Failover is instant."},
        {"page": "wiki/topics/auth.md", "section": "Token lifetime", "relation": "contradicts", "topic": "auth",
         "target_belief_id": "b-nope", "statement": "x", "quote": "Failover took 18 minutes."},
        {"page": "wiki/log.md", "section": "Log", "relation": "new", "topic": "log", "statement": "y",
         "quote": "Failover took 18 minutes."},
    ]
    res = apply_plan(GuardianPlan.model_validate({"claims": claims}), root=acme, config=load_config(),
                     run_id="run-x", now="2026-06-10T09:00:00.000Z", source_text=DRILL,
                     source_raw_path="raw/inbox/dr.md", source_title="DR drill")
    assert [d["claim"] for d in res.dropped] == [2, 3, 4]
    assert "not a verbatim passage" in res.dropped[0]["reason"] and "b-nope" in res.dropped[1]["reason"]
    assert "not a content page" in res.dropped[2]["reason"]
    staged = acme / "runs/run-x/staged"
    assert write_drafts(res.drafts, staged) == ["wiki/topics/dr.md", "wiki/topics/dr.beliefs.json"]
    assert (staged / "topics/dr.md").read_text() == (
        "# Dr\n\n## Drills\n\nA failover drill took 18 minutes.[^1]\n\n"
        '[^1]: [DR drill](raw/inbox/dr.md): "Failover took 18 minutes." <!-- prov:prov-run-x-1 -->\n')
    [b] = json.loads((staged / "topics/dr.beliefs.json").read_text())["beliefs"]
    assert b["footnote_ids"] == ["1"] and b["provenance_ids"] == ["prov-run-x-1"] and b["wiki_section_anchor"] == \
        "#drills"


def test_guardian_schema_file_matches_the_code():
    from kenning.beliefs.wiki_stage import check_schema_file
    from kenning.config import load_config

    check_schema_file(load_config())


def test_an_unedited_manual_run_is_sent_back_for_revision(ws, db: Path):
    from kenning.beliefs.wiki_commit import CommitRefused, commit, verify

    root, inbox = ws
    with open_vault(db) as v:
        run = stage_run(v, root, inbox / "dr-drill-2026-06.md", mode="none", manual=True,
                        pages=["topics/deploy.md"])
        assert sorted(p.name for p in (run / "staged/topics").iterdir()) == ["deploy.beliefs.json", "deploy.md"]
        verdict = verify(v.conn, v.config, run)
        assert verdict["verdict"] == "revise" and verdict["reasons"] == ["no_changes"]
        with pytest.raises(CommitRefused) as e:
            commit(v.conn, v.config, run)
        assert e.value.kind == "revise"


def test_a_new_claim_on_a_believed_subject_and_predicate_supersedes_or_supports(acme: Path):
    """Seed 002 "Apply supersession for any existing belief on the same (subject, predicate)" (W74)."""
    from kenning.beliefs.wiki_stage import GuardianPlan, apply_plan
    from kenning.config import load_config

    text = "Priya now owns the auth service. Prod is in eu-west-1 with failover. Tokens last 45 minutes."
    claims = [
        {"page": "wiki/people/priya.md", "section": "Role", "relation": "new", "topic": "people",
         "subject": "Acme auth service", "predicate": "is_owned_by", "object": "Priya",
         "statement": "Priya owns Acme's auth service.", "quote": "Priya now owns the auth service."},
        {"page": "wiki/topics/deploy.md", "section": "Regions", "relation": "new", "topic": "deploy",
         "subject": "Acme production API", "predicate": "runs_in", "object": "eu-west-1 (failover eu-central-1)",
         "statement": "Acme's production API runs in eu-west-1 with failover.",
         "quote": "Prod is in eu-west-1 with failover."},
        {"page": "wiki/topics/auth.md", "section": "Token lifetime", "relation": "new", "topic": "auth",
         "subject": "Acme access token lifetime", "predicate": "has_value", "object": "45 minutes",
         "statement": "Acme access tokens last 45 minutes.", "quote": "Tokens last 45 minutes."},
    ]
    res = apply_plan(GuardianPlan.model_validate({"claims": claims}), root=acme, config=load_config(),
                     run_id="run-y", now="2026-06-10T09:00:00.000Z", source_text=text,
                     source_raw_path="raw/inbox/n.md", source_title="Note")
    assert [(x["relation"], x["page"]) for x in res.staged] == [
        ("contradicts", "wiki/people/maya.md"), ("supports", "wiki/topics/deploy.md"),
        ("new", "wiki/topics/auth.md")]
    assert "b-2026-01-10-acme-auth-002, b-2026-03-20-acme-auth-003" in res.notes[2]["reason"]
    maya = res.drafts.pages["wiki/people/maya.md"]
    assert maya.belief("b-2026-03-02-maya-001")["supersession_reason"] == "contradicted_by_new_source"
    assert "::: disputed\nPriya owns Acme's auth service.[^2] Earlier the wiki said: Maya owns" in maya.text


def test_a_disputing_source_keeps_both_beliefs_current_and_hedged(ws, db: Path, llm_server, llm_config):
    from kenning.beliefs.wiki_commit import commit, verify

    root, inbox = ws
    claim = {**CONTRADICTING[0], "relation": "disputes"}
    llm_server.default_chat = model([claim])
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "token-policy-2026-06.md")
        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
        assert verdict["verdict"] == "commit" and verdict["contradictions"] == 1
        commit(v.conn, v.config, run, as_of=AS_OF)
        rows = dict(v.conn.execute("SELECT statement, superseded_at IS NULL FROM wiki_beliefs WHERE subject="
                                   "'Acme access token lifetime'").fetchall())
        assert rows == {"Acme access tokens expire 15 minutes after issue.": 1,
                        "In production, Acme access tokens live for 60 minutes.": 1,
                        "Acme access tokens expire 30 minutes after issue.": 1}
        hint = v.conn.execute("SELECT confidence_hint, contradicting_belief_ids FROM wiki_beliefs WHERE statement="
                              "'Acme access tokens expire 30 minutes after issue.'").fetchone()
        assert hint[0] == "contested" and "b-2026-01-10-acme-auth-002" in hint[1]


def test_a_judge_that_cannot_answer_sends_the_run_back(ws, db: Path, llm_server, llm_config):
    """With a model configured, a vote that could not be had is no pass and no `not_checked` shrug: revise."""
    from kenning.beliefs.wiki_commit import verify

    root, inbox = ws
    plan = model(SUPPORTING)
    llm_server.default_chat = lambda body: plan(body) if GUARDIAN_MARK in body["messages"][0]["content"] \
        else "I would rather not answer in JSON."
    with open_vault(db, llm_config(llm_server)) as v:
        run = stage_run(v, root, inbox / "dr-drill-2026-06.md")
        verdict = verify(v.conn, v.config, run, llm_mode="live", as_of=AS_OF)
    assert verdict["verdict"] == "revise" and verdict["reasons"] == ["judge_unavailable"]
    assert verdict["checks"]["statement_support"] == "revise"
    assert all("MALFORMED_OUTPUT" in x["message"] for x in verdict["revise"])
