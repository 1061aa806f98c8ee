"""Issue 24 §1: a full default `kenning ingest` of a synthetic export — time until every non-vector lane is ready,
then until the vector lane is complete — beside baselines measured in the same run.

    python benchmarks/run.py ingest_ready --ingest-sizes 100k      # (registered in run.py)

Steps, each in a fresh process (wall, CPU, peak RSS):
  1. `json.load` of the export (baseline; best of 2);
  2. `kenning ingest EXPORT` with the default config except ``vector_fill.mode: manual`` (so that the fill is not
     detached and can be measured) → time-to-ready;
  3. `kenning reindex --vectors` (exactly what the default background fill runs) → time-to-vectors-complete is
     step 2 + step 3;
  4. the encoder on a sample of the vault's embedded texts: the pre-change batching (64 texts a run) against the
     token-budget batching (``embeddings.minilm.onnx_batch_tokens``), interleaved, same process (baseline).
The machine's load average is recorded before and after (the box is shared).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _harness import best, measure_code, measure_module  # noqa: E402

SIZES = {"1k": 50, "10k": 500, "100k": 5000}
JSON_LOAD = "import json, sys\nwith open(ARGS[0], 'rb') as f:\n    json.load(f)\n"
ENCODER = """
import json, random, sys, time
from pathlib import Path
import apsw
from kenning.llm import onnx_minilm
from kenning.llm.embed import minilm_model_path
db, n, out = ARGS[0], int(ARGS[1]), ARGS[2]
from kenning.config import load_config
from kenning.retrieve.vector_fill import texts_of_items
from kenning.store import rawpack
conn = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
rawpack.register(conn)  # the documents' texts come through the raw views
# the search space keeps no text (X2): the fill derives it from the documents, so the sample does too
ids = [i for (i,) in conn.execute("SELECT item_id FROM vector_items WHERE space='search' ORDER BY vid")]
texts = [t for t in texts_of_items(conn, load_config(), ids).values() if t]
random.Random(7).shuffle(texts)
texts = texts[:n]
m = onnx_minilm.load_onnx_minilm(minilm_model_path(), max_seq_length=128, threads=0 or len(__import__('os').sched_getaffinity(0)))
res = {"texts": len(texts), "old_64_per_run_s": [], "token_budget_1024_s": []}
for _ in range(2):
    t = time.perf_counter(); m.encode(texts, batch_size=64); res["old_64_per_run_s"].append(round(time.perf_counter() - t, 2))
    t = time.perf_counter(); m.encode(texts, batch_size=64, batch_tokens=1024); res["token_budget_1024_s"].append(round(time.perf_counter() - t, 2))
Path(out).write_text(json.dumps(res))
"""


def run(sizes: str, tmp: str | None, sample: int = 1000) -> dict[str, Any]:
    from kenning.bench.synth import write_export

    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kenning-ready-", dir=tmp) as wd:
        for label in sizes.split(","):
            entry: dict[str, Any] = {"load_avg_before": [round(x, 2) for x in os.getloadavg()]}
            src = Path(wd) / f"synth-{label}.json"
            stats = write_export(src, SIZES[label], seed=3)
            entry.update(messages=stats["messages"], export_mb=round(stats["bytes"] / 1e6, 1))
            base = best(lambda: measure_code(JSON_LOAD, str(src)), 2)
            entry["json_load"] = {"wall_s": round(base.wall, 2), "peak_rss_mb": round(base.peak_rss_mb, 1)}
            cfg = Path(wd) / "manual.yaml"
            cfg.write_text("vector_fill:\n  mode: manual\n")
            db = Path(wd) / f"{label}.db"
            ing = measure_module("kenning", "ingest", str(src), "--db", str(db), "--config", str(cfg), "-q", "--json",
                                 "--as-of", "2025-01-01T00:00:00Z", "--llm", "none")
            entry["ingest_to_ready"] = {"wall_s": round(ing.wall, 1), "cpu_s": round(ing.cpu, 1),
                                        "peak_rss_mb": round(ing.peak_rss_mb, 1)}
            print(json.dumps({"ingest_ready": {label: entry}}), flush=True)
            fill = measure_module("kenning", "reindex", "--vectors", "--db", str(db), "--config", str(cfg), "-q",
                                  "--as-of", "2025-01-01T00:00:00Z")
            entry["fill_vectors"] = {"wall_s": round(fill.wall, 1), "cpu_s": round(fill.cpu, 1),
                                     "peak_rss_mb": round(fill.peak_rss_mb, 1)}
            entry["time_to_ready_s"] = round(ing.wall, 1)
            entry["time_to_vectors_complete_s"] = round(ing.wall + fill.wall, 1)
            entry["ratio_ready_to_json_load"] = round(ing.wall / max(base.wall, 1e-6), 1)
            print(json.dumps({"ingest_ready": {label: entry}}), flush=True)
            import apsw

            conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
            q = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
            entry["vault"] = {"search_docs": q("SELECT COUNT(*) FROM search_docs"),
                              "search_vectors": q("SELECT COUNT(*) FROM vector_items WHERE space='search'"),
                              "distinct_texts": q("SELECT COUNT(DISTINCT text_sha256) FROM vector_items "
                                                  "WHERE space='search'"),
                              "skipped": dict(conn.execute("SELECT reason, COUNT(*) FROM search_vector_skips "
                                                           "GROUP BY reason").fetchall()),
                              "db_mb": round(db.stat().st_size / 1e6, 1),
                              "db_over_export": round(db.stat().st_size / stats["bytes"], 2),
                              "free_mb": round(q("PRAGMA freelist_count") * q("PRAGMA page_size") / 1e6, 1),
                              "tables_mb": {n: round(b / 1e6, 1) for n, b in conn.execute(
                                  "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 16")}}
            conn.close()
            out = Path(wd) / "enc.json"
            measure_code(ENCODER, str(db), str(sample), str(out))
            entry["encoder_sample"] = json.loads(out.read_text())
            entry["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
            report[label] = entry
            print(json.dumps({"ingest_ready": {label: entry}}), flush=True)
    return report
