"""Issue 23 part 4: output a person can read in an 80-column terminal, and that says what it leaves out."""

import json

import pytest

from chatgpt_fixtures import simple_chat, write_export
from conftest import SRC

SAMPLE = SRC / "kenning" / "samples" / "sample-chatgpt-export.zip"


@pytest.fixture(scope="module")
def sample_vault(tmp_path_factory):
    from conftest import run_cli

    db = tmp_path_factory.mktemp("fh") / "kenning.db"
    proc = run_cli("ingest", str(SAMPLE), db=db)
    return db, proc


def test_ingest_ends_with_a_short_summary(sample_vault, cli, tmp_path):
    db, proc = sample_vault
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) <= 8, proc.stdout
    assert lines[0].startswith("imported 40 new conversations (829 messages)")
    assert any("the vault now holds 40 conversations" in line for line in lines)
    assert "stage 2A" not in proc.stdout and "lexicon build version" not in proc.stdout
    again = cli("ingest", str(SAMPLE), "--verbose", "--stages", "0,1", db=tmp_path / "v.db")
    assert "stage 1 raw import:" in again.stderr  # the counters are behind --verbose


def test_facts_fit_80_columns_and_say_what_is_left_out(sample_vault, cli):
    db, _ = sample_vault
    proc = cli("facts", "--limit", "5", db=db, env={"COLUMNS": "80"})
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    total = len(json.loads(cli("facts", "--limit", "100000", "--json", db=db).stdout))
    assert lines[-1] == f"showing 5 of {total:,}; --limit N for more"
    header = lines[0]
    assert "statement" in header and "quote" in header and "conversation" not in header
    # statements wrap rather than being cut to a few characters
    body = " ".join(line.split("│")[2].strip() for line in lines[2:-1] if line.count("│") >= 4)
    assert "SELF" in body and len(body) > 60
    wide = cli("facts", "--limit", "5", db=db, env={"COLUMNS": "200"})
    assert "conversation" in wide.stdout.splitlines()[0]
    everything = cli("facts", "--limit", str(total), db=db, env={"COLUMNS": "200"})
    assert "showing" not in everything.stdout


def test_search_shows_identical_hits_once(tmp_path, cli):
    same = "I am vegetarian, no meat at all since 2019."
    convs = [simple_chat(f"v{i}", f"Dinner {i}", [("user", same), ("assistant", f"Noted, reply {i}.")])
             for i in range(5)]
    db = tmp_path / "kenning.db"
    cli("ingest", str(write_export(tmp_path / "c.json", convs)), db=db)
    proc = cli("search", "am I vegetarian", "--k", "10", db=db, env={"COLUMNS": "80"})
    assert proc.stdout.count("I am vegetarian") == 1
    assert "×5" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80
    hits = json.loads(cli("search", "am I vegetarian", "--k", "10", "--json", db=db).stdout)["hits"]
    assert sum(1 for h in hits if h["text"] == same) == 5  # --json keeps every hit


def test_an_undated_quote_is_not_said_today(tmp_path, cli):
    def undated(cid, text):
        c = simple_chat(cid, f"T {cid}", [("user", text), ("assistant", "ok")])
        for node in c["mapping"].values():
            if node["message"]:
                node["message"]["create_time"] = None
        c["create_time"] = c["update_time"] = None
        return c

    db = tmp_path / "kenning.db"
    src = write_export(tmp_path / "c.json", [undated("u1", "I live in Lisbon."), undated("u2", "I live in Lisbon.")])
    cli("ingest", str(src), "--as-of", "2030-01-01T00:00:00Z", db=db)
    proc = cli("why", "where do I live", db=db)
    assert "I live in Lisbon" in proc.stdout
    assert "last undated" in proc.stdout and "last 2030" not in proc.stdout
    data = json.loads(cli("why", "where do I live", "--json", db=db).stdout)
    answers = data.get("answers") or data.get("now") or []
    text = json.dumps(data)
    assert '"last_said": "2030' not in text
    assert answers is not None


def test_other_capped_lists_say_so(sample_vault, cli):
    db, _ = sample_vault
    n_entities = len(json.loads(cli("entities", "--limit", "100000", "--json", db=db).stdout))
    assert f"showing 3 of {n_entities:,}; --limit N for more" in cli("entities", "--limit", "3", db=db).stdout
    beliefs = json.loads(cli("beliefs", "list", "--json", db=db).stdout)
    assert f"showing 2 of {beliefs['total']:,}" in cli("beliefs", "list", "--limit", "2", db=db).stdout
    assert "showing the first 2; --limit N for more" in cli("self", "list", "--limit", "2", db=db).stdout
