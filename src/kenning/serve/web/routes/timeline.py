"""Timeline: the month-by-month profile (`kenning timeline`'s data) as an interactive chart, for you or a named
entity. Loading it can walk the whole graph (an entity without a stored profile); the result is cached per vault
version and yours is computed when the server starts (decision U6), so a page view reads memory."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.graph.timeline import load_timeline
from kenning.serve.web.charts import months_svg, valid_time_svg
from kenning.store import temporal as tsql
from kenning.store import web as web_sql

router = APIRouter()
PAGE = 24


WAIT_S = 0.1     # how long a page waits for a timeline being computed before it says "computing…" (U6)


def timeline_data(state, entity: str | None) -> dict | None:
    """The timeline, or None while it is being computed in the background."""
    vault = state.reader()
    version = web_sql.vault_version(vault.conn)
    if not tsql.has_stage5(vault.conn):
        return {"name": entity or "You", "windows": [], "states": [], "missing": "stage 5 has not run on this vault"}

    def load() -> dict:
        v = state.reader()      # the worker thread's own read-only vault
        return load_timeline(v.conn, entity or None, v.config)

    done, tl = state.cached_or_background(("timeline", (entity or "").casefold()), version, load, WAIT_S)
    return tl if done else None


@router.get("/timeline", response_class=HTMLResponse)
def timeline(request: Request, entity: str = "", page: int = -1) -> HTMLResponse:
    state = request.app.state.web
    try:
        tl = timeline_data(state, entity.strip() or None)
    except LookupError as e:
        return HTMLResponse(state.render("error.html", title="Timeline", message=str(e)), status_code=404)
    if tl is None:
        return HTMLResponse(state.render("computing.html", title="Timeline", entity=entity))
    windows = tl["windows"]
    pages = max(1, -(-len(windows) // PAGE))
    page = pages - 1 if page < 0 or page >= pages else page        # newest months first shown
    shown = windows[page * PAGE:(page + 1) * PAGE]
    return HTMLResponse(state.render(
        "timeline.html", title=f"Timeline — {tl['name']}", tl=tl, entity=entity, windows=shown, page=page,
        pages=pages, chart=months_svg(shown), states_svg=valid_time_svg(
            [{**s, "statement": s["object"]} for s in tl["states"]], now=state.clock_now())))
