"""Reading the conversation corpus (seed 003 §25.2–25.3): ``search_conversation_history``, ``get_related_threads``,
``resume_context`` and the "[Prior Context — reference]" card. Read-only; shared by the CLI and the MCP server.

Search (I55): BM25 over each thread's title, checkpoint summary, decisions and open items, computed in memory over
the thread rows (a personal corpus is thousands of threads, not millions). Entity scope narrows to threads linked to
the named entity first. An entity is named by node id, canonical name or alias (I56)."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import apsw

from kenning.config import Config
from kenning.store import corpus as sql

CARD_TITLE = "[Prior Context — reference]"
_TOKEN = re.compile(r"[a-z0-9]+")


class CorpusError(LookupError):
    """A read the user must change (unknown entity, …); the message says how. A LookupError, so the MCP server
    relays it as a tool error."""


def _check(conn: apsw.Connection) -> None:
    if not sql.has_corpus(conn):
        raise CorpusError("this vault has no conversation threads yet (it predates them): run `kenning ingest` on "
                          "your exports once to upgrade it and build them")


def resolve_entity(conn: apsw.Connection, entity: str) -> list[dict[str, Any]]:
    found = sql.find_entity_nodes(conn, entity.strip())
    if not found:
        raise CorpusError(f"no entity named {entity!r} in the knowledge graph; `kenning nodes --kind "
                          "world_entity` lists the names (ingest first if the vault is empty)")
    return found


def _thread_out(conn: apsw.Connection, t: dict[str, Any], names: dict[str, str] | None = None) -> dict[str, Any]:
    names = names if names is not None else sql.node_names(conn, t["linked_entity_ids"] or [])
    out = {k: t[k] for k in sql.THREAD_COLUMNS}
    out["linked_entities"] = [{"id": i, "name": names.get(i, i)} for i in t["linked_entity_ids"] or []]
    out["summary_method"] = t.get("method")
    return out


def _incognito(conn: apsw.Connection, config: Config | None) -> set[str]:
    """Threads of incognito conversations: the purge removes them, but a rule set since (a config pattern before
    the next run) already hides them from every read (I79)."""
    if config is None:
        return set()
    from kenning.intake.modes import incognito_conversations

    return set(incognito_conversations(conn, config).basis)


def list_threads(conn: apsw.Connection, entity: str | None = None, limit: int = 20,
                 config: Config | None = None) -> dict[str, Any]:
    _check(conn)
    ents = resolve_entity(conn, entity) if entity else None
    hidden = _incognito(conn, config)
    ts = sql.threads(conn, entity_ids=[e["id"] for e in ents] if ents is not None else None,
                     limit=limit + len(hidden))
    ts = [t for t in ts if t["thread_id"] not in hidden][:limit]
    return {"entity": ents[0] if ents else None, "count": len(ts), "threads": [_thread_out(conn, t) for t in ts]}


def get_related_threads(conn: apsw.Connection, entity_id: str, limit: int = 20,
                        config: Config | None = None) -> dict[str, Any]:
    """§25.2 ``get_related_threads(entity_id)`` — threads linked to an entity, most recent first."""
    return list_threads(conn, entity_id, limit, config)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _doc(t: dict[str, Any]) -> str:
    return " ".join([t.get("title_hint") or "", t.get("title_hint") or "", t.get("checkpoint_summary") or "",
                     *(t.get("key_decisions") or []), *(t.get("unresolved_items") or [])])


def _vector_scores(conn: apsw.Connection, config: Config, query: str, k: int) -> dict[str, float]:
    """Nearest thread summaries in space ``threads`` (I65); the query is embedded without the vault's embedding
    cache so the read stays a read (as D56). Empty when there are no vectors or another model made them."""
    from kenning.intake.corpus.threads import SPACE
    from kenning.llm.embed import get_embedder
    from kenning.llm.index import VectorIndex
    from kenning.store import vectors as vsql

    table = vsql.active_table(conn)
    if table is None:
        return {}
    emb = get_embedder(config, table["model_id"], dimension=int(table["dimension"]))
    if emb.model_id != table["model_id"]:
        return {}
    hits = VectorIndex(conn, config).search(emb.embed([query])[0], k, space=SPACE, model_id=table["model_id"])
    return {h.item_id: round(float(h.score), 6) for h in hits}


def search_conversation_history(conn: apsw.Connection, config: Config, query: str,
                                entity_scope: str | None = None, limit: int | None = None,
                                vectors: bool | None = None) -> dict[str, Any]:
    """§25.2 ``search_conversation_history(query, entity_scope?)`` — ranked thread summaries: BM25 (I55), fused by
    reciprocal rank with the summaries' vectors when ``vectors`` (default ``corpus.resume.search_vectors``; I65)."""
    _check(conn)
    limit = limit or config.corpus.resume.search_limit
    ents = resolve_entity(conn, entity_scope) if entity_scope else None
    hidden = _incognito(conn, config)
    pool = [t for t in sql.threads(conn, entity_ids=[e["id"] for e in ents] if ents is not None else None)
            if t["thread_id"] not in hidden]
    q = [w for w in dict.fromkeys(_tokens(query))]
    if not q:
        raise CorpusError("the query has no words to search for")
    docs = [Counter(_tokens(_doc(t))) for t in pool]
    n = len(docs)
    avg = (sum(sum(d.values()) for d in docs) / n) if n else 0.0
    df = {w: sum(1 for d in docs if w in d) for w in q}
    k1, b = 1.2, 0.75
    scored = []
    for t, d in zip(pool, docs):
        length = sum(d.values()) or 1
        s = 0.0
        for w in q:
            tf = d.get(w, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / (avg or 1)))
        if s > 0:
            scored.append((round(s, 6), t))
    scored.sort(key=lambda x: (-x[0], -(_ts(x[1]["occurred_at"])), x[1]["thread_id"]))
    use_vectors = config.corpus.resume.search_vectors if vectors is None else vectors
    if not use_vectors:
        hits = [{**_thread_out(conn, t), "score": s} for s, t in scored[:limit]]
        return {"query": query, "entity_scope": ents[0] if ents else None, "count": len(hits), "threads": hits}
    by_id = {t["thread_id"]: t for t in pool}
    vec = {tid: sc for tid, sc in _vector_scores(conn, config, query, max(limit * 3, 30)).items() if tid in by_id}
    fused: dict[str, float] = {}
    for rank, (_, t) in enumerate(scored, 1):
        fused[t["thread_id"]] = fused.get(t["thread_id"], 0.0) + 1 / (60 + rank)
    for rank, tid in enumerate(sorted(vec, key=lambda i: (-vec[i], i)), 1):
        fused[tid] = fused.get(tid, 0.0) + 1 / (60 + rank)
    bm25 = {t["thread_id"]: s for s, t in scored}
    order = sorted(fused, key=lambda i: (-fused[i], i))[:limit]
    hits = [{**_thread_out(conn, by_id[i]), "score": round(fused[i], 6), "bm25": bm25.get(i),
             "vector_score": vec.get(i)} for i in order]
    return {"query": query, "entity_scope": ents[0] if ents else None, "count": len(hits), "threads": hits}


