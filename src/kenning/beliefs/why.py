"""`why`: what do I believe about X, why, what did I believe before, and what changed my mind (seed 002).

Read-only and deterministic: SQL plus hash math. ``verified_against_source`` is recomputed on every call
against the live source (the raw file on disk, or ``messages.text_raw``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Sequence

import apsw
import orjson

from kenning.beliefs.quotes import LiveSources
from kenning.beliefs.timeutil import window
from kenning.config import Config
from kenning.sources.timestamps import format_utc, now_utc, parse_utc
from kenning.store import beliefs as sql

RESOLVERS = ("belief_id", "subject", "topic", "fts")
CHAIN = "supersession_chain"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_CHAIN_EXPANSION = 1000


class WhyError(ValueError):
    pass


def _jl(text: str | None) -> list[str]:
    return list(orjson.loads(text)) if text else []


def live_sources(conn: apsw.Connection) -> LiveSources:
    return LiveSources(sql.workspace_roots(conn), lambda ids: sql.message_texts(conn, ids))


def wiki_page(b: dict) -> str:
    anchor = b.get("wiki_section_anchor") or ""
    if anchor in ("#",):
        anchor = ""
    return f"{b['_doc_path']}{anchor}"


def source_kind_of(b: dict) -> str:
    return {"wiki_page": "wiki", "conversation": "conversation", "raw_source": "raw_file"}.get(b.get("_doc_kind"), "wiki")


def belief_entry(b: dict, match_type: str | None = None) -> dict[str, Any]:
    e = {k: b[k] for k in ("belief_id", "workspace", "statement", "topic", "subject", "predicate", "object",
                           "asserted_at", "asserted_in_run", "superseded_at", "superseded_by_belief_id",
                           "superseded_in_run", "supersession_reason", "source_valid_from", "source_valid_to",
                           "supporting_count", "confidence_hint", "recorded_at", "superseded_recorded_at")}
    e["footnote_ids"] = _jl(b["footnote_ids"])
    e["contradicting_belief_ids"] = _jl(b["contradicting_belief_ids"])
    e["wiki_page"] = wiki_page(b)
    e["source_kind"] = source_kind_of(b)
    if match_type is not None:
        e["match_type"] = match_type
    return e


def supporting_sources(conn: apsw.Connection, belief_ids: Sequence[str], live: LiveSources | None = None,
                       verified_at: str | None = None) -> dict[str, list[dict]]:
    """Each belief's quote anchors, each re-verified against the live source now."""
    live = live or live_sources(conn)
    verified_at = verified_at or now_utc()
    provs = sql.provenance_for_beliefs(conn, belief_ids)
    msg_ids = [p["message_id"] for ps in provs.values() for p in ps if p["message_id"]]
    meta = sql.messages_meta(conn, msg_ids) if msg_ids else {}
    live.prefetch_messages(msg_ids)
    out: dict[str, list[dict]] = {}
    for bid, ps in provs.items():
        items = []
        for p in ps:
            v = live.verify(p)
            item = {"provenance_id": p["id"], "source_kind": p["source_kind"], "raw_path": p["raw_path"],
                    "page_hint": p["page_hint"], "quote": p["quote"], "quote_hash": p["quote_hash"],
                    "verified_against_source": v.verified, "verification": v.status, "verified_at": verified_at,
                    "char_start": p["char_start"], "char_end": p["char_end"], "footnote_id": p["footnote_key"]}
            if v.status == "relocated":
                item["relocated_to"] = [v.char_start, v.char_end]
            if p["source_kind"] == "conversation":
                m = meta.get(p["message_id"], {})
                title = m.get("title") or "untitled conversation"
                date = m.get("created_at_utc")
                # For a chat the "raw path" is the conversation and message: its title and date (issue 8).
                item["raw_path"] = f"{title} · {date or 'undated message'}"
                item.update(conversation_id=p["conversation_id"], message_id=p["message_id"],
                            conversation_title=m.get("title"), message_date=date, speaker_role=m.get("role"))
            items.append(item)
        out[bid] = items
    return out


def fts_queries(query: str, any_fallback: bool) -> list[str]:
    words = list(dict.fromkeys(w for w in _WORD.findall(query.casefold()) if w))
    if not words:
        return []
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    out = [" ".join(quoted)]
    if any_fallback and len(quoted) > 1:
        out.append(" OR ".join(quoted))
    return out


def _chains(beliefs: dict[str, dict]) -> list[list[str]]:
    """Connected supersession components, each ordered oldest → newest (asserted_at, then id)."""
    parent = {b: b for b in beliefs}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for bid, b in beliefs.items():
        succ = b.get("superseded_by_belief_id")
        if succ in beliefs:
            parent[find(bid)] = find(succ)
    comps: dict[str, list[str]] = {}
    for bid in beliefs:
        comps.setdefault(find(bid), []).append(bid)
    ordered = []
    for ids in comps.values():
        ordered.append(sorted(ids, key=lambda i: (beliefs[i]["asserted_at"], i)))
    ordered.sort(key=lambda c: (max(beliefs[i]["asserted_at"] for i in c), c[-1]), reverse=True)
    return ordered


