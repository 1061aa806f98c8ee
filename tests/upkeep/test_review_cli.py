"""`kenning review …` as a real subprocess on a real vault: the queue page, show, approve, and rollback."""

from __future__ import annotations

import json
import shutil

from tests.conftest import run_cli


def test_review_cli_round_trip(backlinks_db, tmp_path, hash_config_file):
    db = tmp_path / "v.db"
    shutil.copy(backlinks_db, db)
    common = ["--db", str(db), "--config", str(hash_config_file)]
    page = json.loads(run_cli("review", "--json", "--page-size", "3", *common).stdout)
    assert page["state"] == "ready" and len(page["items"]) == 3 and page["page_size"] == 3
    human = run_cli("review", *common).stdout
    assert "review queue" in human and "kenning review approve" in human
    item = next(i for i in page["items"] + json.loads(run_cli("review", "--json", "--page-size", "100",
                                                              *common).stdout)["items"]
                if "approve" in i["available_actions"] and i["item_kind"] == "candidate_relation")
    ref = item["primary_ref"][:12]
    shown = json.loads(run_cli("review", "show", ref, "--json", *common).stdout)
    assert shown["evidence_bundle_id"] == item["primary_ref"] and shown["mentions"]
    res = json.loads(run_cli("review", "approve", ref, "--json", "--as-of", "2024-06-02T00:00:00Z",
                             *common).stdout)
    assert res["created"] and res["commit_id"]
    assert json.loads(run_cli("review", "show", ref, "--json", *common).stdout)["user_verdict"] == "approved"
    run_cli("rollback", res["commit_id"], "--as-of", "2024-06-02T00:00:00Z", *common)
    run_cli("review", "run", "--as-of", "2024-06-02T00:00:00Z", *common)
    assert json.loads(run_cli("review", "show", ref, "--json", *common).stdout)["user_verdict"] == "none"
    bad = run_cli("review", "reject", ref, "--reason", "whatever", *common, check=False)
    assert bad.returncode == 2 and "rejection reason" in bad.stderr + bad.stdout
    missing = run_cli("review", "show", "nosuchbundle", *common, check=False)
    assert missing.returncode == 2 and "no evidence bundle" in missing.stderr + missing.stdout
