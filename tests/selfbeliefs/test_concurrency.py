"""seed 000 §4.10 / §5.4 ``unique_canonical_hash_retry``: two processes resolve the same new belief at once. Both
find no node (phases 1–8 read), then both write: one creates the node, the other's INSERT hits the unique
constraint, waits, re-reads and links its occurrence to the node the first one made — one node, two occurrences."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import SRC, run_cli
from selfbeliefs.helpers import AS_OF, hash_config, multi_export

WORKER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from kenning.config import load_config
    from kenning.pipeline.clock import Clock
    from kenning.selfbelief.stage import current_version
    from kenning.selfbelief.extractor import HTNBeliefExtractor
    from kenning.sources.ids import IdFactory
    from kenning.store.connection import open_store
    from kenning.store import selfbeliefs as sql

    db, cfg_path, exp_id, me, other = sys.argv[1:6]
    config = load_config(cfg_path, Path(db))
    conn = open_store(Path(db), busy_timeout_ms=20000)
    version = current_version(config, "none")
    [exp] = sql.pending_experiences(conn, version, experience_ids=[exp_id])
    sleeps = []

    def barrier(experience, plans):
        outcomes = [p.resolution.outcome for p in plans]
        Path(me).write_text(json.dumps(outcomes))
        deadline = time.time() + 60
        while not Path(other).exists():
            if time.time() > deadline:
                raise SystemExit("the other worker never got here")
            time.sleep(0.01)

    ex = HTNBeliefExtractor(conn, config, clock=Clock.from_option("2024-01-01T00:00:00Z"),
                            ids=IdFactory(config.ids.id_namespace), run_id="worker-" + exp_id[:8],
                            extractor_version=version, before_write=barrier, sleep=lambda s: sleeps.append(s))
    res = ex.extract_and_update_self_knowledge(exp)
    print(json.dumps({"planned": json.loads(Path(me).read_text()), "created": res.nodes_created,
                      "matched": res.nodes_matched, "retries": res.retries, "sleeps": sleeps}))
""")


def test_two_processes_resolve_the_same_new_belief(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    src = multi_export(tmp_path / "two.json", [("a", 1700000000, [("user", "I am a night owl.")]),
                                               ("b", 1700000100, [("user", "I'm a night owl!")])])
    run_cli("ingest", str(src), "--config", str(cfg), "--stages", "0,1", "--as-of", AS_OF, db=db)
    # detection only (no experience processed yet)
    out = json.loads(run_cli("self", "backfill", "--limit", "0", "--config", str(cfg), "--json", "--as-of", AS_OF,
                             db=db).stdout)
    assert out["experiences_new"] == 2 and out["experiences_processed"] == 0
    from kenning.store.connection import open_store

    c = open_store(db, readonly=True)
    exps = [r[0] for r in c.execute("SELECT experience_id FROM experiences ORDER BY occurred_at")]
    c.close()
    env = {"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    flags = [tmp_path / "ready-a", tmp_path / "ready-b"]
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(db), str(cfg), e, str(flags[i]), str(flags[1 - i])],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i, e in enumerate(exps)]
    results = []
    for p in procs:
        so, se = p.communicate(timeout=120)
        assert p.returncode == 0, se
        results.append(json.loads(so.strip().splitlines()[-1]))
    # both planned a new node …
    assert [r["planned"] for r in results] == [["no_match"], ["no_match"]]
    # … one created it, the other hit the unique constraint, retried once (100 ms) and matched it
    created = [r for r in results if r["created"]]
    retried = [r for r in results if r["retries"]]
    assert len(created) == 1 and len(retried) == 1 and retried[0]["matched"] == created[0]["created"]
    assert retried[0]["sleeps"] == [0.1]
    c = open_store(db, readonly=True)
    assert c.execute("SELECT COUNT(*) FROM belief_nodes").fetchone()[0] == 1
    occ = c.execute("SELECT belief_id, resolution, signals_json FROM belief_occurrences ORDER BY belief_id").fetchall()
    c.close()
    assert len(occ) == 2 and occ[0][0] == occ[1][0] == created[0]["created"][0]
    assert sorted(o[1] for o in occ) == ["match", "no_match"]
    assert any(json.loads(o[2])["resolution"].get("concurrency_retry") == 1 for o in occ)
