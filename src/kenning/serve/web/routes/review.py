"""Review: what waits for a person — DOC72 nodes not yet confirmed, self-belief conflicts, tentative links, and
(once it is on main) the evidence-bundle review queue. Each action is one recorded change: node feedback is a
single-writer commit (confirm / reject / correct move α/β, so the confidence shown) undone by a compensating
rollback commit; conflicts and links run their side stages (`self-conflicts`, `self-links`), which keep no undo."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from kenning.knowledge.errors import KnowledgeError
from kenning.knowledge.read import node_view
from kenning.serve.web.app import check_csrf
from kenning.serve.web.routes.self_beliefs import self_overview
from kenning.store import web as web_sql

router = APIRouter()


def review_queue(vault) -> dict:
    """The evidence-bundle queue through `Vault.review_queue()` when that API exists (feature probe, U4): its
    first page (§42A.2.17 BackLinkReviewQueuePage: items with title, description, primary_ref, actions)."""
    if not hasattr(vault, "review_queue"):
        return {"available": False, "items": []}
    page = vault.review_queue(page=1, page_size=20)
    return {"available": True, "items": page.get("items", []), "total": page.get("total_items", 0)}


@router.get("/review", response_class=HTMLResponse)
def review(request: Request) -> HTMLResponse:
    state = request.app.state.web
    vault = state.reader()
    now = state.clock_now()
    nodes = [node_view(vault.conn, vault.config, r["id"], now=now, commits=1)
             for r in web_sql.list_nodes_for_review(vault.conn, limit=30)]
    over = self_overview(vault.conn, limit=0)
    return HTMLResponse(state.render("review.html", title="Review", nodes=nodes, conflicts=over["conflicts"],
                                     links=over["links"], queue=review_queue(vault),
                                     merges=vault.merge_candidates(page_size=20)["items"],
                                     message=request.query_params.get("msg"),
                                     undo=request.query_params.get("undo")))


def _back(request: Request, form, default: str, **params: str) -> RedirectResponse:
    target = str(form.get("back") or default)
    if not target.startswith("/") or target.startswith("//"):     # only back into this app
        target = default
    if params:
        target += ("&" if "?" in target else "?") + "&".join(f"{k}={quote(v)}" for k, v in params.items())
    return RedirectResponse(target, status_code=303)


def _writer(state, vault):
    from kenning.knowledge.writer import KnowledgeWriter
    from kenning.pipeline.clock import Clock

    return KnowledgeWriter(vault.conn, vault.config, clock=Clock(state.now))


@router.post("/review/node")
async def node_feedback(request: Request) -> RedirectResponse:
    from kenning.knowledge.ops import Feedback, KnowledgeWrite
    from kenning.knowledge.read import resolve_node

    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    action, ref = str(form.get("action") or ""), str(form.get("node") or "")
    if action not in ("confirm", "reject", "correct"):
        return _back(request, form, "/review", msg=f"unknown action {action!r}")
    name = (str(form.get("name") or "").strip() or None) if action == "correct" else None
    reason = str(form.get("reason") or "").strip() or None
    with state.writer() as vault:
        try:
            target = resolve_node(vault.conn, ref)
            req = KnowledgeWrite(source_event=f"user:{action}", change_summary=f"{action} {target['canonical_name']!r} "
                                 "(web UI)" + (f": {reason}" if reason else ""),
                                 ops=[Feedback(id=target["id"], action=action, reason=reason, canonical_name=name)])
            res = _writer(state, vault).write(req)
        except (KnowledgeError, ValueError) as e:
            return _back(request, form, "/review", msg=f"{action} refused: {e}")
    return _back(request, form, f"/node/{target['id']}", undo=res.commit_id or "",
                 msg=f"{action}ed {target['canonical_name']} (commit {(res.commit_id or '')[:12]})")


@router.post("/review/bundle")
async def bundle_verdict(request: Request) -> RedirectResponse:
    """approve / reject one evidence bundle through `Vault.review()` (once on main); a knowledge commit, so the
    undo button rolls it back like any other."""
    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    action, ref = str(form.get("action") or ""), str(form.get("ref") or "")
    if action not in ("approve", "reject"):
        return _back(request, form, "/review", msg=f"unknown action {action!r}")
    with state.writer() as vault:
        if not hasattr(vault, "review"):
            return _back(request, form, "/review", msg="the evidence-bundle review is not on this version yet")
        try:
            if str(form.get("kind") or "") == "entity_creation_candidate":   # a new entity: create it or dismiss
                resolution = "create_new" if action == "approve" else "dismiss"
                extra = {"reason": "noise"} if resolution == "dismiss" else {}   # the seed's dismissal reasons
                receipt = vault.review("entity", ref, as_of=state.now, resolution=resolution, **extra)
            else:
                args = {"reason": "rejected in the web UI"} if action == "reject" else {}
                receipt = vault.review(action, ref, as_of=state.now, **args)
        except (KnowledgeError, ValueError) as e:
            return _back(request, form, "/review", msg=f"{action} refused: {e}")
    return _back(request, form, "/review", undo=str(receipt.get("commit_id") or ""), msg=f"{action}d {ref[:12]}")


@router.post("/review/merge")
async def merge_answer(request: Request) -> RedirectResponse:
    """Merge one near-duplicate pair (a knowledge commit: the undo button rolls it back) or keep the two apart."""
    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    action, ref = str(form.get("action") or ""), str(form.get("ref") or "")
    with state.writer() as vault:
        try:
            receipt = vault.resolve_merge(ref, action, as_of=state.now)
        except (KnowledgeError, ValueError) as e:
            return _back(request, form, "/review", msg=f"{action} refused: {e}")
    return _back(request, form, "/review", undo=str(receipt.get("commit_id") or ""), msg=receipt["detail"])


@router.post("/review/undo")
async def undo(request: Request) -> RedirectResponse:
    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    commit = str(form.get("commit") or "")
    with state.writer() as vault:
        try:
            res = _writer(state, vault).rollback(commit, reason="undone in the web UI")
        except (KnowledgeError, ValueError) as e:
            return _back(request, form, "/review", msg=f"undo refused: {e}")
    return _back(request, form, "/review", msg=f"undone: commit {commit[:12]} rolled back by {(res.commit_id or '')[:12]}")


def _side(state, vault, name: str, inputs: dict):
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import SIDE_STAGES

    return run_stage(vault.conn, SIDE_STAGES[name], vault.config, Clock(state.now), inputs=dict(inputs),
                     args={**inputs, "as_of": state.now, "llm": "none", "via": "web"}, llm_mode="none")


@router.post("/review/conflict")
async def conflict(request: Request) -> RedirectResponse:
    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    edge, keep = str(form.get("edge") or ""), str(form.get("keep") or "")
    from kenning.store import selfbeliefs as sb_sql

    with state.writer() as vault:
        e = sb_sql.get_edge_by_id(vault.conn, edge) if edge else None
        if e is None or e["status"] != "active":
            return _back(request, form, "/review", msg=f"resolve refused: conflict {edge[:8]!r} is "
                         + ("unknown" if e is None else f"already {e['status']}"))
        try:
            _side(state, vault, "self-conflicts", {"edge_id": edge, "all": False, "method": "user_override",
                                                   "keep": keep})
        except Exception as e:   # the stage's refusal (unknown or already resolved conflict), shown, not a 500
            return _back(request, form, "/review", msg=f"resolve refused: {e}")
    return _back(request, form, "/review", msg=f"conflict {edge[:8]} resolved (kept {'both' if keep == 'both' else keep[:8]})")


@router.post("/review/link")
async def link(request: Request) -> RedirectResponse:
    state = request.app.state.web
    form = await request.form()
    check_csrf(state, form)
    link_id, decision = str(form.get("link") or ""), str(form.get("decision") or "")
    if decision not in ("accept", "reject"):
        return _back(request, form, "/review", msg=f"unknown decision {decision!r}")
    from kenning.store import selfbeliefs as sb_sql

    with state.writer() as vault:
        lk = sb_sql.get_link_by_id(vault.conn, link_id) if link_id else None
        if lk is None or lk["status"] != "pending":
            return _back(request, form, "/review", msg=f"{decision} refused: link {link_id[:8]!r} is "
                         + ("unknown" if lk is None else f"already {lk['status']}"))
        try:
            _side(state, vault, "self-links", {"decisions": [(link_id, decision)]})
        except Exception as e:   # the stage's refusal (unknown or already decided link), shown, not a 500
            return _back(request, form, "/review", msg=f"{decision} refused: {e}")
    return _back(request, form, "/review", msg=f"link {link_id[:8]} {decision}ed")
