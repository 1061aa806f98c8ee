"""`kenning self analyze | list | annotate` as a user runs them."""

from __future__ import annotations

import json

from conftest import run_cli
from selfbeliefs.helpers import AS_OF, export, hash_config


def test_analyze_json_shape():
    d = json.loads(run_cli("self", "analyze", "I'm usually patient with my kids, but lately I've been snapping at "
                           "them. You are kind.", "--mode", "journaling", "--json").stdout)
    assert set(d) == {"source_context", "candidates", "atoms", "rejected"}
    assert d["source_context"] == {"mode": "journaling", "source_weight": 1.0, "context_id": "adhoc:journaling"}
    assert [c["span"] for c in d["candidates"]] == [[0, 32], [38, 72], [73, 86]]
    a = d["atoms"][0]
    assert set(a) == {"atom_text", "canonical_text", "canonical_hash", "belief_type", "polarity", "confidence",
                      "epistemic_frame"}
    assert set(a["epistemic_frame"]) == {"temporal_scope", "modality", "degree", "conditional"}
    assert d["rejected"] == [{"atom_text": "you are kind", "reason": "not_first_person"}]
    text = run_cli("self", "analyze", "I never procrastinate.").stdout
    assert "deny" in text and "habitual" in text and "i procrastinate" in text


def test_analyze_rejects_a_bad_mode():
    r = run_cli("self", "analyze", "I am calm", "--mode", "sleepy", check=False)
    assert r.returncode == 1 and "--mode must be one of" in r.stderr


def test_list_filters_and_errors(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    run_cli("init", "--config", str(cfg), db=db)
    empty = run_cli("self", "list", "--config", str(cfg), db=db).stdout
    assert "no self-beliefs yet" in empty
    run_cli("ingest", str(export(tmp_path, [("user", "I am tired right now. I love my kids. I value honesty.")])),
            "--config", str(cfg), "--stages", "0,1,self", "--as-of", AS_OF, db=db)
    allv = json.loads(run_cli("self", "list", "--config", str(cfg), "--json", db=db).stdout)
    assert {v["stream"] for v in allv} == {"state", "relational", "identity"}
    state = json.loads(run_cli("self", "list", "--stream", "state", "--config", str(cfg), "--json", db=db).stdout)
    assert [v["statement"] for v in state] == ["I am tired."]
    assert json.loads(run_cli("self", "list", "--status", "core", "--config", str(cfg), "--json", db=db).stdout) == []
    table = run_cli("self", "list", "--config", str(cfg), db=db).stdout
    assert "I value honesty." in table and "relational" in table
    bad = run_cli("self", "list", "--stream", "soul", "--config", str(cfg), db=db, check=False)
    assert bad.returncode == 1 and "--stream must be one of" in bad.stderr


def test_annotate_export_and_metrics(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    run_cli("ingest", str(export(tmp_path)), "--config", str(cfg), "--stages", "0,1,self", "--as-of", AS_OF, db=db)
    out = tmp_path / "review.jsonl"
    run_cli("self", "annotate", "export", "2", str(out), "--config", str(cfg), db=db)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["review"] == "todo" and r["atoms"] and r["text"] for r in rows)
    # the export is a valid gold file: scored against itself, everything agrees
    rep = json.loads(run_cli("self", "annotate", "metrics", str(out), "--config", str(cfg), "--json").stdout)
    assert rep["all"]["atoms"]["f1"] == 1.0 and rep["all"]["polarity"]["accuracy"] == 1.0
    # a wrong gold label shows up in the field accuracy
    rows[0]["atoms"][0]["polarity"] = "deny" if rows[0]["atoms"][0]["polarity"] == "affirm" else "affirm"
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rep = json.loads(run_cli("self", "annotate", "metrics", str(out), "--config", str(cfg), "--json",
                             "--errors", "5").stdout)
    assert rep["all"]["polarity"]["accuracy"] < 1.0 and rep["errors"][0]["field_errors"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "I am calm", "atoms": [{"atom_text": "i am calm", "polarity": "yes"}]}\n')
    r = run_cli("self", "annotate", "metrics", str(broken), check=False)
    assert r.returncode == 1 and "lacks" in r.stderr