def _ts(v: str | None) -> float:
    # ISO strings order lexically; a numeric key only breaks ties deterministically.
    return float(re.sub(r"\D", "", v or "")[:14] or 0)


def resume_context(conn: apsw.Connection, config: Config, entity_id: str | None = None) -> dict[str, Any]:
    """§25.2 ``resume_context(entity_id?)`` — the most recent thread (for the entity, if given), its checkpoint and
    the card text. ``found`` is false when there is no thread to resume."""
    _check(conn)
    ents = resolve_entity(conn, entity_id) if entity_id else None
    hidden = _incognito(conn, config)
    ts = sql.threads(conn, entity_ids=[e["id"] for e in ents] if ents is not None else None, limit=1 + len(hidden))
    ts = [t for t in ts if t["thread_id"] not in hidden][:1]
    if not ts:
        return {"found": False, "entity": ents[0] if ents else None, "thread": None, "decisions": [],
                "card": f"{CARD_TITLE}\nNo earlier conversation" + (f" about {ents[0]['canonical_name']}"
                                                                    if ents else "") + " to resume."}
    t = ts[0]
    cps = sql.checkpoints(conn, t["thread_id"])
    cfg = config.corpus.resume
    thread = _thread_out(conn, t)
    decisions = cps[-cfg.max_decisions:] if cps else []
    card = render_card(thread, decisions, cfg.max_decisions, cfg.max_open)
    return {"found": True, "entity": ents[0] if ents else None, "thread": thread, "decisions": decisions,
            "card": card}


def render_card(thread: dict[str, Any], decisions: list[dict[str, Any]], max_decisions: int, max_open: int) -> str:
    """§25.3 "[Prior Context — reference]": where things stood, what was decided, what is open."""
    when = (thread.get("occurred_at") or "unknown time")[:16].replace("T", " ")
    lines = [CARD_TITLE,
             f"Thread: {thread['title_hint']} ({thread.get('channel') or 'chat'}, {when}, "
             f"{thread.get('turn_count') or 0} turns)"]
    if thread.get("linked_entities"):
        lines.append("About: " + ", ".join(e["name"] for e in thread["linked_entities"][:6]))
    lines.append(f"Where things stood: {thread.get('checkpoint_summary') or '—'}")
    decided = [(d["description"], d.get("reasoning")) for d in decisions] or \
              [(d, None) for d in (thread.get("key_decisions") or [])]
    lines.append("What was decided:" + ("" if decided else " nothing recorded"))
    for desc, why in decided[-max_decisions:]:
        lines.append(f"- {desc}" + (f" (why: {why})" if why and why != "stated by the user" else ""))
    opened = thread.get("unresolved_items") or []
    lines.append("What is open:" + ("" if opened else " nothing recorded"))
    lines.extend(f"- {u}" for u in opened[:max_open])
    return "\n".join(lines)


__all__ = ["CARD_TITLE", "CorpusError", "get_related_threads", "list_threads", "render_card", "resolve_entity",
           "resume_context", "search_conversation_history"]
