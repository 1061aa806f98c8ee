"""Search (`/search?q=…`): the hybrid search the CLI and MCP use, with kind and as-of filters; every hit shows
speaker, date, conversation and its evidence chain, the matched span marked in the text."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter()
KINDS = ("message", "entity", "belief")      # the search index's document kinds (`kenning search --kind`)


def _spans(hit: dict) -> list[tuple[int, int, str]]:
    out = []
    for ev in hit.get("evidence", []):
        if ev.get("kind") in ("mentions_entity", "assertion") and ev.get("char_start") is not None:
            out.append((ev["char_start"], ev["char_end"], "entity" if ev["kind"] == "mentions_entity" else "fact"))
    return out


@router.get("/search", response_class=HTMLResponse)
def search(request: Request, q: str = "", kind: str = "", as_of: str = "", k: int = 20) -> HTMLResponse:
    state = request.app.state.web
    result, error = None, None
    if q.strip():
        try:
            res = state.reader().search(q, k=max(1, min(k, 100)), as_of=as_of or None,
                                        kinds=[kind] if kind in KINDS else None)
            result = res.as_dict()
            for h in result["hits"]:
                h["spans"] = _spans(h)
        except ValueError as e:       # a bad as-of date, an empty parse: say what to fix
            error = str(e)
    return HTMLResponse(state.render("search.html", title=f"Search {q}" if q else "Search", q=q, kind=kind,
                                     as_of=as_of, kinds=KINDS, result=result, error=error))
