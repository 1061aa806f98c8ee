"""Intake funnel speed (issue 18): observations assessed per second by the `intake` stage (envelope, rule features,
scoreImportance, resolveExtractionPolicy, one stored decision, the queue row or skip audit) and queue rows drained
per second by `extract` with no extractors registered (the queue's own cost), on `kenning bench synth` output.
The baseline, measured in the same run, is a bare pass over the same messages that reads each text and hashes it
(the least any per-observation step must do) — results are ratios against it. §20A.2 asks < 100 ms per shallow
observation.

    python benchmarks/intake.py [--conversations 300] [--seed 1] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.bench.synth import write_export  # noqa: E402
from kenning.intake import extractors as seam  # noqa: E402

AS_OF = "2024-06-01T00:00:00Z"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tmp", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.tmp) as d:
        export = Path(d) / "synth.json"
        write_export(export, a.conversations, a.seed)
        v = Vault.open(Path(d) / "v.db", overrides={"embeddings": {"backend": "hash"}})
        # the funnel reads conversations and the node store's aliases: raw import + the bridge's inputs
        v.ingest([export], as_of=AS_OF, stages="0,1,2A,2B,3,knowledge")
        texts = [r[0] or "" for r in v.conn.execute("SELECT text_raw FROM messages WHERE is_hidden=0")]
        t0 = time.perf_counter()
        for t in texts:
            hashlib.sha256(t.encode()).hexdigest()
        base_s = time.perf_counter() - t0
        # a second baseline: one bare row written per message in one transaction (what storing a decision costs
        # at the least)
        v.conn.execute("CREATE TEMP TABLE bench_rows (k TEXT PRIMARY KEY, v TEXT)")
        t0 = time.perf_counter()
        with v.conn:
            for i, t in enumerate(texts):
                v.conn.execute("INSERT INTO bench_rows VALUES (?, ?)", (hashlib.sha256(f"{i}:{t}".encode()).hexdigest(),
                                                                       str(i)))
        insert_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        (intake,) = v.ingest([export], as_of=AS_OF, stages="intake")
        intake_s = time.perf_counter() - t0
        obs = v.conn.execute("SELECT COUNT(*) FROM intake_observations").fetchone()[0]
        seam.registered = lambda: {}  # the queue's own cost: no miners
        t0 = time.perf_counter()
        (extract,) = v.ingest([export], as_of=AS_OF, stages="extract")
        extract_s = time.perf_counter() - t0
        rows = extract.counts.get("extractions", 0)
        v.close()
    out = {"conversations": a.conversations, "observations": obs, "messages": len(texts),
           "intake_s": round(intake_s, 3), "observations_per_s": round(obs / intake_s, 1),
           "ms_per_observation": round(1000 * intake_s / obs, 3),
           "baseline_ms_per_message": round(1000 * base_s / max(1, len(texts)), 4),
           "ratio_vs_baseline": round((intake_s / obs) / (base_s / max(1, len(texts))), 1),
           "insert_baseline_ms_per_message": round(1000 * insert_s / max(1, len(texts)), 4),
           "ratio_vs_insert_baseline": round((intake_s / obs) / (insert_s / max(1, len(texts))), 1),
           "queue_rows": rows, "extract_s": round(extract_s, 3),
           "rows_per_s": round(rows / extract_s, 1) if extract_s and rows else None,
           "decisions": {k: v for k, v in intake.counts.items() if k.startswith(("decision_", "reason_"))}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
