"""The stage 5–6 commands as a user runs them: facts --valid-at/--believed-at, history, conflicts, timeline, graph
export."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest

import temporal_corpus as tc
from conftest import run_cli
from exportkit import ingest, query, write_export

HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    d = tmp_path_factory.mktemp("tcli")
    path = d / "k.db"
    ingest(path, write_export(d / "e.json", tc.lifecycle() + tc.conflicts()[1:]), as_of="2024-12-31T00:00:00Z",
           overrides=HASH)
    return path


def facts(db, *args):
    return json.loads(run_cli("facts", "--about", "me", "--predicate", "lives_in", "--json", *args, db=db).stdout)


def test_valid_at_answers_what_was_true_then(db):
    in_2021 = {f["object"] for f in facts(db, "--valid-at", "2021-06-01")}
    assert "Berlin" in in_2021 and "Paris" not in in_2021
    in_2024 = [f for f in facts(db, "--valid-at", "2024-01-01")]
    assert {f["object"] for f in in_2024} >= {"Paris"} and "Berlin" not in {f["object"] for f in in_2024}
    assert all(f["temporal"]["status"] != "retracted" for f in in_2024)
    berlin = next(f for f in facts(db) if f["object"] == "Berlin")
    assert berlin["temporal"]["status"] == "superseded"
    assert berlin["temporal"]["valid_to_utc"] == "2023-03-01T00:00:00.000Z"


def test_believed_at_answers_what_kenning_had_been_told_then(db):
    berlin_said = next(f for f in facts(db) if f["object"] == "Berlin")["message_date"]
    paris_said = next(f for f in facts(db) if f["object"] == "Paris" and f["quote"] == "I moved to Paris")["message_date"]
    before = facts(db, "--believed-at", berlin_said)
    assert [f["object"] for f in before] == ["Berlin"] and before[0]["temporal"]["status"] == "active"
    assert before[0]["temporal"]["valid_to_utc"] is None          # then, nothing had ended it
    after = facts(db, "--believed-at", paris_said)
    b = next(f for f in after if f["object"] == "Berlin")
    assert b["temporal"]["status"] == "superseded" and b["temporal"]["valid_to_utc"] == "2023-03-01T00:00:00.000Z"
    # both at once: what Kenning, as of the move message, thought was true in 2021
    both = facts(db, "--believed-at", paris_said, "--valid-at", "2021-01-01")
    assert [f["object"] for f in both] == ["Berlin"]
    # the table shows status and valid time
    text = run_cli("facts", "--about", "me", "--valid-at", "2021-06-01", db=db).stdout
    assert "superseded 2019-01-01→2023-03-01" in text


@pytest.mark.parametrize("valid_at,believed_at", [("2021-06-01", None), ("2024-01-01", None),
                                                   (None, "2024-12-30"), ("2022-01-01", "2024-12-30")])
def test_bitemporal_facts_read_page_by_page_as_whole(db, valid_at, believed_at):
    """B45: --valid-at/--believed-at read the ordered facts a page at a time and stop once `limit` passed; the
    answer is the first `limit` of filtering every row, in the same order — whatever the page size."""
    from kenning.api import Vault
    from kenning.cli.facts import bitemporal_filter, fact_view, held_facts
    from kenning.store import assertions as asql

    with Vault.open(db) as v:
        page = lambda size, skip: asql.facts(v.conn, limit=size, offset=skip)  # noqa: E731
        whole = [f["assertion_id"] for f in bitemporal_filter(v.conn, [fact_view(r) for r in page(None, 0)],
                                                              valid_at, believed_at)]
        assert len(whole) >= 3
        for limit in (1, 2, len(whole), len(whole) + 5):
            for first in (1, 2, 3, 500):
                got = [f["assertion_id"] for f in held_facts(v.conn, page, limit, valid_at, believed_at,
                                                             first_page=first)]
                assert got == whole[:limit], (limit, first)
        # a page is the ordered list's slice
        everything = [r["assertion_id"] for r in page(None, 0)]
        assert [r["assertion_id"] for r in page(3, 2)] == everything[2:5]


def test_bad_dates_are_clear_errors(db):
    p = run_cli("facts", "--valid-at", "last tuesday-ish", db=db, check=False)
    assert p.returncode != 0 and "--valid-at" in (p.stdout + p.stderr) and "YYYY-MM-DD" in (p.stdout + p.stderr)


def test_history_tells_the_succession_with_reasons(db):
    h = json.loads(run_cli("history", "lives_in", "--json", db=db).stdout)
    assert h["target"] == "predicate lives_in"
    mine = [s for s in h["states"] if s["subject"] == "SELF"]
    berlin = next(s for s in mine if s["object"] == "Berlin")
    assert berlin["status"] == "superseded" and berlin["why"] == "superseded by “SELF lives in Paris (since March 2023) [change]”"
    assert [v["status"] for v in berlin["versions"]] == ["active", "superseded"]
    hooli = next(s for s in json.loads(run_cli("history", "works_at", "--json", db=db).stdout)["states"]
                 if s["object"] == "Hooli")
    assert hooli["status"] == "conflicted" and "conflict" in hooli["why"]
    text = run_cli("history", "me", db=db).stdout
    assert "SELF · lives_in" in text and "2019-01-01 → 2023-03-01" in text and "superseded by" in text
    cat = json.loads(run_cli("history", "me", "--json", db=db).stdout)
    retracted = next(s for s in cat["states"] if s["object"] == "cat")
    assert retracted["status"] == "retracted" and retracted["why"].startswith("retracted by “that's not true”")
    assert run_cli("history", "Atlantis", db=db, check=False).returncode != 0


def test_conflicts_lists_groups_with_members_and_quotes(db):
    groups = json.loads(run_cli("conflicts", "--json", db=db).stdout)
    types = {g["conflict_type"] for g in groups}
    assert {"OBJ_CONFIDENCE_TOO_CLOSE", "SAME_TIME_DUPLICATES", "RETRACTION_TARGET_NOT_UNIQUE"} <= types
    close = next(g for g in groups if g["conflict_type"] == "OBJ_CONFIDENCE_TOO_CLOSE")
    assert sorted(m["quote"] for m in close["members"]) == ["I work at Hooli", "I work at Initech"]
    assert all(m["status"] == "conflicted" for m in close["members"])
    assert close["details"]["confidence_diff"] == 0
    only = json.loads(run_cli("conflicts", "--type", "SAME_TIME_DUPLICATES", "--json", db=db).stdout)
    assert [g["conflict_type"] for g in only] == ["SAME_TIME_DUPLICATES"]
    assert all(m["status"] == "active" for m in only[0]["members"])
    text = run_cli("conflicts", db=db).stdout
    assert "OBJ_CONFIDENCE_TOO_CLOSE" in text and "“I work at Hooli”" in text


def test_timeline_text_json_png_and_html(db, tmp_path):
    tl = json.loads(run_cli("timeline", "--self", "--json", db=db).stdout)
    march = next(w for w in tl["windows"] if w["label"] == "2023-03")
    assert march["top_members"][0]["label"] == "Paris"
    assert march["changes"][0]["from"] == "Berlin" and march["changes"][0]["to"] == "Paris"
    assert any(s["object"] == "Berlin" and s["status"] == "superseded" for s in tl["states"])
    png, page = tmp_path / "t.png", tmp_path / "t.html"
    out = run_cli("timeline", "--png", str(png), "--html", str(page), db=db).stdout
    assert "2023-03" in out and "lives_in: Berlin → Paris" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "data:image/png;base64," in html and "Berlin → Paris" in html
    assert 'title="Paris — place (keyword rule)' in html                 # T37: every chip has a tooltip
    # another person: computed on the fly, read-only
    other = json.loads(run_cli("timeline", "Anna", "--json", db=db).stdout)
    assert other["name"] == "Anna"
    assert run_cli("timeline", "Nobody Atall", db=db, check=False).returncode != 0


def test_graph_export_formats(db, tmp_path):
    doc = json.loads(run_cli("graph", "export", "--format", "json", db=db).stdout)
    n_nodes = query(db, "SELECT COUNT(*) AS n FROM graph_nodes")[0]["n"]
    n_edges = query(db, "SELECT COUNT(*) AS n FROM graph_edges")[0]["n"]
    assert len(doc["nodes"]) == n_nodes and len(doc["edges"]) == n_edges
    ids = {n["id"] for n in doc["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in doc["edges"])
    gm = tmp_path / "g.graphml"
    run_cli("graph", "export", "--format", "graphml", "--out", str(gm), db=db)
    root = ET.parse(gm).getroot()
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == n_nodes and len(root.findall(".//g:edge", ns)) == n_edges
    folder = tmp_path / "csv"
    run_cli("graph", "export", "--format", "csv", "--out", str(folder), db=db)
    with (folder / "nodes.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n_nodes and {"node_id", "node_type", "label", "metadata_json"} <= set(rows[0])
    with (folder / "edges.csv").open() as f:
        assert len(list(csv.DictReader(f))) == n_edges
    sub = json.loads(run_cli("graph", "export", "--nodes", "Entity,Assertion", db=db).stdout)
    assert {n["type"] for n in sub["nodes"]} == {"Entity", "Assertion"}
    bad = run_cli("graph", "export", "--format", "dot", db=db, check=False)
    assert bad.returncode != 0 and "json, graphml or csv" in (bad.stdout + bad.stderr)


def test_timeline_chips_wrap_before_they_are_cut():
    """T37: a chip's label wraps on two lines at word boundaries and shrinks before anything is cut."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kenning.graph.timeline import _chip_lines

    fig = plt.figure(figsize=(4, 2), dpi=110)
    r = fig.canvas.get_renderer()
    assert _chip_lines("Paris", 9, 100, r, fig) == (["Paris"], 9)
    lines, fs = _chip_lines("merge two sorted lists", 9, 100, r, fig)
    assert len(lines) == 2 and " ".join(lines) == "merge two sorted lists" and fs >= 7
    lines, fs = _chip_lines("getting better at setting boundaries at Acme Corp with my whole team", 9, 100, r, fig)
    assert len(lines) == 2 and lines[-1].endswith("…") and fs == 7
    plt.close(fig)
