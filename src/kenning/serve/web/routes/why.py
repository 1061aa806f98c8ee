"""Belief / why (`/why?q=…`): current beliefs on a topic, their history with supersession reasons, every supporting
quote shown inside its message with ✓/✗ from the quote check, and "what did I believe on DATE" (`until`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.store import web as web_sql

router = APIRouter()


def _quote_in_message(conn, src: dict) -> dict:
    """The message around a quote, with the quote's span marked (when the source is a message still in the vault)."""
    msg = web_sql.message_with_conversation(conn, src["message_id"]) if src.get("message_id") else None
    if msg is None:
        return {**src, "message_text": None, "spans": []}
    text = msg["text_raw"] or ""
    s, e = src.get("char_start"), src.get("char_end")
    if s is None or e is None or text[s:e] != (src.get("quote") or ""):
        q = src.get("quote") or ""
        at = text.find(q) if q else -1
        s, e = (at, at + len(q)) if at >= 0 else (None, None)
    return {**src, "message_text": text, "spans": [(s, e, "quote")] if s is not None else []}


@router.get("/why", response_class=HTMLResponse)
def why(request: Request, q: str = "", until: str = "", workspace: str = "") -> HTMLResponse:
    state = request.app.state.web
    vault = state.reader()
    ans, error = None, None
    if q.strip():
        try:
            ans = vault.why(q, until=until or None, workspace=workspace or None)
        except ValueError as e:
            error = str(e)
    if ans:
        for a in ans["answers"]:
            a["sources_view"] = [_quote_in_message(vault.conn, s) for s in a.get("supporting_sources", [])[:5]]
    return HTMLResponse(state.render("why.html", title=f"Why {q}" if q else "Why", q=q, until=until,
                                     workspace=workspace, ans=ans, error=error))
