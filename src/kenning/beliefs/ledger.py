"""The belief ledger's write side: the publishing API every source feeds (conversation beliefs from stage 5,
self-belief nodes from seed 000, files), manual supersession and drift marking, and the row bookkeeping the
wiki importer shares (supersession sanity, contradiction lint, overrides, syncing rows).

Feeds call, inside their own stage run::

    publish_beliefs(ctx.conn, workspace, [BeliefInput(...), ...], ctx)

Each call is all-or-nothing: a problem in any item raises `BeliefPublishError` before anything is written,
so the caller's stage rolls back whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Literal, Protocol, Sequence

import apsw
import orjson

from kenning.beliefs.quotes import check_span, quote_hash, read_raw_text
from kenning.beliefs.timeutil import TimeValueError, parse_instant, parse_valid_time
from kenning.config import Config
from kenning.pipeline.clock import Clock
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize
from kenning.store import beliefs as sql

SourceKind = Literal["conversation", "raw_file"]
SUPERSESSION_FIELDS = ("superseded_at", "superseded_by_belief_id", "superseded_in_run", "supersession_reason")


class RunLike(Protocol):
    """What the ledger needs from a stage run (`pipeline.runner.StageContext` is one)."""

    conn: apsw.Connection
    config: Config
    clock: Clock
    ids: IdFactory
    run_id: str
    started_at_utc: str

    def warn(self, code: str, message: str, **context: Any) -> None: ...


@dataclass(frozen=True)
class BeliefSource:
    """One verbatim quote that supports a belief.

    ``kind="conversation"``: ``conversation_id``, ``message_id``, ``char_start``/``char_end`` (code points into
    ``messages.text_raw``) and the ``quote``, which must equal that span.
    ``kind="raw_file"``: ``raw_path`` (relative to the workspace root) and the ``quote``; the span is found in the
    file when not given.
    """

    kind: SourceKind
    quote: str
    conversation_id: str | None = None
    message_id: str | None = None
    char_start: int | None = None
    char_end: int | None = None
    raw_path: str | None = None
    page_hint: int | None = None
    provenance_id: str | None = None   # default: a deterministic id from the source and span


@dataclass(frozen=True)
class BeliefInput:
    """One belief for the ledger (seed 002 fields).

    Transaction time: ``asserted_at`` (when it came to be believed) and ``superseded_at``. Valid time:
    ``source_valid_from``/``source_valid_to`` (when the source says the fact holds). A belief ends with
    ``superseded_at`` (+ ``superseded_by``, ``supersession_reason``), or names the beliefs it replaces in
    ``supersedes`` with ``supersedes_reason`` recorded on them.
    """

    belief_id: str
    statement: str
    topic: str
    sources: tuple[BeliefSource, ...]
    asserted_at: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    superseded_at: str | None = None
    superseded_by: str | None = None
    supersession_reason: str | None = None
    supersedes: tuple[str, ...] = ()
    supersedes_reason: str | None = None
    source_valid_from: str | None = None
    source_valid_to: str | None = None
    contradicting_belief_ids: tuple[str, ...] = ()
    confidence_hint: str | None = None


@dataclass
class PublishResult:
    inserted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"beliefs_inserted": len(self.inserted), "beliefs_updated": len(self.updated),
                "beliefs_unchanged": len(self.unchanged)}


class BeliefPublishError(ValueError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(f"{len(problems)} problem(s) in the beliefs to publish: " + "; ".join(problems[:10]))


class BeliefNotFound(LookupError):
    pass


def jarr(items: Iterable[str]) -> str:
    return canonicalize(list(items))


def jload(text: str | None) -> list[str]:
    return list(orjson.loads(text)) if text else []


# ---- shared: workspaces, supersession sanity, overrides, contradictions, syncing -----------------------

def ensure_workspace(conn: apsw.Connection, slug: str, root_path: str | None, run: RunLike) -> dict:
    ws = sql.get_workspace(conn, slug)
    if ws is None:
        sql.insert_workspace(conn, slug, root_path, run.started_at_utc, run.run_id)
        return sql.get_workspace(conn, slug)  # type: ignore[return-value]
    if root_path is not None and ws["root_path"] != root_path:
        if ws["root_path"] is not None:
            run.warn("WORKSPACE_ROOT_MOVED", f"workspace {slug} now reads its files from {root_path} "
                     f"(was {ws['root_path']})", workspace=slug, was=ws["root_path"], now=root_path)
        sql.set_workspace_root(conn, slug, root_path)
        ws = {**ws, "root_path": root_path}
    return ws


def supersession_problems(rows: dict[str, dict], outside: dict[str, dict] | None = None) -> list[tuple[str, str, str]]:
    """Deterministic supersession sanity over final rows: (code, belief_id, message) for each problem.

    ``outside``: rows that may be pointed at but are not being written (same workspace, other sources).
    """
    outside = outside or {}
    problems: list[tuple[str, str, str]] = []
    for bid, r in rows.items():
        succ = r.get("superseded_by_belief_id")
        if r.get("supersession_reason") and not r.get("superseded_at"):
            problems.append(("missing_superseded_at", bid, f"{bid} has a supersession reason but no superseded_at"))
        if r.get("superseded_at") and r["superseded_at"] < r["asserted_at"]:
            problems.append(("superseded_before_asserted", bid,
                             f"{bid} is superseded at {r['superseded_at']}, before it was asserted ({r['asserted_at']})"))
        if succ is None:
            continue
        if succ == bid:
            problems.append(("self_supersession", bid, f"{bid} is superseded by itself"))
            continue
        if succ not in rows and succ not in outside:
            problems.append(("dangling_supersession", bid, f"{bid} is superseded by {succ}, which does not exist"))
    # cycles: follow superseded_by from each row; a chain that returns to a visited node is a cycle
    for start in rows:
        seen = [start]
        cur = rows[start].get("superseded_by_belief_id")
        while cur is not None and cur in rows and cur != start and cur not in seen:
            seen.append(cur)
            cur = rows[cur].get("superseded_by_belief_id")
        if cur == start and len(seen) > 1 and start == min(seen):
            problems.append(("supersession_cycle", start, "supersession cycle: " + " → ".join(seen + [start])))
    return problems


def related_for_supersession(old: dict, new: dict) -> bool:
    """Deterministic half of supersession sanity (W10): the same (subject, predicate) when both have them,
    else the same topic — where seed 002 says the writer looks for beliefs to supersede."""
    if old.get("subject") and old.get("predicate") and new.get("subject") and new.get("predicate"):
        return (old["subject"].casefold(), old["predicate"].casefold()) == \
            (new["subject"].casefold(), new["predicate"].casefold())
    return old["topic"].casefold() == new["topic"].casefold()


def apply_overrides(rows: dict[str, dict], overrides: list[dict], run: RunLike | None = None,
                    exists: Any = None) -> list[str]:
    """Re-apply explicit user decisions to the final rows (in place). Returns the belief ids changed.

    ``exists(belief_id) -> bool`` says whether a successor outside ``rows`` still exists; a successor that is
    gone leaves the belief superseded (same time and reason) without a successor.
    """
    changed = []
    for o in effective_overrides(overrides):
        r = rows.get(o["belief_id"])
        if r is None:
            continue
        succ = o["superseded_by_belief_id"]
        if succ is not None and succ not in rows and not (exists and exists(succ)):
            if run is not None:
                run.warn("OVERRIDE_SUCCESSOR_GONE", f"{o['belief_id']} was superseded by {succ} (your "
                         f"`{o['action']}`), which no longer exists; it stays superseded without a successor",
                         belief_id=o["belief_id"], successor=succ)
            succ = None
        want = {"superseded_at": max(o["at"], r["asserted_at"]), "superseded_in_run": o["run_id"],
                "supersession_reason": o["reason"], "superseded_by_belief_id": succ,
                "superseded_recorded_at": o["at"]}
        if any(r.get(k) != v for k, v in want.items()):
            if run is not None and r.get("superseded_at") and r.get("supersession_reason") != o["reason"]:
                run.warn("OVERRIDE_APPLIED", f"{o['belief_id']}: your `{o['action']}` ({o['reason']}) overrides "
                         f"what the source says ({r.get('supersession_reason')})", belief_id=o["belief_id"])
            r.update(want)
            changed.append(o["belief_id"])
    return changed


def effective_overrides(overrides: list[dict]) -> list[dict]:
    """The supersede / mark_drifted decisions still in force (in order): a later `restore` of a belief cancels
    the ones before it (W39). `undispute` does not change a row's supersession; `why` reads it."""
    out: list[dict] = []
    for o in overrides:
        if o["action"] == "restore":
            out = [x for x in out if x["belief_id"] != o["belief_id"]]
        elif o["action"] in ("supersede", "mark_drifted"):
            out.append(o)
    return out


