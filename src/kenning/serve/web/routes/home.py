"""Home: the vault at a glance — sources, counts, last runs, rejects, graph health, and what changed since the
last visit (kept in a cookie, so reading the home page never writes to the vault; decision U3)."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.store import graph as graph_sql
from kenning.store import runs as runs_sql
from kenning.store import web as web_sql

router = APIRouter()
LAST_VISIT = "kenning_last_visit"


def health_of(vault) -> dict:
    """Graph health: `Vault.health()` once the DOC72 maintain work lands on main (feature probe, U4); until then the
    stage-6 graph's quality numbers, labelled as such."""
    if hasattr(vault, "health"):
        return {"source": "Vault.health()", "report": vault.health(), "pending": False}
    try:
        q = graph_sql.quality(vault.conn)
    except Exception as e:   # a vault without stage 6 yet
        q = {"error": str(e)}
    return {"source": "stage-6 graph quality", "report": q, "pending": True}


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> HTMLResponse:
    state = request.app.state.web
    vault = state.reader()
    conn = vault.conn
    since = request.cookies.get(LAST_VISIT)
    runs = runs_sql.last_runs(conn, 8)
    for r in runs:
        r["counts"] = orjson.loads(r["counts_json"]) if r.get("counts_json") else {}
    version = web_sql.vault_version(conn)
    # the graph quality walk is the slow part of this page on a big vault: once per vault version
    health = state.cached("health", version, lambda: health_of(vault))
    changed = None
    if since:
        changed = {"since": since, "runs": web_sql.runs_after(conn, since, 20),
                   "commits": web_sql.commits_after(conn, since, 20)}
    page = state.render("home.html", title="Home", db=str(vault.path), counts=web_sql.headline_counts(conn),
                        sources=web_sql.sources(conn), runs=runs, rejects=vault.rejects(10), health=health,
                        changed=changed)
    resp = HTMLResponse(page)
    resp.set_cookie(LAST_VISIT, state.clock_now(), httponly=True, samesite="strict", max_age=3600 * 24 * 365)
    return resp
