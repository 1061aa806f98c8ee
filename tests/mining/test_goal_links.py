"""Mined goals and obligations name the entities they are about (§29.3 linked_entity_ids; decision H2): the
constellation and the brief of that entity show them, a re-import adds nothing, a retired goal leaves them."""

import json

import apsw

from chatgpt_fixtures import simple_chat, write_export

START = 1_700_000_000.0   # 2023-11-14


def _vault(cli, tmp_path):
    src = write_export(tmp_path / "chats.json", [
        simple_chat("c1", "Berlin plans", [
            ("user", "I live in Berlin with my partner Sam. He works at Initech."), ("assistant", "Noted."),
            ("user", "My goal is to run the Berlin half marathon by April."), ("assistant", "Great goal!"),
            ("user", "I have to send Sam the Initech contract by December 3."), ("assistant", "Ok.")], start=START)])
    db = tmp_path / "v.db"
    cli("ingest", str(src), "--as-of", "2023-11-20T00:00:00Z", db=db)
    return src, db


def _payloads(db, kind):
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {r[0]: (r[1], json.loads(r[2])) for r in conn.execute(
            "SELECT id, canonical_name, payload FROM nodes WHERE node_kind=? AND is_active=1", (kind,))}
    finally:
        conn.close()


def _commits(db):
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM knowledge_commits").fetchall()[0][0]
    finally:
        conn.close()


def test_goals_and_obligations_are_linked_to_what_they_name(tmp_path, cli):
    src, db = _vault(cli, tmp_path)
    ents = {name: nid for nid, (name, _) in _payloads(db, "world_entity").items()}
    goal_id, (name, goal) = next((k, v) for k, v in _payloads(db, "goal").items() if "marathon" in v[0])
    assert ents["Berlin"] in goal["linked_entity_ids"] and goal["primary_entity_id"] == ents["Berlin"]
    ob = next(p for _, (n, p) in _payloads(db, "obligation").items() if "contract" in n)
    assert ents["Sam"] in ob["linked_entity_refs"]

    scene = json.loads(cli("constellation", "Berlin", "--json", "--as-of", "2023-11-20T00:00:00Z", db=db).stdout)
    assert [g["canonical_name"] for g in scene["active_goals"]] == [name]
    sam = json.loads(cli("constellation", "Sam", "--json", "--as-of", "2023-11-20T00:00:00Z", db=db).stdout)
    assert any("contract" in o["canonical_name"] for o in sam["active_obligations"])

    # the same export again: no new commit, the links unchanged
    before = _commits(db)
    cli("ingest", str(src), "--as-of", "2023-11-20T00:00:00Z", db=db)
    assert _commits(db) == before and _payloads(db, "goal")[goal_id][1] == goal

    # the person retires the goal: Berlin's scene no longer lists it
    cli("node", "reject", goal_id, db=db)
    scene = json.loads(cli("constellation", "Berlin", "--json", "--as-of", "2023-11-20T00:00:00Z", db=db).stdout)
    assert scene["active_goals"] == []