def lint_contradictions(rows: dict[str, dict], declared: dict[str, set[str]]) -> None:
    """contradicting_belief_ids (in place): what the source declares, plus current beliefs with the same
    (subject, predicate) and a different object that neither supersedes; always symmetric (W11)."""
    pairs: dict[str, set[str]] = {bid: set(ids) for bid, ids in declared.items()}
    groups: dict[tuple[str, str], list[str]] = {}
    for bid, r in rows.items():
        if r.get("superseded_at") is None and r.get("subject") and r.get("predicate") and r.get("object"):
            groups.setdefault((r["subject"].casefold(), r["predicate"].casefold()), []).append(bid)
    for ids in groups.values():
        for a in ids:
            for b in ids:
                if a < b and rows[a]["object"].casefold() != rows[b]["object"].casefold():
                    pairs.setdefault(a, set()).add(b)
                    pairs.setdefault(b, set()).add(a)
    for a, others in list(pairs.items()):
        for b in others:
            if b in rows:
                pairs.setdefault(b, set()).add(a)
    for bid, r in rows.items():
        ids = sorted(pairs.get(bid, set()) - {bid})
        r["contradicting_belief_ids"] = jarr(ids) if ids else None


def derive_confidence_hint(r: dict, declared: str | None, distinct_sources: int) -> str:
    if declared:
        return declared
    if r.get("contradicting_belief_ids"):
        return "contested"
    return "multi_source" if distinct_sources > 1 else "single_source"


