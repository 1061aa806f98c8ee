"""The maintain DAG end to end: a real `kenning maintain` subprocess killed by SIGKILL mid-run, then a rerun,
ends with exactly what an uninterrupted run leaves; a failing step keeps the prior generation; --dry-run changes
nothing; `kenning health --json` and `kenning maintain --json` show the seed's fields; Vault.health()."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from kenning.api import Vault
from kenning.config import load_config
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store
from kenning.upkeep.maintain import dag
from kenning.upkeep.maintain.dag import CHANGE_FIELDS, MaintainError, maintain
from tests.conftest import SRC, run_cli
from tests.upkeep_maintain.helpers import T0, db_state, edge, node

NOW = "2026-04-20T09:00:00.000Z"


def build(path) -> None:
    """A vault where every step has work: an old candidate, an exact-alias pair, a typo pair, a decaying
    promoted edge, a weekly trio in four threads."""
    c = open_store(path)
    node(c, "Old Observed")
    rob = node(c, "Robert Smith", state="confirmed", aliases=("Bob",))
    node(c, "Bob", state="confirmed")
    node(c, "Anna Lindqvist", state="confirmed")
    node(c, "Anne Lindqvist", state="confirmed")
    acme = node(c, "Acme", state="confirmed")
    edge(c, rob, "part_of", acme, confidence=0.3, payload={"learned_by": "backlink_pipeline_v2"})
    weeks = [f"2026-01-{d:02d}T09:00:00.000Z" for d in (5, 12, 19, 26)]
    for pos, (name, kind) in enumerate((("Mia", "world_entity"), ("Budget sheet", "work_product"))):
        node(c, name, kind=kind, state="confirmed", seen=tuple((f"sync{i}", pos, w) for i, w in enumerate(weeks)))
    for i in range(5):
        node(c, f"Topic {i}", state="confirmed", seen=((f"other{i}", 0, f"2026-01-{i + 2:02d}T09:00:00.000Z"),))
    c.close()


@pytest.fixture
def vault_file(tmp_path):
    p = tmp_path / "v.db"
    build(p)
    return p


def _env(extra=None):
    return {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "NO_COLOR": "1",
            **(extra or {})}


def _ok_steps(path) -> set[str]:
    c = open_store(path, readonly=True)
    try:
        return {s for (s,) in c.execute("SELECT step FROM maintain_steps WHERE status='ok'")}
    except Exception:
        return set()
    finally:
        c.close()


@pytest.mark.slow
def test_a_run_killed_mid_way_resumes_to_the_same_result(tmp_path, vault_file):
    straight = tmp_path / "straight.db"
    shutil.copy(vault_file, straight)
    full = json.loads(run_cli("maintain", "--now", NOW, "--json", db=straight).stdout)
    assert full["status"] == "ok" and full["changes"] > 0 and not full["resumed"]
    assert full["folded_pair_count"] == 1 and full["archived_node_count"] == 1 and full["demoted_edge_count"] == 1

    proc = subprocess.Popen([sys.executable, "-m", "kenning", "maintain", "--now", NOW, "--json",
                             "--db", str(vault_file)], env=_env({dag.DELAY_ENV: "1.5"}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while "folding" not in _ok_steps(vault_file) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = _ok_steps(vault_file)
    assert {"cleanup", "folding"} <= done and "orphans" not in done
    again = json.loads(run_cli("maintain", "--now", "2026-04-21T09:00:00.000Z", "--json", db=vault_file).stdout)
    assert again["resumed"] and again["generation"] == 1 and again["now"] == NOW  # the generation's own clock
    a, b = open_store(straight, readonly=True), open_store(vault_file, readonly=True)
    assert db_state(a) == db_state(b)
    assert {f: again[f] for f in CHANGE_FIELDS} == {f: full[f] for f in CHANGE_FIELDS}
    a.close(), b.close()
    third = json.loads(run_cli("maintain", "--now", "2026-04-20T10:00:00.000Z", "--json", db=vault_file).stdout)
    assert third["changes"] == 0 and not third["resumed"] and third["generation"] == 2


def test_a_failing_step_is_rolled_back_keeps_the_prior_generation_and_resumes(tmp_path, vault_file, monkeypatch):
    c = open_store(vault_file)
    cfg = load_config()
    first = maintain(c, cfg, now=NOW)
    assert first["status"] == "ok"
    node(c, "Robret Smith", state="confirmed")
    before = db_state(c)

    def boom(sc):
        raise RuntimeError("the disk is on fire")
    real = dag._step_fn
    monkeypatch.setattr(dag, "_step_fn", lambda s: boom if s == "motifs" else real(s))
    with pytest.raises(MaintainError, match="step motifs failed"):
        maintain(c, cfg, now="2026-04-21T09:00:00.000Z")
    assert msql.latest_generation(c)["status"] == "degraded"
    assert msql.last_finished_generation(c)["generation"] == 1  # health still shows the prior generation
    assert set(msql.steps_of(c, 2)) == {"cleanup", "folding", "motifs"}  # two committed, one failed
    assert msql.steps_of(c, 2)["motifs"]["status"] == "failed"
    assert db_state(c)["nodes"] == before["nodes"]
    monkeypatch.setattr(dag, "_step_fn", real)
    r = maintain(c, cfg, now="2026-04-30T09:00:00.000Z")
    assert r["resumed"] and r["generation"] == 2 and r["now"] == "2026-04-21T09:00:00.000Z"
    assert r["status"] == "ok" and msql.last_finished_generation(c)["generation"] == 2
    c.close()


def test_dry_run_changes_nothing_and_reports_what_a_run_would(tmp_path, vault_file):
    c = open_store(vault_file)
    cfg = load_config()
    before = db_state(c)
    dry = maintain(c, cfg, now=NOW, dry_run=True)
    assert db_state(c) == before and msql.latest_generation(c) is None
    real = maintain(c, cfg, now=NOW)
    assert {f: dry[f] for f in CHANGE_FIELDS} == {f: real[f] for f in CHANGE_FIELDS} and dry["changes"] > 0
    c.close()


@pytest.mark.slow
def test_cli_maintain_and_health_json_and_the_vault_api(vault_file):
    dry = json.loads(run_cli("maintain", "--dry-run", "--now", NOW, "--json", db=vault_file).stdout)
    assert dry["dry_run"] and dry["vacuum"]["would_run"] and set(CHANGE_FIELDS) <= set(dry)
    text = run_cli("maintain", "--now", NOW, db=vault_file).stdout
    assert "generation 1" in text and "folded pair" in text and "VACUUM ran" in text
    h = json.loads(run_cli("health", "--now", NOW, "--json", db=vault_file).stdout)
    assert 0 <= h["knowledge_debt_score"] <= 100
    g = h["graph_density"]
    for f in ("total_nodes", "total_edges", "promoted_edges", "total_mentions", "mean_degree", "median_degree",
              "isolated_node_count", "hub_count", "weak_edge_ratio", "generic_edge_ratio", "median_support",
              "suppression_rate", "promotion_rate", "llm_resolution_rate", "candidates_per_observation",
              "low_utility_edge_count", "top_hubs"):
        assert f in g
    assert g["total_nodes"] == 11 and g["promoted_edges"] == 0 and g["total_edges"] == 0  # the one edge was demoted
    assert h["hygiene_receipt"] == {"demoted_edge_count": 1, "archived_candidate_node_count": 0,
                                    "reviewed_bundle_count": 0}
    assert h["last_maintain"]["generation"] == 1
    text = run_cli("health", "--now", NOW, db=vault_file).stdout
    assert "knowledge debt" in text and "last maintain: generation 1" in text
    with Vault.open(vault_file) as v:
        assert v.health(now=NOW)["knowledge_debt_score"] == h["knowledge_debt_score"]
        assert v.maintain(now="2026-04-20T10:00:00.000Z")["changes"] == 0
    bad = run_cli("maintain", "--now", "yesterday-ish", db=vault_file, check=False)
    assert bad.returncode != 0 and "ISO-8601" in bad.stdout + bad.stderr


def test_demo_section_shows_health_and_a_dry_run_receipt(vault_file, capsys):
    from kenning.cli.demo_maintain import demo_maintain

    c = open_store(vault_file, readonly=True)
    before = db_state(c)
    c.close()
    demo_maintain(vault_file, None)
    text = capsys.readouterr()
    text = text.out + text.err
    assert "$ kenning health" in text and "knowledge debt" in text
    assert "$ kenning maintain --dry-run" in text and "folded pair 1" in text and "VACUUM would run" in text
    assert len([ln for ln in text.splitlines() if ln.strip()]) <= 15
    c = open_store(vault_file, readonly=True)
    assert db_state(c) == before
    c.close()
