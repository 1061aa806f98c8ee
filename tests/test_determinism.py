"""Same input + same config + frozen clock ⇒ identical vault; input order never matters (seed 001 invariants 5–6)."""

import copy
import json
import random

from chatgpt_fixtures import conversation, message, simple_chat, write_export
from vault_dump import CONTENT_TABLES, dump


def corpus():
    convs = [simple_chat(f"c{i}", f"Chat {i}", [("user", f"I moved to Paris {i}"), ("assistant", "ok"),
                                                ("user", "thanks")], start=1.7e9 + 3600 * i) for i in range(5)]
    kids = [f"k{i}" for i in range(11)]
    convs.append(conversation("tree", "regenerations", [message("r", "user", "q", parent=None, children=kids, t=1.7e9)]
                              + [message(k, "assistant", k, parent="r", t=None) for k in kids], current_node="k7"))
    no_id = simple_chat("x", "no id", [("user", "hello")])
    del no_id["conversation_id"], no_id["id"]
    convs.append(no_id)
    return convs


def permuted(convs, seed, children=False):
    rng = random.Random(seed)
    out = copy.deepcopy(convs)
    rng.shuffle(out)
    for c in out:
        items = list(c["mapping"].items())
        rng.shuffle(items)
        c["mapping"] = dict(items)
        if children:
            for node in c["mapping"].values():
                rng.shuffle(node["children"])
    return out


def test_two_frozen_runs_give_identical_databases(tmp_path, cli):
    src = write_export(tmp_path / "c.json", corpus())
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for db in (a, b):
        cli("ingest", str(src), "--as-of", "2024-06-01T00:00:00Z", db=db)
    da, db_ = dump(a, exclude_columns={"schema_migrations": {"applied_at_utc"}}), dump(b, exclude_columns={"schema_migrations": {"applied_at_utc"}})
    assert da == db_
    assert da["runs"] and all(r for r in da["runs"])


def test_permuted_input_gives_identical_content(tmp_path, cli):
    convs = corpus()
    a = write_export(tmp_path / "a.json", convs)
    b = write_export(tmp_path / "b.json", permuted(convs, 3), indent=2)
    cli("ingest", str(a), "--as-of", "2024-06-01T00:00:00Z", db=tmp_path / "a.db")
    cli("ingest", str(b), "--as-of", "2024-06-01T00:00:00Z", db=tmp_path / "b.db")
    # import_key hashes the record's bytes (formatting differs here); raw JSON is canonical, so equal.
    skip = {"conversations": {"import_key"}}
    assert dump(tmp_path / "a.db", CONTENT_TABLES, skip) == dump(tmp_path / "b.db", CONTENT_TABLES, skip)


def test_shuffled_children_change_only_the_raw_json(tmp_path, cli):
    """`children` order is data the export carries (kept verbatim) but never decides the tree."""
    convs = corpus()
    a = write_export(tmp_path / "a.json", convs)
    b = write_export(tmp_path / "b.json", permuted(convs, 5, children=True))
    cli("ingest", str(a), "--as-of", "2024-06-01T00:00:00Z", db=tmp_path / "a.db")
    cli("ingest", str(b), "--as-of", "2024-06-01T00:00:00Z", db=tmp_path / "b.db")
    # where a message's (or part's) JCS lies in its conversation's (message's) JCS moves with it (V2)
    raw = {"import_key", "raw_conversation_json", "raw_conversation_z", "raw_message_json", "raw_sha256", "raw_at",
           "raw_len"}
    skip = {"conversations": raw, "messages": raw, "message_parts": {"raw_at", "raw_len"}}
    assert dump(tmp_path / "a.db", CONTENT_TABLES, skip) == dump(tmp_path / "b.db", CONTENT_TABLES, skip)


def test_rerun_changes_nothing(tmp_path, cli):
    src = write_export(tmp_path / "c.json", corpus())
    db = tmp_path / "v.db"
    cli("ingest", str(src), db=db)
    before = dump(db, CONTENT_TABLES + ("rejects", "raw_archive"))
    out = json.loads(cli("ingest", str(src), "--json", db=db).stdout)
    raw = next(r for r in out["runs"] if r["stage"] == "1")["counts"]
    assert raw["conversations_unchanged"] == len(corpus()) and "conversations_new" not in raw
    assert dump(db, CONTENT_TABLES + ("rejects", "raw_archive")) == before
