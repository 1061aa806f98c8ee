"""`kenning beliefs verify` (re-hash every quote anchor against its live source) and the M1 procedure of seed
002 ("How beliefs make M1 sharper": sample current beliefs, hash gate first, then the judge)."""

from __future__ import annotations

import random
import time
from typing import Any

import apsw

from kenning.beliefs.judge import NOT_CHECKED, Judge
from kenning.beliefs.quotes import DRIFTED, RELOCATED, SOURCE_MISSING, VERIFIED, LiveSources
from kenning.beliefs.why import live_sources
from kenning.config import Config
from kenning.store import beliefs as sql


def verify_quotes(conn: apsw.Connection, workspace: str | None = None, max_listed: int = 1000) -> dict[str, Any]:
    """Every quote anchor, re-hashed against the live raw file / message. Read-only."""
    t0 = time.perf_counter()
    counts = {VERIFIED: 0, RELOCATED: 0, DRIFTED: 0, SOURCE_MISSING: 0}
    problems: list[dict] = []
    live = live_sources(conn)
    current_file: tuple[str, str] | None = None
    for chunk in sql.iter_provenance(conn, workspace):
        live.forget_messages()
        live.prefetch_messages([p["message_id"] for p in chunk if p["message_id"]])
        for p in chunk:
            if p["raw_path"] is not None and (p["workspace"], p["raw_path"]) != current_file:
                live.forget_files()   # rows come grouped by file: one file in memory at a time
                current_file = (p["workspace"], p["raw_path"])
            v = live.verify(p)
            counts[v.status] += 1
            if not v.verified or v.status == RELOCATED:
                problems.append({"provenance_id": p["id"], "workspace": p["workspace"], "status": v.status,
                                 "source_kind": p["source_kind"], "raw_path": p["raw_path"],
                                 "message_id": p["message_id"], "char_start": p["char_start"],
                                 "char_end": p["char_end"], "quote": p["quote"], "detail": v.detail})
    seconds = time.perf_counter() - t0
    citing = sql.beliefs_citing(conn, [p["provenance_id"] for p in problems])
    for p in problems:
        p["belief_ids"] = citing.get(p["provenance_id"], [])
    drifted = [p for p in problems if p["status"] in (DRIFTED, SOURCE_MISSING)]
    checked = sum(counts.values())
    return {
        "workspace": workspace, "quotes_checked": checked, "verified": counts[VERIFIED],
        "relocated": counts[RELOCATED], "drifted": counts[DRIFTED], "source_missing": counts[SOURCE_MISSING],
        "seconds": round(seconds, 4), "quotes_per_second": round(checked / seconds) if seconds > 0 else None,
        "drifted_quotes": drifted[:max_listed], "relocated_quotes": [p for p in problems if p["status"] == RELOCATED][:max_listed],
        "beliefs_with_drifted_quotes": sorted({b for p in drifted for b in p["belief_ids"]}),
    }


def m1(conn: apsw.Connection, config: Config, judge: Judge, workspace: str | None = None, sample: int | None = None,
       seed: int | None = None) -> dict[str, Any]:
    """M1 = supports / total over a seeded random sample of current beliefs.

    A belief whose quote fails the hash check is `does_not_support` without asking the judge. With no judge
    (``--llm none``) the rest are `not_checked` and M1 is reported as null — never as a pass (W14).
    """
    cfg = config.beliefs
    ws = workspace or cfg.default_workspace
    n = sample or cfg.m1.sample_size
    rng = random.Random(cfg.m1.sample_seed if seed is None else seed)
    ids = sql.current_belief_ids(conn, ws)
    chosen = sorted(rng.sample(ids, min(n, len(ids))))
    beliefs = sql.get_beliefs(conn, chosen)
    provs = sql.provenance_for_beliefs(conn, chosen)
    live: LiveSources = live_sources(conn)
    results = []
    tally = {"supports": 0, "partially_supports": 0, "does_not_support": 0, NOT_CHECKED: 0}
    calls = 0
    for bid in chosen:
        checks = [live.verify(p) for p in provs[bid]]
        gate = bool(checks) and all(v.verified for v in checks)
        if not gate:
            vote, rationale = "does_not_support", "hash gate: a supporting quote no longer matches its source"
        else:
            calls += 1
            v = judge.statement_support(beliefs[bid]["statement"], [p["quote"] for p in provs[bid]])
            vote, rationale = v.vote, v.rationale or v.error
        tally[vote] += 1
        results.append({"belief_id": bid, "statement": beliefs[bid]["statement"], "hash_gate": gate, "vote": vote,
                        "rationale": rationale})
    total = len(chosen)
    return {
        "workspace": ws, "sample_size": total, "population": len(ids), "judge": judge.name, "judge_calls": calls,
        "hash_gate_failed": sum(1 for r in results if not r["hash_gate"]), "votes": tally,
        "m1": round(tally["supports"] / total, 4) if total and tally[NOT_CHECKED] == 0 else None,
        "m1_note": None if not tally[NOT_CHECKED] else
        f"{tally[NOT_CHECKED]} of {total} beliefs were not judged (no model); M1 needs a judge",
        "results": results,
    }
