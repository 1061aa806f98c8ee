"""`kenning wiki verify RUN` (seed 002 "At verify time"): the hostile verifier over a staged run.

The wiki is read as it would be after the commit — ``wiki/`` with the run's ``staged/`` pages in place of their
namesakes, the run's new sources beside ``raw/`` — and the importer's checks run over it unchanged (coverage,
provenance link with quote anchors against the live raw bytes, supersession sanity); the model judges the pages
the run touches (statement support, supersession); then the convergence check: a contradiction this run records
carries its ``::: disputed`` block citing both sides. The verdict — commit, reject (with the reason codes) or
revise — goes to ``runs/<run_id>/verdict.json`` and into the vault as this stage's run row and events.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kenning.beliefs.judge import NOT_CHECKED, Judge, LLMJudge, NoJudge, Vote
from kenning.beliefs.wiki_import import Finding, _Run
from kenning.beliefs.wiki_run import VERDICT_FILE, RunFolder, RunFolderError, write_json
from kenning.beliefs.wiki_stage import live_beliefs
from kenning.pipeline.runner import StageContext
from kenning.sources import wiki as wikisrc
from kenning.sources.jcs import jcs_hash
from kenning.store import beliefs as sql

COMMIT, REJECT, REVISE = "commit", "reject", "revise"
CHECKS = ("coverage", "provenance_link", "supersession_sanity", "statement_support", "convergence")
_DISPUTED_OPEN = re.compile(r"^\s{0,3}:::\s*disputed\b", re.I)
_FENCE_CLOSE = re.compile(r"^\s{0,3}:::\s*$")


def statement_key(statement: str, quotes: list[str]) -> str:
    return jcs_hash(["statement_support", statement, quotes])


def supersession_key(old: str, new: str, reason: str) -> str:
    return jcs_hash(["supersession", old, new, reason])


class ScopedJudge:
    """Asks the real judge only about the run's pages (the rest of the wiki was judged when it was committed)
    and remembers every vote, so the commit replays exactly what the verifier saw."""

    def __init__(self, inner: Judge, statements: set[str]):
        self.inner, self.statements = inner, statements
        self.name = inner.name
        self.votes: dict[str, dict] = {}

    def _keep(self, key: str, v: Vote) -> Vote:
        self.votes[key] = {"vote": v.vote, "rationale": v.rationale, "error": v.error}
        return v

    def statement_support(self, statement: str, quotes: list[str]) -> Vote:
        if statement not in self.statements:
            return Vote(NOT_CHECKED, error="not on a page of this run")
        return self._keep(statement_key(statement, quotes), self.inner.statement_support(statement, quotes))

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote:
        if new_statement not in self.statements and old_statement not in self.statements:
            return Vote(NOT_CHECKED, error="not on a page of this run")
        return self._keep(supersession_key(old_statement, new_statement, reason),
                          self.inner.supersession(old_statement, new_statement, reason))


class RecordedJudge:
    """The verifier's votes, replayed at commit time (no model call, no second opinion)."""

    def __init__(self, name: str, votes: dict[str, dict]):
        self.name, self.votes = name, votes

    def _get(self, key: str) -> Vote:
        v = self.votes.get(key)
        if v is None:
            return Vote(NOT_CHECKED, error="not judged by this run's verifier")
        return Vote(v["vote"], v.get("rationale"), v.get("error"))

    def statement_support(self, statement: str, quotes: list[str]) -> Vote:
        return self._get(statement_key(statement, quotes))

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote:
        return self._get(supersession_key(old_statement, new_statement, reason))


class OverlayRun(_Run):
    """The importer's checks over the wiki as the run would leave it."""

    def __init__(self, ctx: StageContext, run: RunFolder, workspace: str, judge: Any):
        super().__init__(ctx, run.root, workspace, judge, False)
        self.runf = run
        self.run_pages = {p for p in run.staged_files() if p.endswith(".md")}

    def judge_checks(self, beliefs: dict[str, dict], rows: dict[str, dict]) -> list[dict]:
        """Only the run's pages are judged; the rest of the wiki keeps the findings it was committed with."""
        mine = {b: r for b, r in rows.items() if beliefs[b]["_page"] in self.run_pages}
        out = super().judge_checks(beliefs, mine)
        self.applicable |= {k for k in sql.findings_of(self.ctx.conn, self.workspace) if k[0] in rows
                            and k[0] not in mine}
        return out

    def scan_tree(self) -> wikisrc.WikiTree:
        return wikisrc.scan_overlay(self.root, self.wcfg.wiki_dir, self.wcfg.raw_dir, self.wcfg.sidecar_suffix,
                                    self.runf.staged)

    def raw_file(self, raw_path: str) -> Path:
        carried = self.runf.dir / raw_path
        return carried if carried.is_file() else self.root / raw_path

    def page_text(self, path: str) -> str:
        f = self.runf.staged / path[len(self.wcfg.wiki_dir.rstrip("/")) + 1:]
        return (f if f.is_file() else self.root / path).read_text(encoding="utf-8", errors="replace")