def sync_rows(conn: apsw.Connection, final: dict[str, dict], existing: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Write ``final`` over ``existing`` (same ids): insert the new, update changed columns. Returns (inserted, updated)."""
    inserted, updated = [], []
    new_rows = []
    for bid in sorted(final):
        r = final[bid]
        old = existing.get(bid)
        if old is None:
            new_rows.append(r)
            inserted.append(bid)
            continue
        cols = [c for c in sql.BELIEF_COLUMNS if c != "belief_id" and old.get(c) != r[c]]
        if cols:
            sql.update_belief(conn, r, cols)
            updated.append(bid)
    sql.insert_beliefs(conn, new_rows)
    return inserted, updated


class Sightings:
    """Kenning's transaction time for published beliefs (W31): when it was first told each belief and first
    learned that it ended. Kept in `belief_sightings`, which no rebuild deletes, so a rebuilt row is identical."""

    def __init__(self, rows: dict[str, dict], new: list[dict], seen_superseded: list[tuple[str, str, str]],
                 conn: apsw.Connection):
        self.rows, self.new, self.seen_superseded, self.conn = rows, new, seen_superseded, conn

    def write(self) -> None:
        sql.insert_sightings(self.conn, self.new)
        fresh = {s["belief_id"] for s in self.new}
        for bid, run_id, at in self.seen_superseded:
            if bid not in fresh:
                sql.mark_superseded_seen(self.conn, bid, run_id, at)


def record_sightings(conn: apsw.Connection, workspace: str, final: dict[str, dict], before: dict[str, dict],
                     run: RunLike) -> Sightings:
    """Set asserted_in_run / created_at / recorded_at and superseded_in_run / superseded_recorded_at on ``final``
    (in place) from the sightings; a belief published before sightings existed seeds its sighting from its row."""
    found = sql.get_sightings(conn, list(final))
    new: list[dict] = []
    seen_superseded: list[tuple[str, str, str]] = []
    for bid in sorted(final):
        r = final[bid]
        s = found.get(bid)
        if s is None:
            b = before.get(bid)
            s = {"belief_id": bid, "workspace": workspace,
                 "first_seen_run": b["asserted_in_run"] if b else run.run_id,
                 "first_seen_at": (b.get("recorded_at") or b["created_at"]) if b else run.started_at_utc,
                 "superseded_seen_run": b["superseded_in_run"] if b and b["superseded_at"] else None,
                 "superseded_seen_at": (b.get("superseded_recorded_at") or b["superseded_at"])
                 if b and b["superseded_at"] else None}
            found[bid] = s
            new.append(s)
        r["asserted_in_run"] = s["first_seen_run"]
        r["created_at"] = r["recorded_at"] = s["first_seen_at"]
        if r["superseded_at"]:
            if s["superseded_seen_run"] is None:
                s["superseded_seen_run"], s["superseded_seen_at"] = run.run_id, run.started_at_utc
                seen_superseded.append((bid, run.run_id, run.started_at_utc))
            r["superseded_in_run"] = s["superseded_seen_run"]
            r["superseded_recorded_at"] = s["superseded_seen_at"]
        else:
            r["superseded_in_run"] = r["superseded_recorded_at"] = None
    return Sightings(found, new, seen_superseded, conn)


# ---- the publishing API ------------------------------------------------------------------------------

def _check_text(value: Any, what: str, problems: list[str], bid: str, required: bool = True) -> str | None:
    if value is None:
        if required:
            problems.append(f"{bid}: {what} is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{bid}: {what} must be a non-empty string")
        return None
    return value


def _resolve_source(conn: apsw.Connection, workspace: dict, bid: str, s: BeliefSource, ids: IdFactory,
                    problems: list[str], file_cache: dict[str, str | None]) -> dict | None:
    if not isinstance(s.quote, str) or not s.quote:
        problems.append(f"{bid}: a source needs a non-empty verbatim quote")
        return None
    qh = quote_hash(s.quote)
    if s.kind == "conversation":
        if not (s.conversation_id and s.message_id and isinstance(s.char_start, int) and isinstance(s.char_end, int)):
            problems.append(f"{bid}: a conversation source needs conversation_id, message_id, char_start and char_end")
            return None
        msg = sql.message_with_conversation(conn, s.message_id)
        if msg is None:
            problems.append(f"{bid}: message {s.message_id} is not in the vault")
            return None
        if msg["conversation_id"] != s.conversation_id:
            problems.append(f"{bid}: message {s.message_id} belongs to conversation {msg['conversation_id']}, "
                            f"not {s.conversation_id}")
            return None
        text = msg["text_raw"] or ""
        if not (0 <= s.char_start <= s.char_end <= len(text)):
            problems.append(f"{bid}: span {s.char_start}:{s.char_end} is outside message {s.message_id} "
                            f"({len(text)} characters)")
            return None
        if not check_span(text, s.char_start, s.char_end, qh).verified:
            problems.append(f"{bid}: the quote is not text_raw[{s.char_start}:{s.char_end}] of message {s.message_id} "
                            f"(found {text[s.char_start:s.char_end]!r})")
            return None
        pid = s.provenance_id or ids.make("provenance", "conversation", s.message_id, s.char_start, s.char_end, qh)
        return {"id": pid, "workspace": workspace["slug"], "document_id": None, "footnote_key": None,
                "source_kind": "conversation", "raw_path": None, "raw_document_id": None,
                "conversation_id": s.conversation_id, "message_id": s.message_id, "char_start": s.char_start,
                "char_end": s.char_end, "page_hint": s.page_hint, "quote": s.quote, "quote_hash": qh,
                "_title": msg["title"]}
    if s.kind == "raw_file":
        root = workspace.get("root_path")
        if not s.raw_path or PurePosixPath(s.raw_path).is_absolute() or ".." in PurePosixPath(s.raw_path).parts:
            problems.append(f"{bid}: raw_path must be a path inside the workspace (got {s.raw_path!r})")
            return None
        if not root:
            problems.append(f"{bid}: workspace {workspace['slug']} has no root folder to read {s.raw_path} from")
            return None
        if s.raw_path not in file_cache:
            try:
                file_cache[s.raw_path] = read_raw_text(Path(root) / s.raw_path)
            except OSError:
                file_cache[s.raw_path] = None
        text = file_cache[s.raw_path]
        if text is None:
            problems.append(f"{bid}: raw file {s.raw_path} cannot be read")
            return None
        if isinstance(s.char_start, int) and isinstance(s.char_end, int):
            start, end = s.char_start, s.char_end
            if not check_span(text, start, end, qh).verified:
                problems.append(f"{bid}: the quote is not at {start}:{end} of {s.raw_path}")
                return None
        else:
            start = text.find(s.quote)
            if start < 0:
                problems.append(f"{bid}: the quote is not in {s.raw_path}")
                return None
            end = start + len(s.quote)
        pid = s.provenance_id or ids.make("provenance", "raw_file", workspace["slug"], s.raw_path, start, end, qh)
        return {"id": pid, "workspace": workspace["slug"], "document_id": None, "footnote_key": None,
                "source_kind": "raw_file", "raw_path": s.raw_path, "raw_document_id": None,
                "conversation_id": None, "message_id": None, "char_start": start, "char_end": end,
                "page_hint": s.page_hint, "quote": s.quote, "quote_hash": qh}
    problems.append(f"{bid}: unknown source kind {s.kind!r} (conversation or raw_file)")
    return None


def _ensure_document(conn: apsw.Connection, run: RunLike, workspace: str, kind: str, path: str, title: str | None,
                     conversation_id: str | None, sha: str | None = None, size: int | None = None) -> str:
    doc_id = run.ids.make("document", workspace, kind, path)
    doc = sql.get_document(conn, doc_id)
    if doc is None:
        sql.insert_document(conn, {"id": doc_id, "workspace": workspace, "kind": kind, "path": path, "title": title,
                                   "sha256": sha, "size_bytes": size, "conversation_id": conversation_id,
                                   "created_at": run.started_at_utc, "first_run_id": run.run_id,
                                   "last_changed_run_id": run.run_id})
    elif (doc["title"], doc["sha256"], doc["size_bytes"]) != (title, sha, size):
        sql.update_document(conn, doc_id, title, sha, size, run.run_id)
    return doc_id


def publish_beliefs(conn: apsw.Connection, workspace: str, items: Sequence[BeliefInput], run: RunLike) -> PublishResult:
    """Upsert beliefs from any source into the ledger, in ``run``'s transaction (all-or-nothing).

    Each item is the belief's whole current state (a feed republishes what it knows; fields it leaves out are
    cleared, except the run bookkeeping and your overrides). Idempotent: publishing the same items again changes
    nothing. Rows are never deleted here; a belief that stops being believed is published again with
    ``superseded_at`` (or named in another item's ``supersedes``).
    """
    cfg = run.config.beliefs
    reasons = set(cfg.supersession_reasons)
    hints = set(cfg.confidence_hints)
    problems: list[str] = []
    ws = ensure_workspace(conn, workspace, None, run)
    batch_ids = [it.belief_id for it in items]
    dupes = sorted({b for b in batch_ids if batch_ids.count(b) > 1})
    if dupes:
        raise BeliefPublishError([f"belief_id {b} appears more than once" for b in dupes])
    existing_ws = sql.existing_belief_ids(conn, batch_ids)
    for bid, other in existing_ws.items():
        if other != workspace:
            problems.append(f"{bid}: this belief_id already belongs to workspace {other}")

    file_cache: dict[str, str | None] = {}
    staged: dict[str, dict] = {}
    provs: dict[str, list[dict]] = {}
    declared_contra: dict[str, set[str]] = {}
    supersedes: list[tuple[str, str, str]] = []    # (old, new, reason)
    declared_hint: dict[str, str | None] = {}
    for it in items:
        bid = it.belief_id
        if not isinstance(bid, str) or not bid.strip():
            problems.append(f"belief_id {bid!r} must be a non-empty string")
            continue
        statement = _check_text(it.statement, "statement", problems, bid)
        topic = _check_text(it.topic, "topic", problems, bid)
        if statement is not None and len(statement) > cfg.statement_max_chars:
            problems.append(f"{bid}: statement is {len(statement)} characters; beliefs are at most "
                            f"{cfg.statement_max_chars} (split it into several beliefs)")
        for name in ("subject", "predicate", "object"):
            _check_text(getattr(it, name), name, problems, bid, required=False)
        try:
            asserted = parse_instant(it.asserted_at, "asserted_at")
            superseded = parse_instant(it.superseded_at, "superseded_at") if it.superseded_at else None
            vfrom = parse_valid_time(it.source_valid_from, "source_valid_from") if it.source_valid_from else None
            vto = parse_valid_time(it.source_valid_to, "source_valid_to") if it.source_valid_to else None
        except TimeValueError as e:
            problems.append(f"{bid}: {e}")
            continue
        for reason in (it.supersession_reason, it.supersedes_reason):
            if reason is not None and reason not in reasons:
                problems.append(f"{bid}: supersession reason {reason!r} is not one of {', '.join(sorted(reasons))}")
        if it.supersedes and not it.supersedes_reason:
            problems.append(f"{bid}: supersedes {list(it.supersedes)} needs a supersedes_reason")
        if it.confidence_hint is not None and it.confidence_hint not in hints:
            problems.append(f"{bid}: confidence_hint {it.confidence_hint!r} is not one of {', '.join(sorted(hints))}")
        if not it.sources:
            problems.append(f"{bid}: a belief needs at least one source with a verbatim quote")
        rows = [_resolve_source(conn, ws, bid, s, run.ids, problems, file_cache) for s in it.sources]
        provs[bid] = [r for r in rows if r is not None]
        if superseded is None and (it.superseded_by or it.supersession_reason):
            problems.append(f"{bid}: superseded_by / supersession_reason need superseded_at")
        declared_hint[bid] = it.confidence_hint
        staged[bid] = {
            "belief_id": bid, "workspace": workspace, "statement": statement, "topic": topic, "subject": it.subject,
            "predicate": it.predicate, "object": it.object, "wiki_document_id": None, "wiki_section_anchor": None,
            "footnote_ids": jarr([]), "provenance_ids": jarr(dict.fromkeys(p["id"] for p in provs[bid])),
            "asserted_at": asserted, "asserted_in_run": run.run_id, "superseded_at": superseded,
            "superseded_by_belief_id": it.superseded_by, "superseded_in_run": run.run_id if superseded else None,
            "supersession_reason": it.supersession_reason, "source_valid_from": vfrom, "source_valid_to": vto,
            "supporting_count": len(provs[bid]), "contradicting_belief_ids": None,
            "confidence_hint": it.confidence_hint, "created_at": run.started_at_utc,
            "recorded_at": run.started_at_utc, "superseded_recorded_at": None,
        }
        declared_contra[bid] = set(it.contradicting_belief_ids)
        supersedes += [(old, bid, it.supersedes_reason or "") for old in it.supersedes]
    if problems:
        raise BeliefPublishError(problems)

    # Beliefs outside the batch that the batch points at (supersedes, superseded_by, contradicting).
    referenced = {o for o, _, _ in supersedes} | {r["superseded_by_belief_id"] for r in staged.values()
                                                  if r["superseded_by_belief_id"]}
    referenced |= {c for cs in declared_contra.values() for c in cs}
    outside = {b: r for b, r in sql.beliefs_by_ids_raw(conn, sorted(referenced - set(staged))).items()
               if r["workspace"] == workspace}
    for ref in sorted(referenced - set(staged) - set(outside)):
        problems.append(f"belief {ref} is referenced but is neither in this batch nor in workspace {workspace}")
    if problems:
        raise BeliefPublishError(problems)

    existing = sql.beliefs_by_ids_raw(conn, list(staged))
    final: dict[str, dict] = {**{b: dict(r) for b, r in outside.items()}, **staged}
    for old, new, reason in supersedes:
        r = final[old]
        r["superseded_by_belief_id"] = new
        r["supersession_reason"] = reason
        if r["superseded_at"] is None:
            r["superseded_at"] = final[new]["asserted_at"]
    sightings = record_sightings(conn, workspace, final, {**existing, **outside}, run)
    sp = supersession_problems(final, {b: r for b, r in sql.beliefs_by_ids_raw(
        conn, sorted({r["superseded_by_belief_id"] for r in final.values() if r["superseded_by_belief_id"]}
                     - set(final))).items() if r["workspace"] == workspace})
    if sp:
        raise BeliefPublishError([m for _, _, m in sp])

    # Documents: the conversation (or raw file) the first source comes from.
    for bid in staged:
        first = provs[bid][0]
        if first["source_kind"] == "conversation":
            doc_id = _ensure_document(conn, run, workspace, "conversation", f"conversation/{first['conversation_id']}",
                                      first.get("_title"), first["conversation_id"])
            final[bid]["wiki_section_anchor"] = f"#message-{first['message_id']}"
        else:
            doc_id = _ensure_document(conn, run, workspace, "raw_source", first["raw_path"], None, None)
        final[bid]["wiki_document_id"] = doc_id
        for p in provs[bid]:
            if p["source_kind"] == "conversation":
                p["document_id"] = _ensure_document(conn, run, workspace, "conversation",
                                                    f"conversation/{p['conversation_id']}", p.get("_title"),
                                                    p["conversation_id"])
            else:
                p["raw_document_id"] = p["document_id"] = _ensure_document(conn, run, workspace, "raw_source",
                                                                           p["raw_path"], None, None)

    # Contradictions: declared ones, made symmetric (no lint across sources here: feeds own their conflicts).
    declared_all = {b: set(jload(r["contradicting_belief_ids"])) for b, r in outside.items()}
    for bid, cs in declared_contra.items():
        declared_all.setdefault(bid, set()).update(cs)
        for c in cs:
            declared_all.setdefault(c, set()).add(bid)
    for bid, r in final.items():
        ids = sorted(declared_all.get(bid, set()) - {bid})
        r["contradicting_belief_ids"] = jarr(ids) if ids else None
        if bid in staged:
            distinct = len({(p["source_kind"], p["raw_path"] or p["message_id"]) for p in provs[bid]})
            r["confidence_hint"] = derive_confidence_hint(r, declared_hint[bid], distinct)
        elif ids and r["confidence_hint"] in (None, "single_source", "multi_source"):
            r["confidence_hint"] = "contested"
    apply_overrides(final, sql_overrides(conn, workspace, list(final)), run,
                    exists=lambda b: bool(sql.existing_belief_ids(conn, [b])))
    sightings.write()

    sql.defer_foreign_keys(conn)
    seen_prov: dict[str, dict] = {}
    for bid in staged:
        for p in provs[bid]:
            seen_prov[p["id"]] = {k: v for k, v in p.items() if not k.startswith("_")}
    sql.upsert_provenance(conn, list(seen_prov.values()))
    before_all = {**existing, **outside}
    inserted, updated = sync_rows(conn, final, before_all)
    sql.set_belief_links(conn, [(bid, p["id"], i) for bid in staged for i, p in
                                enumerate(dict((p["id"], p) for p in provs[bid]).values())], list(staged))
    from kenning.beliefs.question import index_statements

    index_statements(conn, run.config, workspace, [(bid, staged[bid]["statement"]) for bid in sorted(staged)],
                     run.warn, run.clock)
    result = PublishResult(inserted=inserted, updated=updated,
                           unchanged=sorted(set(final) - set(inserted) - set(updated)))
    return result


def sql_overrides(conn: apsw.Connection, workspace: str, belief_ids: Sequence[str]) -> list[dict]:
    wanted = set(belief_ids)
    return [o for o in sql.overrides_of(conn, workspace) if o["belief_id"] in wanted]


# ---- manual supersession and drift marking ----------------------------------------------------------

def supersede(conn: apsw.Connection, old_id: str, new_id: str, reason: str, run: RunLike, note: str | None = None) -> dict:
    """`kenning beliefs supersede OLD NEW --reason R`: recorded as an override and applied now."""
    cfg = run.config.beliefs
    if reason not in cfg.supersession_reasons:
        raise BeliefPublishError([f"reason {reason!r} is not one of {', '.join(cfg.supersession_reasons)}"])
    found = sql.beliefs_by_ids_raw(conn, [old_id, new_id])
    for b in (old_id, new_id):
        if b not in found:
            raise BeliefNotFound(f"no belief {b}")
    old, new = found[old_id], found[new_id]
    if old["workspace"] != new["workspace"]:
        raise BeliefPublishError([f"{old_id} and {new_id} are in different workspaces"])
    if old_id == new_id:
        raise BeliefPublishError(["a belief cannot supersede itself"])
    at = max(run.clock.now(), old["asserted_at"])
    final = {old_id: dict(old), new_id: dict(new)}
    final[old_id].update(superseded_at=at, superseded_by_belief_id=new_id, superseded_in_run=run.run_id,
                         supersession_reason=reason)
    chain = {**final}
    cur = new["superseded_by_belief_id"]
    while cur and cur not in chain:
        nxt = sql.beliefs_by_ids_raw(conn, [cur]).get(cur)
        if nxt is None:
            break
        chain[cur] = nxt
        cur = nxt["superseded_by_belief_id"]
    if cur == old_id:
        raise BeliefPublishError([f"{new_id} is already (transitively) superseded by {old_id}; that would be a cycle"])
    override = {"override_id": run.ids.make("belief_override", old_id, new_id, reason, at, run.run_id),
                "workspace": old["workspace"], "belief_id": old_id, "action": "supersede",
                "superseded_by_belief_id": new_id, "reason": reason, "at": at, "run_id": run.run_id, "note": note}
    sql.insert_override(conn, override)
    sql.set_superseded(conn, old_id, at, new_id, run.run_id, reason, run.clock.now())
    return override


def mark_drifted(conn: apsw.Connection, belief_ids: Sequence[str], run: RunLike, note: str | None = None) -> list[dict]:
    """`kenning beliefs verify --mark-drifted`: the only way a belief becomes `source_drifted` (W13)."""
    at = run.clock.now()
    done = []
    for bid, b in sorted(sql.beliefs_by_ids_raw(conn, list(belief_ids)).items()):
        if b["superseded_at"] is not None:
            continue
        o = {"override_id": run.ids.make("belief_override", bid, None, "source_drifted", at, run.run_id),
             "workspace": b["workspace"], "belief_id": bid, "action": "mark_drifted", "superseded_by_belief_id": None,
             "reason": "source_drifted", "at": max(at, b["asserted_at"]), "run_id": run.run_id, "note": note}
        sql.insert_override(conn, o)
        sql.set_superseded(conn, bid, o["at"], None, run.run_id, "source_drifted", at)
        done.append(o)
    return done


def restore(conn: apsw.Connection, belief_id: str, reason: str, run: RunLike) -> dict:
    """`kenning beliefs restore ID --reason …`: undo your `supersede` / a drift mark — the belief is held again.

    Only a supersession that came from your decisions can be undone; one the source itself records (a sidecar's
    `superseded_at`, a later message) is the source's to change (W39)."""
    b = sql.get_beliefs(conn, [belief_id]).get(belief_id)
    if b is None:
        raise BeliefNotFound(f"no belief {belief_id}")
    if not (reason or "").strip():
        raise BeliefPublishError(["restore needs --reason: why you hold this belief again"])
    active = [o for o in effective_overrides(sql_overrides(conn, b["workspace"], [belief_id]))]
    if b["superseded_at"] is None or not active:
        raise BeliefPublishError([f"{belief_id} is not superseded by your own decision or a drift mark, so there is "
                                  "nothing to restore" + (f" (it ended: {b['supersession_reason']}, which its source "
                                                          "records)" if b["superseded_at"] else "")])
    at = run.clock.now()
    o = {"override_id": run.ids.make("belief_override", belief_id, "restore", at, run.run_id),
         "workspace": b["workspace"], "belief_id": belief_id, "action": "restore", "superseded_by_belief_id": None,
         "reason": reason.strip(), "at": at, "run_id": run.run_id, "note": None}
    sql.insert_override(conn, o)
    sql.clear_superseded(conn, belief_id)
    return {**o, "undid": [x["action"] for x in active]}


def undispute(conn: apsw.Connection, belief_id: str, other_id: str | None, reason: str, run: RunLike) -> dict:
    """`kenning beliefs undispute ID [--with OTHER] --reason …`: you say these beliefs do not conflict, so `why`
    shows them as held rather than contested (W39). Recorded; the ledger's rows are not rewritten."""
    found = sql.get_beliefs(conn, [b for b in (belief_id, other_id) if b])
    for b in (belief_id, other_id):
        if b and b not in found:
            raise BeliefNotFound(f"no belief {b}")
    if not (reason or "").strip():
        raise BeliefPublishError(["undispute needs --reason: why these beliefs do not conflict"])
    if other_id == belief_id:
        raise BeliefPublishError(["a belief cannot be disputed with itself"])
    at = run.clock.now()
    o = {"override_id": run.ids.make("belief_override", belief_id, other_id, "undispute", at, run.run_id),
         "workspace": found[belief_id]["workspace"], "belief_id": belief_id, "action": "undispute",
         "superseded_by_belief_id": None, "other_belief_id": other_id, "reason": reason.strip(), "at": at,
         "run_id": run.run_id, "note": None}
    sql.insert_override(conn, o)
    return o
