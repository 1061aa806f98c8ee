"""Self: the self-belief streams (seed 000) with their statuses, active conflicts and pending tentative links —
the same views as `kenning self list / conflicts / links`."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.cli.selfbeliefs import STATUSES, STREAMS, _edge_view, _link_view, node_view
from kenning.store import selfbeliefs as sql

router = APIRouter()


def self_overview(conn, *, stream: str | None = None, status: str | None = None, limit: int = 100) -> dict:
    nodes = sql.surface(conn, stream=stream, status=status, limit=limit, include_inactive=False, order="activation")
    stats = sql.occurrence_stats(conn, [n["belief_id"] for n in nodes])
    beliefs = [node_view(n, stats.get(n["belief_id"])) for n in nodes]
    edges = sql.list_edges(conn, ["active"])
    links = sql.list_links(conn, ["pending"])
    names = sql.nodes_by_ids(conn, [x for e in edges for x in (e["node_a_id"], e["node_b_id"])]
                             + [x for lk in links for x in (lk["from_belief_id"], lk["to_belief_id"])])
    return {"beliefs": beliefs, "conflicts": [_edge_view(e, names) for e in edges],
            "links": [_link_view(lk, names) for lk in links]}


@router.get("/self", response_class=HTMLResponse)
def self_page(request: Request, stream: str = "", status: str = "") -> HTMLResponse:
    state = request.app.state.web
    view = self_overview(state.reader().conn, stream=stream if stream in STREAMS else None,
                         status=status if status in STATUSES else None)
    by_stream: dict[str, list] = {}
    for b in view["beliefs"]:
        by_stream.setdefault(b["stream"] or "unassigned", []).append(b)
    return HTMLResponse(state.render("self.html", title="Self", by_stream=by_stream, streams=STREAMS,
                                     statuses=STATUSES, stream=stream, status=status, **view))