def _in_window(b: dict, lo: str | None, hi: str | None) -> bool:
    if lo and b["superseded_at"] is not None and not b["superseded_at"] > lo:
        return False
    if hi and not b["asserted_at"] < hi:
        return False
    return True


def _as_told(r: dict, told_hi: str | None) -> dict | None:
    """The row as Kenning knew it before ``told_hi`` (transaction time, W31): unknown then → None; an end Kenning
    learned of later is not applied."""
    if told_hi is None:
        return r
    if (r.get("recorded_at") or r["created_at"]) >= told_hi:
        return None
    if r["superseded_at"] is not None and (r.get("superseded_recorded_at") or r["superseded_at"]) >= told_hi:
        return {**r, "superseded_at": None, "superseded_by_belief_id": None, "superseded_in_run": None,
                "supersession_reason": None, "superseded_recorded_at": None}
    return r


def why(conn: apsw.Connection, config: Config, query: str, *, workspace: str | None = None, since: str | None = None,
        until: str | None = None, include_history: bool | None = None, predicate: str | None = None,
        verified_at: str | None = None, told_by: str | None = None) -> dict[str, Any]:
    """Seed 002's `why`: resolve ``query`` (belief_id → subject [+ predicate] → topic → the question's lanes:
    predicate and entity index, words, vectors) and trace it; answers grouped and given a status (W34–W38)."""
    from kenning.beliefs import answers as ans_mod
    from kenning.beliefs import question

    cfg = config.beliefs
    ws = workspace or cfg.default_workspace
    history_on = cfg.why.include_history if include_history is None else include_history
    limit = cfg.why.max_results
    q = (query or "").strip()
    if not q:
        raise WhyError("why needs a query: a belief id, a subject, a topic or some words")
    lo, hi = window(since, until)
    if lo and hi and lo >= hi:
        raise WhyError(f"since {since} is after until {until}")
    told_hi = window(None, told_by)[1] if told_by else None

    def told(rows: list[dict]) -> list[dict]:
        return [t for t in (_as_told(r, told_hi) for r in rows) if t is not None]

    matched: dict[str, dict] = {}
    match_types: list[str] = []
    total = 0
    for kind, (found, n) in (("belief_id", sql.find_by_id(conn, ws, q, lo, hi, limit)),
                             ("subject", sql.find_by_subject(conn, ws, q, predicate, lo, hi, limit)),
                             ("topic", sql.find_by_topic(conn, ws, q, predicate, lo, hi, limit))):
        found = told(found)
        if found:
            match_types.append(kind)
            total += n
            for b in found:
                matched.setdefault(b["belief_id"], {**b, "_match": kind})
    predicates: list[str] = []
    entities: list[str] = []
    if not matched:
        lanes = question.search(conn, config, ws, q, limit)
        predicates, entities = lanes.predicates, lanes.entities
        fused = lanes.fused(cfg.why.fusion_k)
        rows = sql.get_beliefs(conn, [b for b, _, _ in fused])
        me = question.self_subjects(config)
        if question.about_me(q) and any(r["subject"] in me for r in rows.values()):
            fused = [f for f in fused if f[0] in rows and rows[f[0]]["subject"] in me]   # yours, not Tom's
        for bid, score, lane in fused:
            r = rows.get(bid)
            r = _as_told(r, told_hi) if r is not None else None
            if r is None or not _in_window(r, lo, hi) or (predicate and r["predicate"] != predicate):
                continue
            matched[bid] = {**r, "_match": lane, "_score": round(score, 6)}
            if len(matched) >= limit:
                break
        total = len(matched)
        match_types = [m for m in ("predicate", "entity", "fts", "vector") if m in lanes.found and any(
            r["_match"] == m or r["belief_id"] in lanes.found[m] for r in matched.values())]
    truncated = total > len(matched)

    # The supersession chains the matches sit in (both directions), so history and chain are complete.
    everything = dict(matched)
    frontier = list(matched)
    while frontier and len(everything) < len(matched) + MAX_CHAIN_EXPANSION:
        succ_ids = [everything[b]["superseded_by_belief_id"] for b in frontier
                    if everything[b]["superseded_by_belief_id"] and everything[b]["superseded_by_belief_id"]
                    not in everything]
        found = told(list(sql.get_beliefs(conn, succ_ids).values()) + sql.predecessors(conn, frontier))
        frontier = []
        for b in found:
            if b["belief_id"] not in everything and b["workspace"] == ws:
                everything[b["belief_id"]] = {**b, "_match": CHAIN}
                frontier.append(b["belief_id"])

    def order(r: dict) -> tuple:
        return (-r.get("_score", 0.0), _neg(r["asserted_at"]), _neg(r["belief_id"]))

    listed = {b: r for b, r in everything.items() if _in_window(r, lo, hi)}
    current = sorted((r for r in listed.values() if r["superseded_at"] is None), key=order)
    past = sorted((r for r in listed.values() if r["superseded_at"] is not None),
                  key=lambda r: (r["superseded_at"], r["asserted_at"], r["belief_id"]), reverse=True) \
        if history_on else []
    contra_ids = sorted({c for r in current + past for c in _jl(r["contradicting_belief_ids"])} - set(listed))
    contra = [r for r in told(list(sql.get_beliefs(conn, contra_ids).values())) if _in_window(r, lo, hi)]
    contra.sort(key=lambda r: (r["asserted_at"], r["belief_id"]), reverse=True)
    shown = [r["belief_id"] for r in current + past + contra]
    sources = supporting_sources(conn, shown, verified_at=verified_at)
    ref = format_utc(parse_utc(hi) - dt.timedelta(milliseconds=1)) if hi else (verified_at or now_utc())
    statuses = ans_mod.statuses(current + past + contra, ref, functional_predicates(conn, config),
                                sql.undisputed_pairs(conn, ws))

    def entry(r: dict, with_match: bool = True) -> dict:
        e = belief_entry(r, r["_match"] if with_match else None)
        e["supporting_sources"] = sources.get(r["belief_id"], [])
        e["status"] = statuses[r["belief_id"]].status
        e["contested_with"] = statuses[r["belief_id"]].contested_with
        if "_score" in r:
            e["score"] = r["_score"]
        return e

    chains = _chains(everything)
    primary = None
    anchor = current[0]["belief_id"] if current else (max(matched.values(), key=lambda r: (r["asserted_at"],
                                                      r["belief_id"]))["belief_id"] if matched else None)
    if anchor is not None:
        primary = next(c for c in chains if anchor in c)
    cur_e, past_e = [entry(r) for r in current], [entry(r) for r in past]
    contra_e = [entry(r, with_match=False) for r in contra]
    answer: dict[str, Any] = {
        "query": query, "workspace": ws, "predicate": predicate,
        "match_type": (match_types[0] if len(match_types) == 1 else
                       ("hybrid" if set(match_types) <= {"predicate", "entity", "fts", "vector"} else "tie"))
        if match_types else "none",
        "match_types": match_types, "matched_predicates": predicates, "matched_entities": entities,
        "since": since, "until": until,
        "told_by": told_by, "status_at": ref if hi else None, "include_history": history_on,
        "answers": ans_mod.group(cur_e + past_e, contra_e),
        "current_beliefs": cur_e,
        "history": past_e,
        "contradicting_beliefs": contra_e,
        "supersession_chain": primary or [],
        "supersession_chains": [c for c in chains if len(c) > 1 or c == primary],
        "total_matches": total, "truncated": truncated,
    }
    if hi:
        at = format_utc(parse_utc(hi) - dt.timedelta(milliseconds=1))
        answer["as_of"] = {"at": at, "belief_ids": sorted(
            r["belief_id"] for r in everything.values()
            if r["asserted_at"] <= at and (r["superseded_at"] is None or r["superseded_at"] > at))}
    return answer


