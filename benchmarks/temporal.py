"""Stage 5 on a synthetic export against the persona's true home and employer (issue 22 §5; decisions T40–T47).

    python benchmarks/temporal.py [--conversations 2000] [--seeds 1,2] [--tmp DIR]
    python benchmarks/run.py temporal [--temporal-conversations 2000] [--temporal-seeds 1,2]

For each seed: ``kenning bench synth`` writes the export and its manifest (``persona.timeline``: Berlin → Paris,
Acme Corp → Globex, with the true change days), stages 0–5 ingest it (rules only, hash embedder, no model), and
``kenning.bench.timeline_eval.evaluate`` scores stage 5's rows. The baseline, in the same run on the same vault, is
stage 5 again with the seed's eligibility (explicit valid time only: ``observed_states_eligible`` and
``context_dated_by_conversation`` off). Goals (issue 22): closed correctly ≥ 0.90, wrongly current ≤ 0.05.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.bench.synth import write_export  # noqa: E402
from kenning.bench.timeline_eval import evaluate  # noqa: E402
from kenning.detect.entities import self_entity_id  # noqa: E402
from kenning.sources.ids import IdFactory  # noqa: E402

AS_OF = "2025-01-01T00:00:00Z"
HASH = {"embeddings": {"backend": "hash"}}
SEED_RULE = {"pipeline": {"temporal_reasoning": {"observed_states_eligible": False,
                                                 "context_dated_by_conversation": False}}}
KEEP = ("closed_correctly_ratio", "wrongly_current_ratio", "changes_closed_ratio", "current_kept_ratio",
        "ended_mentions", "closed_correctly", "wrongly_current", "current_mentions", "current_kept", "changes",
        "changes_closed", "other_mentions", "other_current", "ineligible")


def _status_mix(vault: Vault) -> dict[str, int]:
    return dict(vault.conn.execute("SELECT status, COUNT(*) FROM assertion_temporalized GROUP BY 1 ORDER BY 1"))


def _score(db: Path, export: Path, manifest: dict, overrides: dict) -> dict[str, Any]:
    with Vault.open(db, overrides={**HASH, **overrides}) as v:
        t = time.perf_counter()
        v.ingest([export], as_of=AS_OF, stages="5", llm="none")
        secs = time.perf_counter() - t
        r = evaluate(v.conn, manifest["persona"]["timeline"], self_entity_id(IdFactory()), manifest["timeline"]["to"])
        return {**{k: r[k] for k in KEEP}, "stage5_s": round(secs, 2), "status_mix": _status_mix(v),
                "per_predicate": {p: {k: x for k, x in d.items() if k != "misses"} for p, d in r["predicates"].items()},
                "misses": {p: d["misses"] for p, d in r["predicates"].items() if d["misses"]}}


def run_seed(n: int, seed: int, tmp: Path) -> dict[str, Any]:
    export = tmp / f"synth-{n}-{seed}.json"
    stats = write_export(export, n, seed)
    manifest = json.loads(Path(stats["manifest_path"]).read_text())
    db = tmp / f"synth-{n}-{seed}.db"
    db.unlink(missing_ok=True)
    t = time.perf_counter()
    with Vault.open(db, overrides=HASH) as v:
        v.ingest([export], as_of=AS_OF, stages="0,1,2A,2B,3,4", llm="none")
    ingest_s = time.perf_counter() - t
    baseline = _score(db, export, manifest, SEED_RULE)
    kenning = _score(db, export, manifest, {})
    return {"conversations": n, "seed": seed, "messages": manifest["messages"],
            "ingest_0_4_s": round(ingest_s, 1), "timeline": manifest["persona"]["timeline"],
            "kenning": kenning, "baseline_seed_eligibility": baseline}


def run_all(n: int, seeds: list[int], tmp: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=tmp, prefix="kenning-temporal-") as d:
        out = {}
        for s in seeds:
            out[str(s)] = run_seed(n, s, Path(d))
            k, b = out[str(s)]["kenning"], out[str(s)]["baseline_seed_eligibility"]
            print(json.dumps({"temporal": {"seed": s, "closed_correctly": [k["closed_correctly_ratio"],
                                                                         b["closed_correctly_ratio"]],
                                           "wrongly_current": [k["wrongly_current_ratio"],
                                                               b["wrongly_current_ratio"]]}}), flush=True)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    print(json.dumps(run_all(args.conversations, [int(s) for s in args.seeds.split(",")], args.tmp), indent=2))


if __name__ == "__main__":
    main()
