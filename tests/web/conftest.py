"""The UI tests' shared parts: one real vault from the bundled sample per session (`kenning demo`, plus a
transcript whose text and title carry an XSS payload), and `kenning ui` as a real server on a free loopback port."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import SRC, run_cli

AS_OF = "2024-12-31T00:00:00Z"
XSS_MARK = "xsspayload"
XSS_TEXT = (f'{XSS_MARK} check: <script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> '
            '"quoted" & <b>bold</b>')


def xss_transcript(path: Path) -> Path:
    path.write_text(json.dumps({
        "format": "kenning.transcript/1", "transcript_id": "xss-probe", "title": "<script>window.__xss = 3</script>",
        "participants": [{"id": "sam", "name": "Sam"}, {"id": "eve", "name": "Eve<script>"}],
        "sessions": [{"id": "1", "started_at": "2024-06-01T10:00:00Z", "turns": [
            {"speaker": "Eve<script>", "text": XSS_TEXT},
            {"speaker": "Sam", "text": "That looks like markup, not a message."}]}]}), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def ui_vault(tmp_path_factory) -> Path:
    """Built once per session: the demo's vault (the sample export, transcript and wiki), then the XSS probe."""
    root = tmp_path_factory.mktemp("ui-vault")
    db = root / "kenning.db"
    run_cli("demo", db=db, timeout=1200)
    run_cli("ingest", str(xss_transcript(root / "xss.json")), "--as-of", AS_OF, "--self", "Sam", "-q", db=db,
            timeout=600)
    return db


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ui(db: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "ui", "--db", str(db), "--port", str(port),
                             "--as-of", AS_OF, *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"kenning ui exited {proc.returncode}:\n{proc.stdout.read()}")
        try:
            with urllib.request.urlopen(url + "/static/kenning.css", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise AssertionError("kenning ui did not answer within 60 s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@pytest.fixture(scope="module")
def ui_server(ui_vault):
    proc, url = start_ui(ui_vault)
    yield url
    stop(proc)


def chromium_path() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    exe = chromium_path()
    if exe is None:   # said out loud in the summary (-ra); `make test` installs it first
        pytest.skip("Debian chromium is not installed: `sudo apt-get install -y chromium` (make test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = ctx.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url))
    pg.dialogs, pg.requests = dialogs, requests
    yield pg
    ctx.close()
