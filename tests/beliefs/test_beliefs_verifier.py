"""The verifier's four belief checks (coverage, provenance link, supersession sanity, statement support) and the
sidecar's own shape: every rejection, with nothing committed; model-judged checks never pass by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest
from .beliefs_helpers import belief, load_sidecar, minimal_wiki, save_sidecar, sidecar, table_rows, write

from kenning.beliefs.judge import CallableJudge, NoJudge
from kenning.beliefs.wiki_import import WikiRunRejected
from kenning.pipeline.runner import StageFailed

PAGE = "wiki/people/anna.md"
LEDGER_TABLES = {"wiki_beliefs": "belief_id", "wiki_claim_provenance": "id", "documents": "id",
                 "wiki_footnotes": "id", "belief_sightings": "belief_id", "workspaces": "slug",
                 "wiki_verifier_findings": "belief_id, check_name", "belief_provenance": "belief_id, provenance_id"}


def snapshot(conn) -> dict:
    return {t: table_rows(conn, t, o) for t, o in LEDGER_TABLES.items()}


def rejected(vault, root: Path, judge=None, as_of: str = "2026-06-01T00:00:00Z") -> WikiRunRejected:
    before = snapshot(vault.conn)
    with pytest.raises(StageFailed) as exc:
        vault.ingest([root], as_of=as_of, judge=judge)
    assert isinstance(exc.value.cause, WikiRunRejected)
    assert snapshot(vault.conn) == before, "a rejected run must commit nothing"
    run = vault.conn.execute("SELECT status, counts_json FROM runs WHERE run_id=?", (exc.value.run_id,)).fetchone()
    assert run[0] == "failed" and "rejected" in run[1]
    codes = {r[0] for r in vault.conn.execute("SELECT code FROM run_events WHERE run_id=?", (exc.value.run_id,))}
    for f in exc.value.cause.findings:
        assert f"REJECTED_{f.code.upper()}" in codes
    return exc.value.cause


def codes(rej: WikiRunRejected) -> set[tuple[str, str]]:
    return {(f.check, f.code) for f in rej.findings}


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    return minimal_wiki(tmp_path / "w")


def edit_sidecar(root: Path, fn: Callable[[dict], None]) -> None:
    data = load_sidecar(root, PAGE)
    fn(data)
    save_sidecar(root, PAGE, data)


def test_minimal_wiki_commits_idempotently_and_deterministically(vault, wiki, tmp_path):
    [r] = vault.ingest([wiki], as_of="2026-06-01T00:00:00Z")
    assert r.stage == "wiki" and r.counts["beliefs"] == 2 and r.counts["beliefs_current"] == 1
    assert r.counts["structural_pages"] == 1
    first = snapshot(vault.conn)
    again = vault.ingest([wiki], as_of="2026-06-02T00:00:00Z")[0]
    assert again.counts["beliefs_new"] == 0 and again.counts["beliefs_updated"] == 0
    assert snapshot(vault.conn) == first   # a rerun on unchanged input changes nothing
    from kenning.api import Vault

    with Vault.open(tmp_path / "twin.db") as twin:   # same input, same clock: the same ledger, run ids included
        twin.ingest([wiki], as_of="2026-06-01T00:00:00Z")
        assert snapshot(twin.conn) == first


# ---- coverage ------------------------------------------------------------------------------------------

def test_coverage_footnote_without_belief(vault, wiki):
    edit_sidecar(wiki, lambda d: d["beliefs"].pop(0))   # nobody cites [^1] any more
    assert ("coverage", "footnote_without_belief") in codes(rejected(vault, wiki))


def test_coverage_belief_cites_undefined_footnote(vault, wiki):
    edit_sidecar(wiki, lambda d: d["beliefs"][1]["footnote_ids"].append("7"))
    assert ("coverage", "belief_footnote_undefined") in codes(rejected(vault, wiki))


def test_coverage_missing_sidecar(vault, wiki):
    (wiki / "wiki/people/anna.beliefs.json").unlink()
    assert ("coverage", "missing_sidecar") in codes(rejected(vault, wiki))


def test_coverage_reference_without_definition_and_duplicates(vault, wiki):
    page = wiki / PAGE
    page.write_text(page.read_text().replace("Nantes.[^2]", "Nantes.[^2][^9]") + '[^1]: raw/notes/a.md: "Diary."\n')
    got = codes(rejected(vault, wiki))
    assert ("coverage", "footnote_reference_undefined") in got
    assert ("coverage", "duplicate_footnote") in got


def test_coverage_orphan_sidecar(vault, wiki):
    sidecar(wiki, "wiki/people/ghost.md", [])
    assert ("coverage", "orphan_sidecar") in codes(rejected(vault, wiki))


def test_structural_pages_are_exempt(vault, wiki):
    write(wiki, "wiki/index.md", "# Index\n\nSee Anna.[^1]\n\n[^1]: a note without a quote\n")
    [r] = vault.ingest([wiki], as_of="2026-06-01T00:00:00Z")
    assert r.counts["structural_pages"] == 2


# ---- the sidecar itself -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d["beliefs"][1].update(statement="x" * 281), "at most 280"),
    (lambda d: d["beliefs"][1].pop("topic"), "topic is required"),
    (lambda d: d["beliefs"][1].update(asserted_at="last spring"), "not an ISO date"),
    (lambda d: d["beliefs"][0].update(supersession_reason="changed_my_mind"), "is not one of"),
    (lambda d: d["beliefs"][1].update(provenance_ids=[]), "provenance_ids must be a non-empty array"),
    (lambda d: d["beliefs"][1].pop("wiki_section_anchor"), "wiki_section_anchor is required"),
    (lambda d: d["beliefs"][1].update(confidence_hint="very_sure"), "confidence_hint"),
])
def test_invalid_beliefs_reject(vault, wiki, mutate, fragment):
    edit_sidecar(wiki, mutate)
    rej = rejected(vault, wiki)
    assert ("sidecar", "invalid_belief") in codes(rej)
    assert any(fragment in f.message for f in rej.findings)


def test_unparseable_sidecar_rejects_on_ingest(vault, wiki):
    (wiki / "wiki/people/anna.beliefs.json").write_text("{not json")
    assert ("sidecar", "unparseable_sidecar") in codes(rejected(vault, wiki))


def test_sidecar_for_another_page_rejects(vault, wiki):
    edit_sidecar(wiki, lambda d: d.update(page="wiki/people/bob.md"))
    assert ("sidecar", "sidecar_page_mismatch") in codes(rejected(vault, wiki))


def test_duplicate_belief_id_across_pages_and_workspaces(vault, wiki, tmp_path):
    write(wiki, "wiki/people/ben.md", '# Ben\n\n## Where\n\nBen too.[^1]\n\n[^1]: raw/notes/a.md: "Diary."\n')
    sidecar(wiki, "wiki/people/ben.md", [belief("b-lyon", "Ben is in Lyon.", ["1"], ["wiki/people/ben.md#fn1"])])
    assert ("sidecar", "duplicate_belief_id") in codes(rejected(vault, wiki))
    other = minimal_wiki(tmp_path / "other")
    vault.ingest([other], as_of="2026-06-01T00:00:00Z", workspace="work")
    fresh = minimal_wiki(tmp_path / "third")
    rej = rejected(vault, fresh)   # same ids, default workspace: they belong to "work"
    assert ("sidecar", "duplicate_belief_id") in codes(rej)


# ---- provenance link ------------------------------------------------------------------------------------

def test_provenance_unknown_id(vault, wiki):
    edit_sidecar(wiki, lambda d: d["beliefs"][1].update(provenance_ids=["p-nowhere"]))
    assert ("provenance_link", "unknown_provenance_id") in codes(rejected(vault, wiki))


def test_provenance_from_a_footnote_the_belief_does_not_list(vault, wiki):
    edit_sidecar(wiki, lambda d: d["beliefs"][1].update(provenance_ids=["p-nantes", "wiki/people/anna.md#fn1"]))
    assert ("provenance_link", "provenance_footnote_mismatch") in codes(rejected(vault, wiki))


def test_quote_not_in_raw_file(vault, wiki):
    page = wiki / PAGE
    page.write_text(page.read_text().replace('"Anna moved to Nantes in May."', '"Anna moved to Nantes in June."'))
    assert ("provenance_link", "quote_not_found") in codes(rejected(vault, wiki))


def test_raw_file_missing_outside_or_unnamed(vault, wiki):
    page = wiki / PAGE
    text = page.read_text()
    page.write_text(text.replace('raw/notes/a.md: "Anna lives in Lyon."', 'raw/notes/gone.md: "Anna lives in Lyon."'))
    assert ("provenance_link", "raw_source_missing") in codes(rejected(vault, wiki))
    page.write_text(text.replace('raw/notes/a.md: "Anna lives in Lyon."', 'raw/../../etc/passwd: "Anna lives in Lyon."'))
    assert ("provenance_link", "raw_path_outside_workspace") in codes(rejected(vault, wiki))
    page.write_text(text.replace('raw/notes/a.md: "Anna lives in Lyon."', 'my diary: "Anna lives in Lyon."'))
    assert ("provenance_link", "footnote_without_raw_path") in codes(rejected(vault, wiki))
    page.write_text(text.replace('raw/notes/a.md: "Anna lives in Lyon."', "raw/notes/a.md, somewhere"))
    assert ("provenance_link", "footnote_without_quote") in codes(rejected(vault, wiki))


def test_duplicate_provenance_id(vault, wiki):
    page = wiki / PAGE
    page.write_text(page.read_text().replace('"Anna lives in Lyon."', '"Anna lives in Lyon." <!-- prov:p-nantes -->'))
    assert ("provenance_link", "duplicate_provenance_id") in codes(rejected(vault, wiki))


# ---- supersession sanity (deterministic) ----------------------------------------------------------------------

@pytest.mark.parametrize("mutate, code", [
    (lambda d: d["beliefs"][0].update(superseded_by_belief_id="b-missing"), "dangling_supersession"),
    (lambda d: d["beliefs"][0].update(superseded_by_belief_id="b-lyon"), "self_supersession"),
    (lambda d: d["beliefs"][1].update(superseded_by_belief_id="b-lyon", superseded_at="2026-06-01",
                                      supersession_reason="elaborated"), "supersession_cycle"),
    (lambda d: d["beliefs"][0].update(superseded_at="2025-12-01"), "superseded_before_asserted"),
    (lambda d: d["beliefs"][0].pop("supersession_reason"), "missing_supersession_reason"),
    (lambda d: d["beliefs"][1].update(subject="Weather", topic="weather"), "unjustified_supersession"),
])
def test_supersession_sanity_rejects(vault, wiki, mutate, code):
    edit_sidecar(wiki, mutate)
    assert ("supersession_sanity", code) in codes(rejected(vault, wiki))


# ---- model-judged checks through the Judge protocol ------------------------------------------------------------

def scripted(statement_vote: str = "supports", supersession_vote: str = "contradicts") -> CallableJudge:
    calls: list[str] = []

    def fn(prompt: str) -> dict:
        calls.append(prompt)
        if "Read this source quote and the belief statement" in prompt:
            return {"vote": statement_vote, "rationale": "scripted"}
        return json.dumps({"vote": supersession_vote, "rationale": "scripted"})

    judge = CallableJudge(fn, name="scripted")
    judge.calls = calls  # type: ignore[attr-defined]
    return judge


def findings(vault) -> dict[tuple[str, str], tuple[str, str | None, str]]:
    return {(b, c): (o, v, j) for b, c, o, v, j in vault.conn.execute(
        "SELECT belief_id, check_name, outcome, vote, judge FROM wiki_verifier_findings")}


def test_no_model_means_not_checked_never_passed(vault, wiki):
    [r] = vault.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=NoJudge())
    f = findings(vault)
    assert f[("b-nantes", "statement_support")] == ("not_checked", None, "none")
    assert f[("b-lyon", "statement_support")][0] == "not_checked"
    assert f[("b-lyon", "supersession_sanity")][0] == "not_checked"
    assert not any(o == "passed" for o, _, _ in f.values())
    assert r.counts["statement_support_not_checked"] == 2


def test_findings_follow_the_beliefs(vault, wiki):
    vault.ingest([wiki], as_of="2026-06-01T00:00:00Z")
    hist = vault.belief_history("b-lyon")
    assert {(f["check_name"], f["outcome"]) for f in hist["verifier_findings"]} == {
        ("statement_support", "not_checked"), ("supersession_sanity", "not_checked")}
    for key in ("superseded_at", "superseded_by_belief_id", "supersession_reason"):
        edit_sidecar(wiki, lambda d, key=key: d["beliefs"][0].pop(key))
    vault.ingest([wiki], as_of="2026-06-02T00:00:00Z")
    assert ("b-lyon", "supersession_sanity") not in findings(vault)
    assert ("b-lyon", "statement_support") in findings(vault)


def test_callable_judge_passes_and_is_not_asked_twice(vault, wiki):
    judge = scripted()
    vault.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=judge)
    assert findings(vault)[("b-nantes", "statement_support")] == ("passed", "supports", "scripted")
    assert findings(vault)[("b-lyon", "supersession_sanity")] == ("passed", "contradicts", "scripted")
    assert len(judge.calls) == 3   # 2 statements + 1 supersession
    prompt = next(p for p in judge.calls if "Anna lives in Nantes." in p and "Read this source quote" in p)
    assert "Anna moved to Nantes in May." in prompt   # the verbatim quote is what the judge reads
    vault.ingest([wiki], as_of="2026-06-02T00:00:00Z", judge=judge)
    assert len(judge.calls) == 3   # unchanged inputs keep their verdicts


def test_judge_rejects_unsupported_statement(vault, wiki):
    rej = rejected(vault, wiki, judge=scripted(statement_vote="does_not_support"))
    assert ("statement_support", "statement_not_supported") in codes(rej)


def test_partial_support_commits_with_a_warning_finding(vault, wiki):
    vault.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=scripted(statement_vote="partially_supports"))
    assert findings(vault)[("b-nantes", "statement_support")][:2] == ("warning", "partially_supports")


def test_judge_rejects_unjustified_or_mislabelled_supersession(vault, wiki):
    rej = rejected(vault, wiki, judge=scripted(supersession_vote="unrelated"))
    assert ("supersession_sanity", "unjustified_supersession") in codes(rej)
    rej = rejected(vault, wiki, judge=scripted(supersession_vote="refines"))
    assert ("supersession_sanity", "supersession_reason_mismatch") in codes(rej)


def test_broken_judge_answers_are_not_checked(vault, wiki):
    def fn(prompt: str):
        if "Nantes" in prompt and "Lyon" not in prompt:
            raise TimeoutError("model timed out")
        return "I think it supports it"

    vault.ingest([wiki], as_of="2026-06-01T00:00:00Z", judge=CallableJudge(fn, "flaky"))
    f = findings(vault)
    assert f[("b-nantes", "statement_support")][0] == "not_checked"
    assert f[("b-lyon", "statement_support")][0] == "not_checked"
    detail = vault.conn.execute("SELECT detail FROM wiki_verifier_findings WHERE belief_id='b-nantes' AND "
                                "check_name='statement_support'").fetchone()[0]
    assert "timed out" in detail


def test_rejection_keeps_the_previous_state(vault, wiki):
    def answer() -> dict:
        ans = vault.why("Anna")
        for b in ans["current_beliefs"] + ans["history"]:
            for s in b["supporting_sources"]:
                s.pop("verified_at")
        return ans

    vault.ingest([wiki], as_of="2026-06-01T00:00:00Z")
    good = answer()
    assert [b["belief_id"] for b in good["current_beliefs"]] == ["b-nantes"]
    edit_sidecar(wiki, lambda d: d["beliefs"][1].update(statement="y" * 300))
    rejected(vault, wiki)
    assert answer() == good


def test_cli_ingest_prints_reasons_and_exits_2(kenning, db, wiki):
    edit_sidecar(wiki, lambda d: d["beliefs"][1].update(provenance_ids=["p-nowhere"]))
    proc = kenning("ingest", str(wiki), "--as-of", "2026-06-01T00:00:00Z", db=db, check=False)
    assert proc.returncode == 2
    assert "rejected" in proc.stderr and "unknown_provenance_id" in proc.stderr and "nothing was committed" in proc.stderr
    failed = kenning("runs", "--failed", "--json", db=db)
    assert json.loads(failed.stdout)[0]["stage"] == "wiki"
