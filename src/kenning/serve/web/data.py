"""Views the pages compose from store and read functions (no SQL here): an entity's facts with their valid time,
and its mentions in context."""

from __future__ import annotations

from typing import Any

from kenning.cli.facts import fact_view, statement
from kenning.store import assertions as asql
from kenning.store import entities as esql
from kenning.store import temporal as tsql


def entity_facts(conn, entity_id: str, limit: int = 200) -> list[dict[str, Any]]:
    """The facts whose subject is ``entity_id`` (first ``limit`` in the facts order) with their stage-5 valid time
    and status, as `kenning history` shows them."""
    views = {r["assertion_id"]: fact_view(r) for r in asql.facts(conn, subject_ids=[entity_id], limit=limit)}
    temporal = tsql.temporal_of(conn, list(views)) if tsql.has_stage5(conn) else {}
    out = []
    for aid, v in views.items():
        t = temporal.get(aid) or {}
        out.append({"assertion_id": aid, "statement": statement(v), "predicate": v["predicate"],
                    "object": v["object"] if v["object"] is not None else "(yes)", "polarity": v["polarity"],
                    "quote": v["quote"], "said_at": v["message_date"], "conversation_id": v["conversation_id"],
                    "conversation_title": v["conversation_title"], "message_id": v["message_id"],
                    "status": t.get("status", "—"), "valid_from_utc": t.get("valid_from_utc"),
                    "valid_to_utc": t.get("valid_to_utc")})
    out.sort(key=lambda i: (i["predicate"], i["valid_from_utc"] or i["said_at"] or "", i["assertion_id"]))
    return out


def entity_mentions(conn, entity_id: str, limit: int = 30, width: int = 70) -> list[dict[str, Any]]:
    out = []
    for m in esql.mentions_of_entity(conn, entity_id, limit):
        text, s, e = m["text_raw"] or "", m["char_start"], m["char_end"]
        if s is None or e is None:
            out.append({**m, "snippet": text[:2 * width], "spans": []})
            continue
        a, b = max(0, s - width), min(len(text), e + width)
        out.append({**m, "snippet": ("…" if a else "") + text[a:b] + ("…" if b < len(text) else ""),
                    "spans": [(s - a + (1 if a else 0), e - a + (1 if a else 0), "entity")]})
    return out