def functional_predicates(conn: apsw.Connection, config: Config) -> set[str]:
    """One object at a time (one home, one employer): stage 5's rules as seeded in the vault, and the rules file
    itself for a vault whose stage 5 has not run (a ledger fed by hand)."""
    from kenning.config.loader import load_yaml
    from kenning.temporal.rules import RulesError, read_rules_file

    found = set(sql.functional_predicates(conn))
    try:
        text, _ = read_rules_file(config.pipeline.temporal_reasoning.invalidation_rules)
        data = load_yaml(text) or {}
    except (RulesError, ValueError):
        return found
    for spec in data.get("rules") or []:
        if isinstance(spec, dict) and spec.get("is_functional") and spec.get("predicate_label"):
            found.add(str(spec["predicate_label"]))
    return found


def _neg(ts: str) -> str:
    """Sort key for "newest first" inside an ascending sort (timestamps are fixed-width ASCII)."""
    return "".join(chr(0x7F - ord(c)) for c in ts)


def belief_history(conn: apsw.Connection, config: Config, belief_id: str,
                   verified_at: str | None = None) -> dict[str, Any] | None:
    """One belief, the whole supersession chain it belongs to (oldest first), and why each link happened."""
    b = sql.get_belief(conn, belief_id)
    if b is None:
        return None
    ans = why(conn, config, belief_id, workspace=b["workspace"], include_history=True, verified_at=verified_at)
    entries = {e["belief_id"]: e for e in ans["current_beliefs"] + ans["history"]}
    chain = [entries[i] for i in ans["supersession_chain"] if i in entries]
    findings = [{k: f[k] for k in ("check_name", "outcome", "vote", "judge", "detail", "run_id")}
                for f in sql.findings_for_beliefs(conn, [belief_id])]
    return {"belief": entries.get(belief_id), "chain": chain, "supersession_chain": ans["supersession_chain"],
            "contradicting_beliefs": ans["contradicting_beliefs"], "verifier_findings": findings}


def list_entries(conn: apsw.Connection, workspace: str | None, topic: str | None, current_only: bool, limit: int,
                 offset: int = 0) -> tuple[list[dict], int]:
    found, total = sql.list_beliefs(conn, workspace, topic, current_only, limit, offset)
    return [belief_entry(r) for r in found], total
