"""`kenning ui` in a real browser (Playwright driving Debian chromium) against a real server on a loopback port and
a real vault built from the bundled sample."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.web.conftest import XSS_MARK

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = {"home": "/", "search": "/search?q=Lisbon", "why": "/why?q=where+do+I+live%3F", "nodes": "/nodes",
         "node": "/node/Sam", "self": "/self", "timeline": "/timeline", "conversations": "/conversations",
         "review": "/review", "entity-timeline": "/timeline?entity=Anna"}


def test_every_page_renders_offline_with_a_screenshot(ui_server, page, tmp_path):
    for name, path in PAGES.items():
        resp = page.goto(ui_server + path)
        assert resp.status == 200, (name, resp.status)
        assert page.locator("header.top nav").is_visible()
        assert page.locator("h1").first.inner_text().strip()
        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 5000
    # one conversation, reached by clicking
    page.goto(ui_server + "/conversations")
    page.locator("table a").first.click()
    assert page.locator(".msg").count() > 0
    page.screenshot(path=str(tmp_path / "conversation.png"), full_page=True)
    # no request ever left the loopback server (no CDN, no fonts)
    assert page.requests and all(u.startswith(ui_server) for u in page.requests)


def test_search_finds_a_known_message(ui_server, page):
    page.goto(ui_server + "/search")
    page.fill("form.bar input[name=q]", "When did Anna move to Lisbon?")
    page.locator("form.bar button").click()
    page.wait_for_url(re.compile(r"/search\?q="))
    hits = page.locator("li.hit")
    assert hits.count() > 0
    texts = " ".join(hits.all_inner_texts())
    assert "Lisbon" in texts
    first = hits.first
    assert first.locator(".date").inner_text().strip()                # date
    assert first.locator("details.evidence summary").inner_text().startswith("evidence chain")


def test_why_shows_a_verified_quote_inside_its_message(ui_server, page):
    page.goto(ui_server + "/why?q=" + urllib.parse.quote("where do I live?"))
    answer = page.locator("article.answer").first
    assert "Paris" in answer.locator("h3").inner_text()
    source = answer.locator("blockquote.source").first
    assert "✓ verified" in source.locator(".ok").inner_text()
    assert "Paris" in source.locator("mark.quote").inner_text()
    # "what did I believe on DATE": the date picker submits by itself (the vendored script)
    page.fill("input[name=until]", "2022-12-31")
    page.dispatch_event("input[name=until]", "change")
    page.wait_for_url(re.compile(r"until=2022-12-31"))
    assert "Berlin" in page.locator("article.answer").first.inner_text()


def _confidence(page) -> str:
    return page.locator("#confidence").inner_text().strip()


def test_a_review_action_moves_the_confidence_and_undo_restores_it(ui_server, page):
    page.goto(ui_server + "/node/Sam")
    before = _confidence(page)
    page.locator("button.confirm").click()
    page.wait_for_url(re.compile(r"undo="))
    after = _confidence(page)
    assert float(after) > float(before), (before, after)
    assert "confirmed" in page.locator("#lifecycle").inner_text()
    assert "user:confirm" in page.content() or "confirm 'Sam'" in page.content()
    page.locator("button.undo-btn").click()
    page.wait_for_url(re.compile(r"msg=undone"))
    page.goto(ui_server + "/node/Sam")
    assert _confidence(page) == before


def test_an_xss_payload_in_a_message_stays_text(ui_server, page):
    page.goto(ui_server + "/search?q=" + XSS_MARK)
    hit = page.locator("li.hit").filter(has_text=XSS_MARK).first
    assert "<script>window.__xss = 1</script>" in hit.locator("p.text").inner_text()
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("li.hit img").count() == 0
    # the conversation view, whose title and speaker carry payloads too
    hit.locator(".meta a").first.click()
    page.wait_for_selector(".msg")
    assert "<script>window.__xss = 3</script>" in page.locator("h1").inner_text()
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("main script, main img").count() == 0
    assert page.dialogs == []


def test_posts_without_the_csrf_token_are_refused(ui_server):
    req = urllib.request.Request(ui_server + "/review/node", data=b"node=Sam&action=reject", method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 403
    with urllib.request.urlopen(ui_server + "/node/Sam", timeout=10) as r:    # nothing was rejected
        assert "retracted" not in r.read().decode()


def test_the_timeline_chart_is_interactive(ui_server, page):
    page.goto(ui_server + "/timeline?entity=Anna")
    page.wait_for_selector("svg.months", timeout=15000)     # after "computing…" reloads, if it was not ready
    bars = page.locator("svg.months g.month")
    assert bars.count() > 0
    bars.last.click()
    row = page.locator("tr.on")
    assert row.count() == 1
    assert page.locator("#month-detail").inner_text().strip().startswith(row.locator("td").first.inner_text().strip())
    # and yours, with the life-state lanes drawn on a time axis
    page.goto(ui_server + "/timeline")
    assert page.locator("svg.vt g.bar").count() > 0 and "lives in" in page.locator("svg.vt").text_content()
