"""Conversations: every imported conversation, page by page; one conversation as the user saw it (the branch the
export shows), with extracted entity mentions and facts marked in the text. `?all=1` shows every branch."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.store import web as web_sql

router = APIRouter()
PAGE = 50


@router.get("/conversations", response_class=HTMLResponse)
def conversations(request: Request, q: str = "", page: int = 0) -> HTMLResponse:
    state = request.app.state.web
    page = max(0, page)
    items, total = web_sql.list_conversations(state.reader().conn, limit=PAGE, offset=page * PAGE, title=q or None)
    return HTMLResponse(state.render("conversations.html", title="Conversations", items=items, total=total, q=q,
                                     page=page, per_page=PAGE))


@router.get("/conversation/{conversation_id}", response_class=HTMLResponse)
def conversation(request: Request, conversation_id: str, all: int = 0, m: str = "") -> HTMLResponse:
    state = request.app.state.web
    conn = state.reader().conn
    head = web_sql.conversation_header(conn, conversation_id)
    if head is None:
        return HTMLResponse(state.render("error.html", title="Not found",
                                         message=f"no conversation {conversation_id!r}"), status_code=404)
    msgs = web_sql.conversation_messages(conn, conversation_id, branch_only=not all)
    if not msgs and not all:      # an export without current_node marks: show everything rather than nothing
        msgs = web_sql.conversation_messages(conn, conversation_id, branch_only=False)
    items = web_sql.items_of_messages(conn, [x["message_id"] for x in msgs])
    by_msg: dict[str, list] = {}
    for it in items:
        by_msg.setdefault(it["message_id"], []).append(it)
    for x in msgs:
        x["items"] = by_msg.get(x["message_id"], [])
        x["spans"] = [(it["char_start"], it["char_end"], it["item"]) for it in x["items"]]
    return HTMLResponse(state.render("conversation.html", title=head["title"] or "(untitled)", head=head, msgs=msgs,
                                     all=bool(all), focus=m))
