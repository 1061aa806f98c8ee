"""Conversation beliefs (issue 8 item 3): every temporalized, user-grounded claim becomes a ledger belief.

Each belief: statement rendered from the claim (≤ 280 characters), topic = the predicate's category,
subject/predicate/object, provenance = the message span with its verbatim quote (the ledger re-hashes it),
``asserted_at``/``superseded_at`` = stage 5's transaction time, ``source_valid_from/to`` = valid time, and the
supersession from stage 5 — superseded by a newer state or negated: ``contradicted_by_new_source`` with the
successor belief; corrected or retracted by the user: ``manual_correction``. Members of a conflict group (not
same-time duplicates, which agree) contradict each other. Published with ``publish_beliefs`` in stage 5's
transaction (docs/decisions.md T30).
"""

from __future__ import annotations

from typing import Any

import orjson

from kenning.beliefs.ledger import BeliefInput, BeliefSource

AGREEING = ("SAME_TIME_DUPLICATES",)


def belief_id(ids: Any, assertion_id: str) -> str:
    return ids.make("belief", "conversation", assertion_id)


def _object(r: dict) -> str | None:
    if r["object_name"] is not None:
        return r["object_name"]
    if r["object_value"] is not None:
        v = orjson.loads(r["object_value"])
        if isinstance(v, dict) and set(v) == {"kind", "value"}:
            v = v["value"]
        return str(v)
    return None


FIRST_PERSON = {"has": "have", "is": "am", "does": "do", "goes": "go", "was": "was"}


def statement(r: dict, limit: int) -> str:
    """"I live in Berlin (from 2019-01-01 to 2023-03-01)", "my sister lives in Lisbon", "I — habit: running"."""
    is_self = r["subject_key"] == "__SELF__"
    subj = "I" if is_self else r["subject_name"].replace("SELF's", "my")
    words = r["predicate"].split("_")
    verb = words[0]
    obj = _object(r)
    if is_self and verb in FIRST_PERSON:
        verb = FIRST_PERSON[verb]
    elif is_self and verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-1]
    elif not verb.endswith("s") and verb not in ("was", "gets"):
        verb = ""                                           # a noun label: "habit", "activity"
    if verb:
        neg = ("do not " if is_self else "does not ") if r["polarity"] == "negative" else ""
        if neg and verb in ("am", "is", "have", "has"):
            neg, verb = "", f"{verb} not"
        elif neg:
            verb = words[0][:-1] if words[0].endswith("s") and not is_self else verb
        text = f"{subj} {neg}{' '.join([verb, *words[1:]])}" + (f" {obj}" if obj is not None else "")
    else:
        neg = "not " if r["polarity"] == "negative" else ""
        text = f"{subj} — {' '.join(words)}: {neg}{obj if obj is not None else 'yes'}"
    if r["valid_from_utc"] and r["explicit"]:
        text += f" (from {r['valid_from_utc'][:10]}" + (f" to {r['valid_to_utc'][:10]})" if r["valid_to_utc"] else ")")
    elif r["valid_to_utc"]:
        text += f" (until {r['valid_to_utc'][:10]})"
    elif r["valid_until_hint_utc"]:
        text += f" (until {r['valid_until_hint_utc'][:10]})"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def conversation_beliefs(rows: list[dict], conflicts: list[dict], ids: Any, statement_max: int) -> tuple[
        list[BeliefInput], dict[str, int]]:
    counts = {"beliefs_skipped_spanless": 0, "beliefs_skipped_quote": 0}
    keep = {}
    for r in rows:
        if r["char_start"] is None or r["surface_text"] is None:
            counts["beliefs_skipped_spanless"] += 1
            continue
        if (r["text_raw"] or "")[r["char_start"]:r["char_end"]] != r["surface_text"]:
            counts["beliefs_skipped_quote"] += 1
            continue
        keep[r["assertion_id"]] = r
    contra: dict[str, set[str]] = {}
    for g in conflicts:
        if g["conflict_type"] in AGREEING:
            continue
        members = [m for m in g["member_ids"] if m in keep]
        for a in members:
            contra.setdefault(a, set()).update(b for b in members if b != a)
    items = []
    for aid in sorted(keep):
        r = keep[aid]
        succ = reason = None
        superseded_at = r["superseded_at_utc"]
        if r["status"] == "superseded":
            succ = r["temporal_superseded_by_assertion_id"]
            reason = "manual_correction" if r["supersession_type"] == "correction" else "contradicted_by_new_source"
        elif r["status"] == "negated":
            succ = r["negated_by_assertion_id"]
            reason = "contradicted_by_new_source"
        elif r["status"] == "retracted":
            reason = "manual_correction"
        if reason is None:
            superseded_at = None
        items.append(BeliefInput(
            belief_id=belief_id(ids, aid), statement=statement(r, statement_max),
            topic=r["category"] or r["predicate"],
            sources=(BeliefSource(kind="conversation", quote=r["surface_text"], conversation_id=r["conversation_id"],
                                  message_id=r["message_id"], char_start=r["char_start"], char_end=r["char_end"]),),
            asserted_at=r["asserted_at_utc"], subject=r["subject_name"], predicate=r["predicate"],
            object=_object(r), superseded_at=superseded_at,
            superseded_by=belief_id(ids, succ) if succ and succ in keep and superseded_at else None,
            supersession_reason=reason if superseded_at else None,
            # valid time only when the message dates it; an undated claim's message time is not world time (§5.4.5),
            # though an end ("I stopped …") is still an upper bound
            source_valid_from=r["valid_from_utc"] if r["explicit"] else None, source_valid_to=r["valid_to_utc"],
            contradicting_belief_ids=tuple(sorted(belief_id(ids, c) for c in contra.get(aid, ())))))
    counts["beliefs_published"] = len(items)
    return items, counts
