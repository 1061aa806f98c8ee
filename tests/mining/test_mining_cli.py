"""Issue 18: the miners through `kenning ingest` (stage `extract`) and the real CLI: the class commands with
--json, the .ics export parsed back with icalendar, and a re-ingest that adds no knowledge commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from icalendar import Calendar

from exportkit import conversation, dump_tables, ingest, query, write_export

ROOT = Path(__file__).resolve().parents[2]

CONVS = [
    conversation("plans", [
        ("user", "My goal is to run a marathon by next spring. I have to renew my passport by March 20."),
        ("assistant", "Good luck with both!"),
        ("user", "Here's how I back up my laptop:\n1. plug in the drive\n2. run the sync script\n3. eject the drive"),
        ("assistant", "A tidy routine."),
        ("user", "Whenever an email from my landlord arrives, flag it and remind me to reply."),
        ("assistant", "Noted."),
        ("user", "From now on, always answer in British English."),
    ]),
]


def kenning(*args: str, db: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kenning", *args, "--db", str(db)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    d = tmp_path_factory.mktemp("mining")
    export = write_export(d / "conversations.json", CONVS)
    db = d / "v.db"
    ingest(db, export, stages="0-6,knowledge,intake,extract")
    return db, export


def test_ingest_mines_every_class(vault):
    db, _ = vault
    kinds = {r["node_kind"]: r["n"] for r in query(db, "SELECT node_kind, count(*) AS n FROM nodes WHERE node_kind IN "
                                                      "('goal','obligation','procedure','standing_procedure',"
                                                      "'memory_directive') GROUP BY node_kind")}
    assert kinds == {"goal": 1, "obligation": 1, "procedure": 1, "standing_procedure": 1, "memory_directive": 1}


@pytest.mark.slow
def test_cli_lists_with_json_and_exports_ics(vault, tmp_path):
    db, _ = vault
    for cls, name in (("goals", "run a marathon"), ("procedures", "back up my laptop"),
                      ("directives", "From now on, always answer in British English")):
        r = kenning(cls, "--json", db=db)
        assert r.returncode == 0, r.stderr
        (item,) = json.loads(r.stdout)
        assert item["name"] == name and item["evidence"][0]["quote"]
    ics = tmp_path / "due.ics"
    r = kenning("obligations", "--ics", str(ics), "--as-of", "2025-01-01T00:00:00Z", db=db)
    assert r.returncode == 0, r.stderr
    assert "renew my passport" in r.stdout and "overdue" in r.stdout
    cal = Calendar.from_ical(ics.read_bytes())
    (ev,) = [c for c in cal.walk("VEVENT")]
    assert str(ev["summary"]) == "Due: renew my passport"
    assert ev.decoded("dtstart").isoformat() == "2024-03-20T23:59:00+00:00"
    r = kenning("standing", "--json", db=db)
    (sp,) = json.loads(r.stdout)
    assert sp["lifecycle_substate"] == "candidate" and sp["safety_class"] == "confirm_first"
    assert sp["evidence"][0]["quote"].startswith("Whenever an email")
    r = kenning("standing", "--evidence", db=db)
    assert r.returncode == 0 and "candidate" in r.stdout


def test_reingest_adds_no_knowledge(vault):
    db, export = vault
    before = dump_tables(db)
    ingest(db, export, stages="0-6,knowledge,intake,extract")
    after = dump_tables(db)
    assert after["knowledge_commits"] == before["knowledge_commits"] and after["nodes"] == before["nodes"]