def disputed_blocks(text: str) -> list[set[str]]:
    """The footnote keys cited inside each ``::: disputed`` … ``:::`` block of a page."""
    blocks: list[set[str]] = []
    current: set[str] | None = None
    for line in text.split("\n"):
        if current is None:
            if _DISPUTED_OPEN.match(line):
                current = set(wikisrc._FOOTNOTE_REF.findall(line.split("disputed", 1)[1]))
            continue
        if _FENCE_CLOSE.match(line):
            blocks.append(current)
            current = None
        else:
            current |= set(wikisrc._FOOTNOTE_REF.findall(line))
    if current is not None:   # an unclosed block still hedges what it holds
        blocks.append(current)
    return blocks


def _ids(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def convergence_findings(r: OverlayRun, tree: wikisrc.WikiTree, beliefs: dict[str, dict],
                         live: dict[str, dict], staged_pages: set[str]) -> tuple[list[Finding], int]:
    """Seed 002 "Convergence check enforces the hedge marker is present": every contradiction this run records
    (a new ``contradicted_by_new_source`` supersession, or a new ``contradicting_belief_ids`` entry) has a
    ``::: disputed`` block on the new belief's page citing a footnote of the new belief and one that quotes a
    source of the old belief."""
    pairs: list[tuple[str, str]] = []
    for bid, b in beliefs.items():
        if b["_page"] not in staged_pages and (b["superseded_by_belief_id"] or "") not in beliefs:
            continue
        was = live.get(bid, {})
        if b["supersession_reason"] == "contradicted_by_new_source" and b["superseded_by_belief_id"] and \
                (was.get("superseded_by_belief_id"), was.get("supersession_reason")) != \
                (b["superseded_by_belief_id"], b["supersession_reason"]):
            pairs.append((bid, b["superseded_by_belief_id"]))
        for other in b["contradicting_belief_ids"]:
            if other not in _ids(was.get("contradicting_belief_ids")):
                pairs.append((other, bid))
    out: list[Finding] = []
    for old_id, new_id in sorted(set(pairs)):
        new = beliefs.get(new_id)
        if new is None:
            continue
        page = tree.pages.get(new["_page"])
        if page is None:
            continue
        old = beliefs.get(old_id)
        old_sources = {r.provenance[p]["raw_path"] for p in (old or {}).get("provenance_ids", [])
                       if p in r.provenance}
        old_keys = set(old["footnote_ids"]) if old and old["_page"] == new["_page"] else set()
        old_keys |= {k for k, fn in page.footnotes.items() if fn.raw_path in old_sources} - set(new["footnote_ids"])
        text = r.page_text(new["_page"])
        hedged = any(keys & set(new["footnote_ids"]) and keys & old_keys for keys in disputed_blocks(text))
        if not hedged:
            out.append(Finding("convergence", "missing_disputed_block",
                               f"{new_id} contradicts {old_id}, but {new['_page']} has no ::: disputed block citing "
                               f"both (footnotes {sorted(new['footnote_ids'])} and {sorted(old_keys) or '?'})",
                               new["_page"], new_id))
    return out, len(set(pairs))


def verify_run(ctx: StageContext, run: RunFolder, workspace: str, judge: Judge) -> dict[str, Any]:
    """Every check over the run; the verdict (also written to ``verdict.json``)."""
    config = ctx.config
    content_hash = run.content_hash()
    changed = run.changed_files()
    staged_pages = {p for p in run.staged_files() if p.endswith(".md")}
    r = OverlayRun(ctx, run, workspace, NoJudge())
    tree, beliefs, final, _existing, _docs = r.prepare()
    live = live_beliefs(run.root, config)
    conv, contradictions = convergence_findings(r, tree, beliefs, live, staged_pages)
    r.findings.extend(conv)
    scoped = ScopedJudge(judge, {b["statement"] for b in beliefs.values() if b["_page"] in staged_pages})
    judged: list[dict] = []
    if not r.findings:
        r.judge = scoped
        judged = r.judge_checks(beliefs, final)
    prior = sql.findings_of(ctx.conn, workspace)
    per_belief = []
    model = judge.name != "none"
    revise: list[dict] = []
    wp = config.beliefs.write_path
    by_key = {(j["belief_id"], j["check_name"]): j for j in judged}
    for bid in sorted(b for b, v in beliefs.items() if v["_page"] in staged_pages):
        entry: dict[str, Any] = {"belief_id": bid, "page": beliefs[bid]["_page"],
                                 "statement": beliefs[bid]["statement"]}
        for check in ("statement_support", "supersession_sanity"):
            j = by_key.get((bid, check))
            if j is None and (bid, check) in getattr(r, "applicable", set()):
                old = prior.get((bid, check))
                j = old and {**old, "earlier": True}
            if j is None:
                if check == "statement_support":
                    entry[check] = {"outcome": "skipped" if r.findings else NOT_CHECKED,
                                    "detail": "deterministic checks failed first" if r.findings else None}
                continue
            entry[check] = {"outcome": j["outcome"], "vote": j["vote"], "detail": j["detail"],
                            "judge": j["judge"], "earlier": bool(j.get("earlier"))}
            if j["outcome"] == "warning" and j["vote"] in wp.revise_statement_votes:
                revise.append({"code": "statement_partially_supported", "belief_id": bid,
                               "message": f"{bid}: the judge voted {j['vote']}: {j['detail'] or ''}".strip()})
            elif j["outcome"] == NOT_CHECKED and model and not j.get("earlier"):
                revise.append({"code": "judge_unavailable", "belief_id": bid,
                               "message": f"{bid}: {check} could not be judged ({j['detail']}); verify again"})
        per_belief.append(entry)
    if not set(changed) & set(run.staged_files()):   # a new source alone is no edit of the wiki
        revise.append({"code": "no_changes", "belief_id": None,
                       "message": "the staged pages are the same as the wiki's; edit them, then verify again"})
    findings = [{"check": f.check, "code": f.code, "message": f.message, "page": f.page, "belief_id": f.belief_id}
                for f in r.findings]
    verdict = REJECT if findings else REVISE if revise else COMMIT
    failed_checks = {f["check"] for f in findings}
    statement_outcomes = {e.get("statement_support", {}).get("outcome") for e in per_belief}
    checks = {c: ("failed" if c in failed_checks else "passed") for c in CHECKS}
    if "failed" not in statement_outcomes and checks["statement_support"] == "passed":
        checks["statement_support"] = ("skipped" if findings else
                                       "not_checked" if statement_outcomes & {NOT_CHECKED} and not model else
                                       "revise" if any(x["code"] != "no_changes" for x in revise) else "passed")
    result = {
        "run_id": run.run_id, "workspace": workspace, "verdict": verdict,
        "reasons": sorted({f["code"] for f in findings} if findings else {x["code"] for x in revise}),
        "findings": findings, "revise": revise, "checks": checks, "beliefs": per_belief,
        "judge": judge.name, "llm": ctx.llm_mode, "votes": scoped.votes, "contradictions": contradictions,
        "changed_files": sorted(changed), "content_hash": content_hash, "verified_at": ctx.started_at_utc,
        "vault_run_id": ctx.run_id,
    }
    write_json(run.dir / VERDICT_FILE, result)
    return result


class WikiVerify:
    """Side stage ``wiki-verify``: the verdict for one run; nothing in the ledger or ``wiki/`` changes."""

    name = "wiki-verify"
    title = "verify a staged wiki run"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.llm.client import open_llm_run

        run: RunFolder = ctx.inputs["run"]
        if run.committed() is not None:
            raise RunFolderError(f"{run.run_id} is already committed; stage a new run for further edits")
        ws = ctx.inputs["workspace"]
        if ctx.llm_mode == "none":
            result = verify_run(ctx, run, ws, NoJudge())
        else:
            with open_llm_run(ctx, "wiki_verifier") as llm:
                result = verify_run(ctx, run, ws, LLMJudge(llm))
        for f in result["findings"]:
            ctx.event("WARN", f"VERDICT_{f['code'].upper()}", f["message"], check=f["check"], page=f["page"],
                      belief_id=f["belief_id"], wiki_run=run.run_id)
        for x in result["revise"]:
            ctx.event("WARN", f"REVISE_{x['code'].upper()}", x["message"], belief_id=x["belief_id"],
                      wiki_run=run.run_id)
        ctx.inputs["result"] = result
        return {"wiki_run": run.run_id, "verdict": result["verdict"], "reasons": result["reasons"],
                "checks": result["checks"], "findings": len(result["findings"]), "judge": result["judge"],
                "beliefs_checked": len(result["beliefs"])}
