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
