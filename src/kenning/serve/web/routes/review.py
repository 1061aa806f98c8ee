"""Review: what waits for a person — DOC72 nodes not yet confirmed, self-belief conflicts, tentative links, and
(once it is on main) the evidence-bundle review queue. Each action is one recorded change: node feedback is a
single-writer commit (confirm / reject / correct move α/β, so the confidence shown) undone by a compensating
rollback commit; conflicts and links run their side stages (`self-conflicts`, `self-links`), which keep no undo."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator
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


class Refused(Exception):
    """A review action not done; its message goes back to the review page."""


@contextmanager
def _refusing(what: str, errors: tuple[type[BaseException], ...] = (KnowledgeError, ValueError)) -> Iterator[None]:
    try:
        yield
    except errors as e:
        raise Refused(f"{what} refused: {e}") from e


Done = tuple[str, dict[str, str]]   # where to go back to, and the query parameters (msg, undo) to show there


def _action(path: str) -> Callable[[Callable[..., Done]], Callable[..., Done]]:
    """The skeleton every review POST shares: the CSRF check, then the action (which opens its writable vault),
    then back to the page — to the action's target with its message, or to /review with the refusal."""
    def register(act: Callable[..., Done]) -> Callable[..., Done]:
        async def route(request: Request) -> RedirectResponse:
            state = request.app.state.web
            form = await request.form()
            check_csrf(state, form)
            try:
                target, params = act(state, form)
            except Refused as e:
                return _back(request, form, "/review", msg=str(e))
            return _back(request, form, target, **params)

        route.__name__, route.__doc__ = act.__name__, act.__doc__
        router.post(path)(route)
        return act
    return register


@_action("/review/node")
def node_feedback(state, form) -> Done:
    from kenning.knowledge.ops import Feedback, KnowledgeWrite
    from kenning.knowledge.read import resolve_node

    action, ref = str(form.get("action") or ""), str(form.get("node") or "")
    if action not in ("confirm", "reject", "correct"):
        raise Refused(f"unknown action {action!r}")
    name = (str(form.get("name") or "").strip() or None) if action == "correct" else None
    reason = str(form.get("reason") or "").strip() or None
    with state.writer() as vault, _refusing(action):
        target = resolve_node(vault.conn, ref)
        req = KnowledgeWrite(source_event=f"user:{action}", change_summary=f"{action} {target['canonical_name']!r} "
                             "(web UI)" + (f": {reason}" if reason else ""),
                             ops=[Feedback(id=target["id"], action=action, reason=reason, canonical_name=name)])
        res = _writer(state, vault).write(req)
    return f"/node/{target['id']}", {"undo": res.commit_id or "",
                                     "msg": f"{action}ed {target['canonical_name']} "
                                            f"(commit {(res.commit_id or '')[:12]})"}


@_action("/review/bundle")
def bundle_verdict(state, form) -> Done:
    """approve / reject one evidence bundle through `Vault.review()` (once on main); a knowledge commit, so the
    undo button rolls it back like any other."""
    action, ref = str(form.get("action") or ""), str(form.get("ref") or "")
    if action not in ("approve", "reject"):
        raise Refused(f"unknown action {action!r}")
    with state.writer() as vault:
        if not hasattr(vault, "review"):
            raise Refused("the evidence-bundle review is not on this version yet")
        with _refusing(action):
            if str(form.get("kind") or "") == "entity_creation_candidate":   # a new entity: create it or dismiss
                resolution = "create_new" if action == "approve" else "dismiss"
                extra = {"reason": "noise"} if resolution == "dismiss" else {}   # the seed's dismissal reasons
                receipt = vault.review("entity", ref, as_of=state.now, resolution=resolution, **extra)
            else:
                args = {"reason": "rejected in the web UI"} if action == "reject" else {}
                receipt = vault.review(action, ref, as_of=state.now, **args)
    return "/review", {"undo": str(receipt.get("commit_id") or ""), "msg": f"{action}d {ref[:12]}"}


@_action("/review/merge")
def merge_answer(state, form) -> Done:
    """Merge one near-duplicate pair (a knowledge commit: the undo button rolls it back) or keep the two apart."""
    action, ref = str(form.get("action") or ""), str(form.get("ref") or "")
    with state.writer() as vault, _refusing(action):
        receipt = vault.resolve_merge(ref, action, as_of=state.now)
    return "/review", {"undo": str(receipt.get("commit_id") or ""), "msg": receipt["detail"]}


@_action("/review/undo")
def undo(state, form) -> Done:
    commit = str(form.get("commit") or "")
    with state.writer() as vault, _refusing("undo"):
        res = _writer(state, vault).rollback(commit, reason="undone in the web UI")
    return "/review", {"msg": f"undone: commit {commit[:12]} rolled back by {(res.commit_id or '')[:12]}"}


def _side(state, vault, name: str, inputs: dict):
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import SIDE_STAGES

    return run_stage(vault.conn, SIDE_STAGES[name], vault.config, Clock(state.now), inputs=dict(inputs),
                     args={**inputs, "as_of": state.now, "llm": "none", "via": "web"}, llm_mode="none")


@_action("/review/conflict")
def conflict(state, form) -> Done:
    from kenning.store import selfbeliefs as sb_sql

    edge, keep = str(form.get("edge") or ""), str(form.get("keep") or "")
    with state.writer() as vault:
        e = sb_sql.get_edge_by_id(vault.conn, edge) if edge else None
        if e is None or e["status"] != "active":
            raise Refused(f"resolve refused: conflict {edge[:8]!r} is "
                          + ("unknown" if e is None else f"already {e['status']}"))
        # the stage's refusal (unknown or already resolved conflict) is shown, not a 500
        with _refusing("resolve", (Exception,)):
            _side(state, vault, "self-conflicts", {"edge_id": edge, "all": False, "method": "user_override",
                                                   "keep": keep})
    return "/review", {"msg": f"conflict {edge[:8]} resolved (kept {'both' if keep == 'both' else keep[:8]})"}


@_action("/review/link")
def link(state, form) -> Done:
    from kenning.store import selfbeliefs as sb_sql

    link_id, decision = str(form.get("link") or ""), str(form.get("decision") or "")
    if decision not in ("accept", "reject"):
        raise Refused(f"unknown decision {decision!r}")
    with state.writer() as vault:
        lk = sb_sql.get_link_by_id(vault.conn, link_id) if link_id else None
        if lk is None or lk["status"] != "pending":
            raise Refused(f"{decision} refused: link {link_id[:8]!r} is "
                          + ("unknown" if lk is None else f"already {lk['status']}"))
        # the stage's refusal (unknown or already decided link) is shown, not a 500
        with _refusing(decision, (Exception,)):
            _side(state, vault, "self-links", {"decisions": [(link_id, decision)]})
    return "/review", {"msg": f"link {link_id[:8]} {decision}ed"}
