"""`kenning ui` without a browser: the safety rules (loopback, access token, CSRF, escaping), the home page's
"since your last visit", and the CLI's refusals."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from kenning.serve.web.app import create_app, is_loopback
from kenning.serve.web.state import highlight
from tests.web.conftest import AS_OF


def test_highlight_escapes_text_and_marks_spans():
    html = str(highlight('a <script>x</script> & "b"', [(3, 9, "fact"), (4, 6, "entity"), (50, 60, "quote")]))
    assert "<script>" not in html
    assert html == 'a &lt;<mark class="fact">script</mark>&gt;x&lt;/script&gt; &amp; &#34;b&#34;'


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")


def test_access_token_is_required_when_set(ui_vault):
    c = TestClient(create_app(ui_vault, access_token="s3cret", now=AS_OF))
    assert c.get("/").status_code == 401
    r = c.get("/?token=s3cret")
    assert r.status_code == 200 and "Your vault" in r.text
    assert c.get("/self").status_code == 200            # the cookie set by the first visit carries it on
    assert TestClient(create_app(ui_vault, access_token="s3cret")).get(
        "/", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_csrf_and_origin_checks(ui_vault):
    app = create_app(ui_vault, now=AS_OF)
    c = TestClient(app)
    assert c.post("/review/undo", data={"commit": "x"}).status_code == 403
    r = c.post("/review/undo", data={"commit": "x", "csrf": app.state.web.csrf_token},
               headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "evil.example" in r.text
    # the right token, an unknown commit: refused with a message, nothing written
    r = c.post("/review/undo", data={"commit": "nope", "csrf": app.state.web.csrf_token}, follow_redirects=False)
    assert r.status_code == 303 and "undo%20refused" in r.headers["location"]


def test_every_review_action_refuses_through_one_skeleton(ui_vault):
    """The six review POSTs share one route skeleton (L7): each checks CSRF, and each refusal comes back to the review
    page (or to the form's ``back``) as a message, never a 500, with nothing written."""
    app = create_app(ui_vault, now=AS_OF)
    c = TestClient(app)
    tok = app.state.web.csrf_token
    paths = ("/review/node", "/review/bundle", "/review/merge", "/review/undo", "/review/conflict", "/review/link")
    for path in paths:
        assert c.post(path, data={}).status_code == 403, path
    before = ui_vault.read_bytes()
    cases = [("/review/node", {"action": "bogus", "node": "Sam"}, "unknown%20action%20%27bogus%27"),
             ("/review/node", {"action": "confirm", "node": "no-such-node-anywhere"}, "confirm%20refused"),
             ("/review/bundle", {"action": "bogus", "ref": "x"}, "unknown%20action"),
             ("/review/merge", {"action": "merge", "ref": "no-such-pair"}, "merge%20refused"),
             ("/review/conflict", {"edge": "nope", "keep": "both"}, "resolve%20refused%3A%20conflict%20%27nope%27%20is%20unknown"),
             ("/review/link", {"link": "nope", "decision": "maybe"}, "unknown%20decision"),
             ("/review/link", {"link": "nope", "decision": "accept"}, "accept%20refused%3A%20link%20%27nope%27%20is%20unknown")]
    for path, data, said in cases:
        r = c.post(path, data={**data, "csrf": tok}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/review?msg="), (path, r.headers)
        assert said in r.headers["location"], (path, r.headers["location"])
    r = c.post("/review/node", data={"action": "bogus", "csrf": tok, "back": "/self"}, follow_redirects=False)
    assert r.headers["location"].startswith("/self?msg=")
    assert ui_vault.read_bytes() == before


def test_pages_send_a_strict_csp_and_read_only_pages_do_not_write(ui_vault):
    before = ui_vault.stat().st_mtime_ns
    c = TestClient(create_app(ui_vault, now=AS_OF))
    for path in ("/", "/search?q=Lisbon", "/why?q=Paris", "/self", "/timeline", "/conversations", "/review",
                 "/nodes"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "script-src 'self'" in r.headers["content-security-policy"]
    assert ui_vault.stat().st_mtime_ns == before


def test_home_lists_what_changed_since_the_last_visit(ui_vault):
    c = TestClient(create_app(ui_vault, now=AS_OF))
    first = c.get("/")
    assert "First visit from this browser" in first.text
    assert c.cookies.get("kenning_last_visit")
    again = TestClient(create_app(ui_vault, now=AS_OF), cookies={"kenning_last_visit": "2000-01-01T00:00:00.000Z"}).get("/")
    assert "Since 2000-01-01T00:00:00.000Z" in again.text and re.search(r"run <code>\w+</code> ok", again.text)


def test_unknown_things_are_404_with_a_message(ui_vault):
    c = TestClient(create_app(ui_vault, now=AS_OF))
    r = c.get("/node/no-such-node-anywhere")
    assert r.status_code == 404 and "no node" in r.text
    assert c.get("/conversation/nope").status_code == 404
    assert c.get("/timeline?entity=Nobody%20Atall").status_code == 404


def test_cli_refuses_a_missing_vault(tmp_path, cli):
    proc = cli("ui", "--port", "1", db=tmp_path / "none.db", check=False)
    assert proc.returncode != 0 and "no vault" in (proc.stdout + proc.stderr)


def _copy(vault, tmp_path):
    import apsw

    dst = tmp_path / "copy.db"
    src = apsw.Connection(str(vault), flags=apsw.SQLITE_OPEN_READONLY)
    with apsw.Connection(str(dst)).backup("main", src, "main") as b:
        b.step()
    src.close()
    return dst


def test_review_resolves_a_self_conflict_and_a_tentative_link_as_recorded_runs(ui_vault, tmp_path):
    db = _copy(ui_vault, tmp_path)
    app = create_app(db, now=AS_OF)
    c = TestClient(app)
    page = c.get("/review").text
    edges = re.findall(r'name="edge" value="([^"]+)"', page)
    links = re.findall(r'name="link" value="([^"]+)"', page)
    assert edges and links, "the sample vault has self-belief conflicts and tentative links"
    tok = app.state.web.csrf_token
    r = c.post("/review/conflict", data={"csrf": tok, "edge": edges[0], "keep": "both"}, follow_redirects=False)
    assert r.status_code == 303 and "resolved" in r.headers["location"]
    r = c.post("/review/link", data={"csrf": tok, "link": links[0], "decision": "reject"}, follow_redirects=False)
    assert r.status_code == 303 and "rejected" in r.headers["location"]
    after = c.get("/review").text
    assert edges[0] not in after and links[0] not in after
    r = c.post("/review/conflict", data={"csrf": tok, "edge": edges[0], "keep": "both"}, follow_redirects=False)
    assert r.status_code == 303 and "resolve%20refused" in r.headers["location"]     # said, not a 500
    from kenning.api import Vault

    with Vault.open(db, readonly=True) as v:
        stages = {r["stage"]: r["status"] for r in v.status()["last_runs"]}
    assert stages.get("self-conflicts") == "ok" and stages.get("self-links") == "ok"


def test_a_correction_renames_the_node_and_undo_restores_it(ui_vault, tmp_path):
    db = _copy(ui_vault, tmp_path)
    app = create_app(db, now=AS_OF)
    c = TestClient(app)
    tok = app.state.web.csrf_token
    r = c.post("/review/node", data={"csrf": tok, "node": "Sam", "action": "correct", "name": "Samuel <b>"},
               follow_redirects=False)
    assert r.status_code == 303
    node_url, commit = r.headers["location"].split("?")[0], re.search(r"undo=([^&]+)", r.headers["location"])[1]
    page = c.get(node_url).text
    assert "<h1>Samuel &lt;b&gt;" in page and "user_correction" in page
    r = c.post("/review/undo", data={"csrf": tok, "commit": commit, "back": node_url}, follow_redirects=True)
    assert "<h1>Sam <span" in r.text


def test_search_filters_by_kind_and_as_of(ui_vault):
    c = TestClient(create_app(ui_vault, now=AS_OF))
    kinds = re.findall(r'<span class="kind">(\w+)</span>', c.get("/search?q=Lisbon&kind=entity").text)
    assert kinds and set(kinds) == {"entity"}
    dates = re.findall(r'<span class="date">([^<]+)</span>', c.get("/search?q=Lisbon&as_of=2023-01-01").text)
    assert dates and max(dates) <= "2023-01-01"
    assert max(re.findall(r'<span class="date">([^<]+)</span>', c.get("/search?q=Lisbon").text)) > "2023-01-01"
    bad = c.get("/search?q=Lisbon&as_of=notadate")
    assert bad.status_code == 200 and 'class="error"' in bad.text and "notadate" in bad.text


def test_cli_warns_and_requires_a_token_beyond_loopback(ui_vault, cli):
    # 192.0.2.1 (TEST-NET-1) is on no machine: the CLI warns, prints the token URL, then says it cannot bind —
    # and never listens anywhere
    proc = cli("ui", "--host", "192.0.2.1", "--port", "8765", "--token", "tok123", db=ui_vault, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "warning" in text and "not loopback" in text and "cannot serve on 192.0.2.1:8765" in text


def test_cli_says_when_the_port_is_taken(ui_vault, cli):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        proc = cli("ui", "--port", str(port), db=ui_vault, check=False)
    assert proc.returncode != 0 and f"cannot serve on 127.0.0.1:{port}" in proc.stdout + proc.stderr


def test_nodes_are_found_by_name(ui_vault):
    c = TestClient(create_app(ui_vault, now=AS_OF))
    page = c.get("/nodes?q=Sam").text
    names = re.findall(r'<a href="/node/[^"]+">([^<]+)</a>', page)
    assert names and names[0] == "Sam"
    assert re.findall(r'<a href="/node/[^"]+">', c.get("/nodes?q=Sam&kind=goal").text) == []


def test_review_approves_an_evidence_bundle_and_undo_rolls_it_back(ui_vault, tmp_path):
    """Issue 21 × issue 20: a candidate relation from the back-link queue approved in the browser's review page is a
    knowledge commit that promotes the edge; the undo button rolls it back; an entity candidate is created."""
    from kenning.api import Vault

    db = _copy(ui_vault, tmp_path)
    app = create_app(db, now=AS_OF)
    c = TestClient(app)
    page = c.get("/review").text
    items = re.findall(r'name="ref" value="([^"]+)"><input type="hidden" name="kind" value="([^"]+)"', page)
    rel = next(ref for ref, kind in items if kind == "candidate_relation")
    tok = app.state.web.csrf_token
    r = c.post("/review/bundle", data={"csrf": tok, "ref": rel, "kind": "candidate_relation", "action": "approve"},
               follow_redirects=False)
    assert r.status_code == 303 and "approved" in r.headers["location"], r.headers["location"]
    commit = re.search(r"undo=([^&]+)", r.headers["location"])[1]
    with Vault.open(db, readonly=True) as v:
        assert v.review_bundle(rel)["user_verdict"] == "approved"
        assert rel not in {i["primary_ref"] for i in v.review_queue(page_size=100)["items"]}
    r = c.post("/review/undo", data={"csrf": tok, "commit": commit}, follow_redirects=False)
    assert r.status_code == 303 and "rolled%20back" in r.headers["location"]
    ent = next((ref for ref, kind in items if kind == "entity_creation_candidate"), None)
    if ent:
        r = c.post("/review/bundle", data={"csrf": tok, "ref": ent, "kind": "entity_creation_candidate",
                                           "action": "reject"}, follow_redirects=False)
        assert r.status_code == 303 and "refused" not in r.headers["location"], r.headers["location"]
