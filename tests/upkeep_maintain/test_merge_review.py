"""The merge queue answered by a person (G63): `kenning review merges|merge|keep-apart` through a real CLI
subprocess; a merge is one writer commit that `kenning rollback` undoes; keep-apart is never proposed again."""

from __future__ import annotations

import json

import pytest

from kenning.api import Vault
from kenning.store import knowledge as ksql
from kenning.store import upkeep_maintain as msql
from kenning.store.connection import open_store
from kenning.upkeep.maintain.merge_review import MergeReviewError
from tests.conftest import run_cli
from tests.upkeep_maintain.helpers import edge, node

NOW = "2026-01-25T09:00:00.000Z"


@pytest.fixture
def vault_file(tmp_path):
    path = tmp_path / "v.db"
    c = open_store(path)
    acme = node(c, "Acme", state="confirmed", payload={"entity_type": "organization"})
    for name in ("Robert Hill", "Bob", "Katherine Moreau", "Katherine Moraeu"):
        edge(c, node(c, name, state="confirmed", payload={"entity_type": "person"}), "affiliated_with", acme)
    c.close()
    return path


def test_merge_and_keep_apart_from_the_cli(vault_file):
    run_cli("maintain", "--now", NOW, "--json", db=vault_file)
    page = json.loads(run_cli("review", "merges", "--json", db=vault_file).stdout)
    assert page["total_items"] == 2
    by = {frozenset(n["name"] for n in i["nodes"]): i for i in page["items"]}
    bob = by[frozenset(("Robert Hill", "Bob"))]
    typo = by[frozenset(("Katherine Moreau", "Katherine Moraeu"))]
    assert bob["evidence"] == "nickname" and "one given name" in bob["reason"] and typo["evidence"] == "typo"
    text = run_cli("review", "merges", db=vault_file).stdout
    assert "Robert Hill" in text and "kenning review merge" in text

    res = json.loads(run_cli("review", "merge", bob["ref"][:10], "--as-of", NOW, "--json", db=vault_file).stdout)
    assert res["status"] == "success" and res["commit_id"] and "Robert Hill" in res["detail"]
    with Vault.open(vault_file) as v:
        robert = ksql.get_node(v.conn, res["survivor_id"])
        assert robert["canonical_name"] == "Robert Hill" and "bob" in {a["normalized_alias"] for a in
                                                                       ksql.get_aliases(v.conn, robert["id"])}
        assert len(msql.merge_map(v.conn)) == 1
        assert v.merge_candidates()["total_items"] == 1
    again = json.loads(run_cli("review", "merge", bob["ref"][:10], "--json", db=vault_file).stdout)
    assert again["status"] == "unchanged"
    run_cli("rollback", res["commit_id"], db=vault_file)  # a merge is an ordinary commit: undone like one
    with Vault.open(vault_file) as v:
        assert sum(1 for n in ksql.list_nodes(v.conn, kind="world_entity", limit=50)
                   if n["canonical_name"] == "Bob" and n["is_active"]) == 1

    out = run_cli("review", "keep-apart", typo["ref"][:10], db=vault_file).stdout
    assert "never proposed" in out
    run_cli("maintain", "--now", "2026-01-26T09:00:00.000Z", "--json", db=vault_file)
    with Vault.open(vault_file) as v:
        pending = v.merge_candidates()["items"]
        assert not any(i["ref"] == typo["ref"] for i in pending)
        assert msql.fold_decision(v.conn, *sorted(n["id"] for n in typo["nodes"]))["reviewed_by"] == "human"
    bad = run_cli("review", "merge", "zzzzzzzz", db=vault_file, check=False)
    assert bad.returncode == 2 and "no merge candidate" in bad.stdout + bad.stderr


def test_a_blocked_pair_is_refused_with_the_reason(vault_file):
    with Vault.open(vault_file) as v:
        v.maintain(now=NOW)
        item = v.merge_candidates()["items"][0]
        ksql_node = item["nodes"][0]["id"]
        v.conn.execute("UPDATE nodes SET lifecycle_state='observed' WHERE id=?", (ksql_node,))
        with pytest.raises(MergeReviewError, match="below confirmed"):
            v.resolve_merge(item["ref"], "merge", as_of=NOW)
        with pytest.raises(MergeReviewError, match="unknown action"):
            v.resolve_merge(item["ref"], "fold", as_of=NOW)


def test_the_web_review_page_merges_with_one_click_and_undoes(vault_file):
    import re

    from fastapi.testclient import TestClient

    from kenning.serve.web.app import create_app

    with Vault.open(vault_file) as v:
        v.maintain(now=NOW)
    app = create_app(vault_file, now=NOW)
    c = TestClient(app)
    page = c.get("/review").text
    assert "Possible duplicates (2)" in page and "Robert Hill" in page and "one given name" in page
    refs = re.findall(r'action="/review/merge">.*?name="ref" value="([^"]+)"', page, re.S)
    tok = app.state.web.csrf_token
    assert c.post("/review/merge", data={"ref": refs[0], "action": "merge"}).status_code == 403  # no CSRF token
    r = c.post("/review/merge", data={"csrf": tok, "ref": refs[0], "action": "merge"}, follow_redirects=False)
    assert r.status_code == 303 and "merged" in r.headers["location"], r.headers["location"]
    commit = re.search(r"undo=([^&]+)", r.headers["location"])[1]
    with Vault.open(vault_file, readonly=True) as v:
        assert len(msql.merge_map(v.conn)) == 1 and v.merge_candidates()["total_items"] == 1
    r = c.post("/review/undo", data={"csrf": tok, "commit": commit}, follow_redirects=False)
    assert r.status_code == 303 and "rolled%20back" in r.headers["location"]
    r = c.post("/review/merge", data={"csrf": tok, "ref": refs[1], "action": "keep_apart"}, follow_redirects=False)
    assert "never%20proposed" in r.headers["location"]
    assert "Possible duplicates (0)" in c.get("/review").text


def test_keep_apart_is_a_commit_on_both_nodes_and_outlives_the_queue(vault_file):
    """G67: "different" is the person's verdict, so it lives in the node store and its event log (a commit on both
    nodes), not only in the upkeep tables a rebuild starts again from — with those gone, the pair is still never
    proposed or folded."""
    with Vault.open(vault_file) as v:
        v.maintain(now=NOW)
        typo = next(i for i in v.merge_candidates()["items"] if i["evidence"] == "typo")
        res = v.resolve_merge(typo["ref"], "keep_apart", as_of=NOW)
        assert res["status"] == "success" and res["commit_id"]
        a, b = (ksql.get_node(v.conn, n["id"]) for n in typo["nodes"])
        assert a["payload"]["kept_apart_from"] == [b["id"]] and b["payload"]["kept_apart_from"] == [a["id"]]
        v.conn.execute("DELETE FROM maintain_queue")
        v.conn.execute("DELETE FROM fold_decisions")
        v.maintain(now="2026-01-27T09:00:00.000Z")
        names = [frozenset(n["name"] for n in i["nodes"]) for i in v.merge_candidates()["items"]]
        assert frozenset(("Katherine Moreau", "Katherine Moraeu")) not in names
        assert frozenset(("Robert Hill", "Bob")) in names  # the other pair is still asked about
        assert all(ksql.get_node(v.conn, n["id"])["is_active"] for n in typo["nodes"])
