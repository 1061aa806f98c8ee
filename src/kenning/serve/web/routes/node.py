"""Entity / node pages. `/node/{ref}`: a DOC72 node (knowledge/read.py's node view: aliases, confidence with its
α/β breakdown, edges current and ended, provenance with each excerpt re-checked ✓/✗, commits) joined to the
seed-001 entity of the same name for its mentions in context and facts with their valid-time history (drawn).
`/entity/{id}`: a seed-001 entity that has no node. `/nodes`: the node list."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kenning.knowledge import said
from kenning.knowledge.read import node_rows, node_view
from kenning.serve.web import data
from kenning.serve.web.charts import valid_time_svg
from kenning.store import entities as esql
from kenning.store import web as web_sql

router = APIRouter()
PAGE = 50


def _entity_part(state, conn, entity: dict | None) -> dict:
    if entity is None:
        return {}
    facts = data.entity_facts(conn, entity["entity_id"])
    return {"entity": entity, "mentions": data.entity_mentions(conn, entity["entity_id"]), "facts": facts,
            "facts_svg": valid_time_svg(facts, now=state.clock_now())}


@router.get("/node/{ref}", response_class=HTMLResponse)
def node_page(request: Request, ref: str) -> HTMLResponse:
    state = request.app.state.web
    conn = state.reader().conn
    view = node_view(conn, state.reader().config, ref, now=state.clock_now())
    # beside the decayed value: how strongly it was said and when last (H3), so an old live goal does not look dead
    view["said"] = said.reading(conn, state.reader().config, view, state.clock_now(), view["provenance"])
    entity = web_sql.entity_by_name(conn, view["canonical_name"])
    return HTMLResponse(state.render("node.html", title=view["canonical_name"], node=view,
                                     undo=request.query_params.get("undo"),
                                     message=request.query_params.get("msg"), **_entity_part(state, conn, entity)))


@router.get("/entity/{entity_id}", response_class=HTMLResponse)
def entity_page(request: Request, entity_id: str) -> HTMLResponse:
    state = request.app.state.web
    conn = state.reader().conn
    ent = esql.get_entity(conn, entity_id)
    if ent is None:
        return HTMLResponse(state.render("error.html", title="Not found", message=f"no entity {entity_id!r}"),
                            status_code=404)
    return HTMLResponse(state.render("node.html", title=ent["canonical_name"], node=None, undo=None,
                                     **_entity_part(state, conn, ent)))


@router.get("/nodes", response_class=HTMLResponse)
def nodes_page(request: Request, kind: str = "", q: str = "", page: int = 0) -> HTMLResponse:
    """The node list by kind, or the nodes a name finds (§41.2 search_knowledge: name / alias, then full text)."""
    state = request.app.state.web
    vault = state.reader()
    page = max(0, page)
    if q.strip():
        found = vault.inspect("search_knowledge", query=q.strip(), now=state.clock_now())["result_data"]["hits"]
        nodes = [{"id": h["node_id"], **h} for h in found if not kind or h["node_kind"] == kind]
        res = {"nodes": nodes, "total": len(nodes), "shown": len(nodes), "offset": 0}
    else:
        res = node_rows(vault.conn, vault.config, now=state.clock_now(), kind=kind or None, limit=PAGE,
                        offset=page * PAGE)
    return HTMLResponse(state.render("nodes.html", title="Nodes", res=res, kind=kind, q=q, page=page,
                                     per_page=PAGE))
