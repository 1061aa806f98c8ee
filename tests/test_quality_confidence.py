"""Confidences that read as what they are (decision H3): beside §5's decayed value, the evidence's Beta mean and
when it was last said, in `kenning goals` / `obligations` (--json carries all three), `node show`, inspect and the
web UI; `kenning goals` lists live goals by default, however old."""

import datetime as dt
import json
import urllib.request

import apsw

from chatgpt_fixtures import simple_chat, write_export
from tests.web.conftest import start_ui, stop

START = dt.datetime(2023, 2, 6, 9, tzinfo=dt.timezone.utc).timestamp()
LATER = "2026-11-29T00:00:00Z"   # three and a half years after the goals were said


def _vault(cli, tmp_path):
    src = write_export(tmp_path / "c.json", [simple_chat("c1", "Plans", [
        ("user", "I plan to learn Japanese next year."), ("assistant", "Great."),
        ("user", "My goal is to run a marathon."), ("assistant", "Nice."),
        ("user", "I have to renew my passport by March 20."), ("assistant", "Ok."),
        ("user", "I finally achieved my goal of running a marathon!"), ("assistant", "Congrats!")], start=START)])
    db = tmp_path / "v.db"
    cli("ingest", str(src), "--as-of", "2023-02-07T00:00:00Z", db=db)
    return db


def test_goals_show_the_decayed_value_beside_the_evidence_and_when_said(tmp_path, cli):
    db = _vault(cli, tmp_path)
    goals = json.loads(cli("goals", "--json", "--as-of", LATER, db=db).stdout)
    japanese = next(g for g in goals if g["name"] == "learn Japanese")
    assert japanese["confidence"] < 0.01 < 0.5 < japanese["beta_mean"]       # decayed now, strong on the evidence
    assert japanese["last_said"] == "2023-02-06" and japanese["days_since_said"] == 1392
    # H3: the default lists live goals only — the achieved marathon comes back with --all
    assert "run a marathon" not in {g["name"] for g in goals}
    every = json.loads(cli("goals", "--json", "--all", "--as-of", LATER, db=db).stdout)
    assert next(g for g in every if g["name"] == "run a marathon")["status"] == "achieved"
    text = cli("goals", "--as-of", LATER, db=db, env={"COLUMNS": "160"}).stdout
    assert "learn Japanese" in text and "2023-02-06" in text and "(1392d)" in text and "0.60" in text

    ob = json.loads(cli("obligations", "--json", "--as-of", LATER, db=db).stdout)[0]
    assert {"confidence", "beta_mean", "last_said", "days_since_said"} <= set(ob) and ob["last_said"] == "2023-02-06"

    shown = json.loads(cli("node", "show", japanese["id"], "--json", "--as-of", LATER, db=db).stdout)
    assert shown["said"]["last_said"] == "2023-02-06"
    summary = json.loads(cli("inspect", "node_detail", japanese["id"], "--json", "--as-of", LATER,
                             db=db).stdout)["result_summary"]
    assert "Beta mean 0.60" in summary and "last said 2023-02-06 (1392 days ago)" in summary


def test_the_node_page_shows_the_evidence_and_when_it_was_said(tmp_path, cli):
    db = _vault(cli, tmp_path)
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    gid = conn.execute("SELECT id FROM nodes WHERE canonical_name='learn Japanese'").fetchall()[0][0]
    conn.close()
    proc, url = start_ui(db)
    try:
        with urllib.request.urlopen(f"{url}/node/{gid}", timeout=30) as r:
            page = r.read().decode()
    finally:
        stop(proc)
    assert 'id="beta-mean">0.60<' in page and 'id="last-said">2023-02-06<' in page and "days ago" in page
