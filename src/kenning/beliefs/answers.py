"""What `why` says about each belief it found: a status (W36, W38) and one answer per statement (W37).

Status, at the reference time (the window's end with ``--until``, else now):
* ``superseded`` — replaced or corrected (it has a reason or a successor) by then;
* ``ended`` — it stopped without a replacement: the source says so (``source_valid_to`` has passed, or it was
  said in the past tense, "I used to …");
* ``contested`` — held, but another held belief says the opposite ("I am patient" / "I am not patient"),
  names another object of a functional predicate (two home cities), or is declared contradicting — unless
  you undisputed the pair (`kenning beliefs undispute`);
* ``current`` — held, and nothing held disagrees.

The same claim said many times (one belief per message) is one answer with its occurrences counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import orjson

from kenning.beliefs.timeutil import _start_of
from kenning.sources.timestamps import format_utc

ORDER = {"contested": 0, "current": 1, "ended": 2, "superseded": 3}
_NEG_AUX = re.compile(r"\b(?:do|does|did)\s+not\b|\b(?:don't|doesn't|didn't|dont|doesnt)\b")
_NEG = re.compile(r"\bnot\b|\bnever\b|\bno longer\b|n't\b")
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_SPACE = re.compile(r"\s+")


@dataclass
class Status:
    status: str
    contested_with: list[str] = field(default_factory=list)


def negated(text: str | None) -> bool:
    t = (text or "").casefold()
    return bool(_NEG_AUX.search(t) or _NEG.search(t))


def core(text: str | None) -> str:
    """The claim without its negation, time note and punctuation: "I do not live in Berlin (from 2023)" and
    "I live in Berlin." share a core."""
    t = _PAREN.sub("", (text or "").casefold().replace("’", "'")).strip().rstrip(".!")
    t = _NEG_AUX.sub(" ", t)
    t = re.sub(r"\bcan't\b", "can", t)
    t = re.sub(r"\bwon't\b", "will", t)
    t = _NEG.sub(" ", t)
    return _SPACE.sub(" ", t).strip()


def claim_key(e: dict) -> tuple:
    """Two rows with the same key are the same claim, for contradictions (W36)."""
    if e.get("subject") and e.get("predicate") and e.get("object"):
        neg = negated(e["statement"]) or negated(e["object"])
        return ("spo", e["subject"].casefold(), e["predicate"].casefold(), core(e["object"]), neg)
    return ("text", core(e["statement"]), negated(e["statement"]))


def group_key(e: dict) -> tuple:
    """One answer per claim as said: the statement without its time note and punctuation (W37)."""
    return (core(e["statement"]), negated(e["statement"]))


def _base(r: dict, ref: str) -> str:
    if r["superseded_at"] is not None and r["superseded_at"] <= ref:
        return "ended" if not r["supersession_reason"] and not r["superseded_by_belief_id"] else "superseded"
    vt = r.get("source_valid_to")
    if vt:
        try:
            if format_utc(_start_of(vt)) <= ref:
                return "ended"
        except ValueError:
            pass
    return "current"


def _conflict(ka: tuple, kb: tuple, predicate: str | None, functional: set[str]) -> bool:
    """Two claims of one subject and predicate (or one text core) that cannot both hold."""
    if ka == kb:
        return False
    if ka[0] == kb[0] == "spo":
        if ka[3] == kb[3]:
            return ka[4] != kb[4]                       # the same claim, affirmed and denied
        return predicate in functional and not ka[4] and not kb[4]   # two objects where one can hold
    return ka[0] == kb[0] == "text" and ka[2] != kb[2]


def _ids(text: Any) -> list[str]:
    if not text:
        return []
    return list(text) if isinstance(text, list) else list(orjson.loads(text))


def statuses(rows: Iterable[dict], ref: str, functional: set[str],
             undisputed: Sequence[tuple[str, str | None]]) -> dict[str, Status]:
    rows = {r["belief_id"]: r for r in rows}
    out = {bid: Status(_base(r, ref)) for bid, r in rows.items()}
    # the same claim said later (or in the same breath) in the past tense has ended, whichever source kept the
    # present-tense reading ("I used to be a night owl": a self-belief ended, a conversation claim "I am …")
    ended_at: dict[tuple, str] = {}
    for bid, r in rows.items():
        if out[bid].status == "ended" and r["superseded_at"] and not r["supersession_reason"]:
            k = group_key(r)
            ended_at[k] = max(ended_at.get(k, ""), r["superseded_at"])
    for bid, r in rows.items():
        if out[bid].status == "current" and r["asserted_at"] <= ended_at.get(group_key(r), ""):
            out[bid].status = "ended"
    quiet = {a for a, b in undisputed if b is None}
    allowed = {frozenset((a, b)) for a, b in undisputed if b is not None}
    held = sorted(b for b, s in out.items() if s.status == "current" and b not in quiet)
    held_set = set(held)
    pairs: set[tuple[str, str]] = set()
    for a in held:                                     # declared contradictions
        for b in _ids(rows[a]["contradicting_belief_ids"]):
            if b in held_set and b != a:
                pairs.add((min(a, b), max(a, b)))
    keys = {b: claim_key(rows[b]) for b in held}
    buckets: dict[tuple, list[str]] = {}               # only claims about one thing can conflict
    for b in held:
        k = keys[b]
        buckets.setdefault(k[:3] if k[0] == "spo" else k[:2], []).append(b)
    for ids in buckets.values():
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                if _conflict(keys[a], keys[b], rows[a]["predicate"], functional):
                    pairs.add((min(a, b), max(a, b)))
    for a, b in sorted(pairs):
        if frozenset((a, b)) in allowed:
            continue
        out[a].contested_with.append(b)
        out[b].contested_with.append(a)
    for s in out.values():
        if s.contested_with:
            s.status = "contested"
            s.contested_with.sort()
    return out


def group(entries: list[dict], disagreeing: list[dict]) -> list[dict]:
    """One answer per claim (and status bucket), occurrences counted, best first."""
    buckets: dict[tuple, list[dict]] = {}
    for e in entries + disagreeing:
        bucket = "held" if e["status"] in ("current", "contested") else e["status"]
        buckets.setdefault((bucket, group_key(e)), []).append(e)
    matched = {e["belief_id"] for e in entries}
    answers = []
    owner: dict[str, int] = {}
    for members in buckets.values():
        members.sort(key=lambda e: (e["asserted_at"], e["belief_id"]), reverse=True)
        newest = members[0]
        srcs: dict[str, dict] = {}
        for e in members:
            for s in e["supporting_sources"]:
                srcs.setdefault(s["provenance_id"], s)
        # When it was said comes from dated quotes only: an undated quote's record time is the import's
        # clock, and would show today as "last said" (issue 23 part 4, P36). Without any dated quote the
        # first date is when the belief was recorded and the last is unknown.
        dated = sorted({s["message_date"] for e in members for s in e["supporting_sources"] if s.get("message_date")})
        recorded = sorted(e["asserted_at"] for e in members)
        status = "contested" if any(e["status"] == "contested" for e in members) else newest["status"]
        a = {"status": status, "statement": newest["statement"], "belief_ids": [e["belief_id"] for e in members],
             "occurrences": max(len(srcs), len(members)), "first_said": (dated or recorded)[0],
             "last_said": dated[-1] if dated else None,
             "subject": newest["subject"], "predicate": newest["predicate"], "object": newest["object"],
             "wiki_page": newest["wiki_page"], "source_kind": newest["source_kind"],
             "source_valid_from": newest["source_valid_from"], "source_valid_to": newest["source_valid_to"],
             "superseded_at": newest["superseded_at"], "superseded_by_belief_id": newest["superseded_by_belief_id"],
             "supersession_reason": newest["supersession_reason"],
             "matched": any(e["belief_id"] in matched for e in members),
             "match_type": next((e.get("match_type") for e in members if e.get("match_type")), None),
             "score": max((e.get("score", 0.0) for e in members), default=0.0),
             "supporting_sources": sorted(srcs.values(), key=lambda s: (s.get("message_date") or "",
                                                                      s["provenance_id"]), reverse=True),
             "_contested": sorted({c for e in members for c in e.get("contested_with", [])})}
        for e in members:
            owner[e["belief_id"]] = len(answers)
        answers.append(a)
    for a in answers:
        others = {owner[c] for c in a.pop("_contested") if c in owner}
        a["contested_with"] = sorted({answers[i]["belief_ids"][0] for i in others if answers[i] is not a})
    answers.sort(key=lambda a: (ORDER[a["status"]], not a["matched"], -a["score"], _desc(a["last_said"] or ""),
                                a["belief_ids"][0]))
    return answers


def _desc(ts: str) -> str:
    return "".join(chr(0x7F - ord(c)) for c in ts)
