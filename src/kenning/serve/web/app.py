"""The FastAPI app behind `kenning ui`: pages are server-rendered (Jinja2, autoescaped), the one script is
vendored (``static/kenning.js``), nothing is fetched from the internet. Reads go through a read-only vault;
the review actions (POST, CSRF-checked) open a writable one for the one change they make."""

from __future__ import annotations

import hmac
import ipaddress
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles

from kenning.serve.web.state import WebState

STATIC = Path(__file__).with_name("static")
# script-src 'self': even a quote that slipped past escaping could not run; no external origin is allowed at all.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
TOKEN_COOKIE = "kenning_token"
READ_THREADS = 4


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class CsrfError(Exception):
    pass


def create_app(db: str | Path, *, config_path: str | None = None, access_token: str | None = None,
               now: str | None = None) -> FastAPI:
    from kenning.serve.web.routes import conversations, home, node, review, search, self_beliefs, timeline, why

    from kenning.pipeline.clock import Clock

    state = WebState(Path(db), config_path, access_token, Clock.from_option(now).frozen_at)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        # Pages run in worker threads, each with its own read-only connection and so its own page cache: a few
        # threads (not anyio's default 40) keep those caches warm — 2 cores gain nothing from more (U11).
        anyio.to_thread.current_default_thread_limiter().total_tokens = READ_THREADS
        state._pool.submit(state.warm)     # the first search's loading, done before anyone asks
        yield
        state._pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="Kenning", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.web = state
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for mod in (home, search, why, node, self_beliefs, timeline, conversations, review):
        app.include_router(mod.router)

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        token = state.access_token
        given = None
        if token:
            given = (request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE)
                     or request.headers.get("authorization", "").removeprefix("Bearer ").strip() or None)
            if not given or not hmac.compare_digest(given, token):
                return PlainTextResponse("this Kenning UI needs its access token: open the URL `kenning ui` printed "
                                         "(…/?token=…)", status_code=401)
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin and origin != "null" and origin.split("://", 1)[-1] != request.headers.get("host"):
                return PlainTextResponse(f"refused: a form from {origin} may not change this vault", status_code=403)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        if token and request.query_params.get("token"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    @app.exception_handler(CsrfError)
    async def csrf_error(request: Request, exc: CsrfError) -> Response:
        return PlainTextResponse(f"refused: {exc} — reload the page and try again", status_code=403)

    from kenning.knowledge.errors import NodeNotFound

    @app.exception_handler(NodeNotFound)
    async def not_found(request: Request, exc: NodeNotFound) -> Response:
        return HTMLResponse(state.render("error.html", title="Not found", message=str(exc)), status_code=404)

    return app


def check_csrf(state: WebState, form: Any) -> None:
    sent = form.get("csrf") or ""
    if not hmac.compare_digest(str(sent), state.csrf_token):
        raise CsrfError("the form's CSRF token is missing or stale")
