"""Hybrid search over the vault: lanes → RRF → hits with a per-lane score breakdown and an evidence chain.

Lanes now (all over turns/messages; each is a :class:`~kenning.retrieve.fusion.RankedList`):
- ``fts``        FTS5 BM25 over speaker, text, captions (column weights from config);
- ``vector``     cosine similarity of the query to each turn's embedding (``retrieve.embed``);
- ``speaker``    the query names a participant: BM25 + vector restricted to that speaker, the name removed;
- ``time``       the query names a time ("in May 2023", "last summer"): BM25 + vector restricted to turns
                 from that interval, the time words removed;
- ``temporal_cue`` a "when …" question: first-pass candidates whose text carries a time expression;
- ``adjacency``  the turns next to the best first-pass hits (an answer follows its question).
Later lanes (entity/alias, assertion → evidence, beliefs) are added in :meth:`Searcher.extra_lanes`: a
lane is any callable ``(ParsedQuery, first_pass) -> RankedList``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import apsw
import orjson

from kenning.config.models import Config
from kenning.retrieve.embed import TextEmbedder, make_embedder, space_name
from kenning.retrieve.fusion import Candidate, Fused, RankedList, rrf
from kenning.retrieve.when import Interval, is_when_question, resolve_all, resolve_text
from kenning.sources.jcs import sha256_hex
from kenning.sources.timestamps import normalize_to_utc
from kenning.store import search as search_sql

_TOKEN = re.compile(r"[a-z0-9]+")
_ROLES = {"user", "assistant", "system", "tool", "unknown"}

Lane = Callable[["ParsedQuery", list[Fused]], RankedList | None]


@dataclass
class ParsedQuery:
    text: str
    terms: list[str]                  # searchable words (stopwords out), in query order
    speakers: list[str]               # speakers named in the query, as stored
    speaker_terms: set[str]           # the words that named them
    times: list[Interval]             # time expressions, resolved against ``now``
    time_terms: set[str]              # the words that expressed them
    when_question: bool
    now: dt.date
    as_of: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"terms": self.terms, "speakers": self.speakers, "times": [t.as_dict() for t in self.times],
                "when_question": self.when_question, "now": self.now.isoformat(), "as_of": self.as_of}


@dataclass
class SearchResult:
    query: str
    parsed: ParsedQuery
    hits: list[dict[str, Any]]
    lanes: list[dict[str, Any]]       # which lanes ran, how many candidates, notes
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "parsed": self.parsed.as_dict(), "lanes": self.lanes, "hits": self.hits,
                "notes": self.notes}


FTS_COLUMNS = ("speaker", "body", "extra", "context")


def fts_match(terms: Sequence[str], columns: Sequence[str] | None = None) -> str | None:
    """An FTS5 query ORing quoted terms (tokens are alphanumeric: user text never reaches FTS5 syntax),
    limited to ``columns`` (those with a non-zero weight)."""
    uniq = list(dict.fromkeys(t for t in terms if t and t.isalnum()))
    if not uniq:
        return None
    q = " OR ".join(f'"{t}"' for t in uniq)
    if columns is not None and set(columns) != set(FTS_COLUMNS):
        q = "{" + " ".join(columns) + "} : (" + q + ")"
    return q


def _as_of_bound(as_of: str | None) -> str | None:
    """An ``--as-of`` date or timestamp as the last stored timestamp it admits."""
    if not as_of:
        return None
    s = as_of.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        return f"{s}T23:59:59.999Z"
    ts = normalize_to_utc(s)
    if ts is None:
        raise ValueError(f"--as-of {as_of!r} is not a date; use YYYY-MM-DD or an ISO-8601 timestamp")
    return ts


class Searcher:
    """One vault's search. Keep it for many queries: it caches speakers and the query embedder."""

    def __init__(self, conn: apsw.Connection, config: Config, embedder: TextEmbedder | None | bool = True):
        self.conn, self.config, self.cfg = conn, config, config.retrieval
        self._speakers: list[tuple[str, list[str]]] | None = None
        self._embedder = embedder
        self._vec_table: str | None | bool = False
        self.notes: list[str] = []
        self.extra_lanes: list[tuple[str, Lane]] = []

    # -- query understanding ------------------------------------------------------------------------------
    def speaker_names(self) -> list[tuple[str, list[str]]]:
        """(stored speaker, names that refer to them) for every speaker in the index."""
        if self._speakers is None:
            names: dict[str, set[str]] = {}
            for s, _n in search_sql.speakers(self.conn):
                if s and s.lower() not in _ROLES:
                    names.setdefault(s, set()).add(s)
            for name, aliases_json in search_sql.participant_aliases(self.conn):
                if name in names:
                    names[name] |= set(orjson.loads(aliases_json))
            self._speakers = [(s, sorted(v)) for s, v in sorted(names.items())]
        return self._speakers

    def parse(self, query: str, now: dt.date, as_of: str | None) -> ParsedQuery:
        low = query.lower()
        stop = set(self.cfg.fts.stopwords)
        speakers, speaker_terms = [], set()
        min_chars = self.cfg.speaker.min_name_chars
        for stored, names in self.speaker_names():
            for n in names:
                if len(n) >= min_chars and re.search(rf"(?<![\w]){re.escape(n.lower())}(?![\w])", low):
                    if stored not in speakers:
                        speakers.append(stored)
                    speaker_terms |= set(_TOKEN.findall(n.lower()))
        times = resolve_all(query, now)
        time_terms: set[str] = set()
        for t in times:
            time_terms |= set(_TOKEN.findall(t.text.lower()))
        terms = [t for t in _TOKEN.findall(low) if t not in stop][: self.cfg.fts.max_query_terms]
        return ParsedQuery(query, terms, speakers, speaker_terms, times, time_terms, is_when_question(query), now,
                           as_of)

    # -- lanes ---------------------------------------------------------------------------------------------
    def embedder(self) -> TextEmbedder | None:
        if self._embedder is True:
            self._embedder = make_embedder(self.cfg.vector, warn=self.notes.append)
        return self._embedder or None

    def vector_table(self) -> str | None:
        if self._vec_table is False:
            emb = self.embedder()
            space = search_sql.vector_space(self.conn, space_name(emb)) if emb else None
            self._vec_table = space["table_name"] if space else None
            if emb and space is None:
                self.notes.append(f"no vectors for {space_name(emb)} yet: run `kenning reindex` for the vector lane")
        return self._vec_table or None

    def _weights(self) -> list[float]:
        w = self.cfg.fts.column_weights
        return [w.speaker, w.body, w.extra, w.context]

    def fts_lane(self, name: str, terms: Sequence[str], weight: float, cap: int, **filters: Any) -> RankedList:
        w = self._weights()
        match = fts_match(terms, [c for c, x in zip(FTS_COLUMNS, w) if x > 0])
        items = []
        if match:
            for rowid, s in search_sql.fts_search(self.conn, match, self._weights(), cap, **filters):
                items.append(Candidate(rowid, -s))
        return RankedList(name, items, weight)

    def vector_lane(self, name: str, pool, weight: float, cap: int, *, speakers: Sequence[str] | None = None,
                    start: str | None = None, end: str | None = None, **_: Any) -> RankedList:
        """The nearest documents, filtered by speaker / said-at interval: a filtered KNN inside sqlite-vec
        (``pool`` is the query vector), or cut from a shared KNN pool (``pool`` is its rows; R13)."""
        if pool is None:
            return RankedList(name, [], weight)
        if not isinstance(pool, list):
            table = self.vector_table()
            rows_ = search_sql.vector_search(self.conn, table, pool, cap, speakers=speakers, start=start, end=end,
                                             as_of=_.get("as_of")) if table else []
            return RankedList(name, [Candidate(r, 1.0 - d) for r, d in rows_], weight)
        want = {s.casefold() for s in speakers} if speakers else None
        items = []
        for rowid, dist, occurred, speaker in pool:
            if want is not None and (speaker or "").casefold() not in want:
                continue
            if start and (occurred or "") < start:
                continue
            if end and (occurred or "") >= end:
                continue
            items.append(Candidate(rowid, 1.0 - dist))
            if len(items) >= cap:
                break
        return RankedList(name, items, weight)

    def _restricted(self, name: str, terms, qvec, weight: float, note: str, **filters: Any) -> RankedList:
        """BM25 and vector restricted by a filter, fused into one ranked list."""
        cap = self.cfg.lane_cap
        parts = [self.fts_lane("f", terms, 1.0, cap, **filters)]
        if qvec is not None:
            parts.append(self.vector_lane("v", qvec, 1.0, cap, **filters))  # qvec: the shared KNN pool
        fused = rrf(parts, self.cfg.rrf_k, cap)
        return RankedList(name, [Candidate(f.key, round(f.score, 6)) for f in fused], weight, note)

    # -- the search ----------------------------------------------------------------------------------------
    def search(self, query: str, *, k: int | None = None, as_of: str | None = None, now: str | None = None,
               lanes: Sequence[str] | None = None) -> SearchResult:
        cfg = self.cfg
        k = k or cfg.default_k
        bound = _as_of_bound(as_of)
        now_ts = normalize_to_utc(now) if now else None
        if now and now_ts is None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", now.strip()):
            raise ValueError(f"question date {now!r} is not a date")
        now_date = (dt.date.fromisoformat(now.strip()[:10]) if now else
                    dt.date.fromisoformat(bound[:10]) if bound else dt.datetime.now(dt.timezone.utc).date())
        self.notes = []
        pq = self.parse(query, now_date, bound)
        w = cfg.lane_weights
        enabled = set(lanes) if lanes else None

        def on(name: str) -> bool:
            return (enabled is None or name in enabled) and getattr(w, name, 1.0) > 0

        cap = cfg.lane_cap
        qvec = None
        if on("vector") or on("speaker") or on("time"):
            emb = self.embedder() if self.vector_table() else None
            if emb is not None:
                qvec = emb.embed([query])[0]
                if cfg.vector.pool > 0:  # one KNN; every vector lane is cut from it (R13)
                    qvec = search_sql.vector_pool(self.conn, self.vector_table(), qvec, cfg.vector.pool, as_of=bound)
        first: list[RankedList] = []
        if on("fts"):
            first.append(self.fts_lane("fts", pq.terms, w.fts, cap, as_of=bound))
        if on("vector") and qvec is not None:
            first.append(self.vector_lane("vector", qvec, w.vector, cap, as_of=bound))
        if on("speaker") and pq.speakers:
            terms = [t for t in pq.terms if t not in pq.speaker_terms]
            first.append(self._restricted("speaker", terms, qvec, w.speaker, "speaker: " + ", ".join(pq.speakers),
                                          as_of=bound, speakers=pq.speakers))
        if on("time") and pq.times:
            iv = pq.times[0]
            slack = dt.timedelta(days=cfg.time.slack_days)
            start = (iv.start - slack).isoformat()
            end = (iv.end + slack + dt.timedelta(days=1)).isoformat()
            terms = [t for t in pq.terms if t not in pq.time_terms]
            first.append(self._restricted("time", terms, qvec, w.time, f"time: {iv.start}..{iv.end} ({iv.text})",
                                          as_of=bound, start=start, end=end))
        first_pass = rrf(first, cfg.rrf_k, cap)
        second: list[RankedList] = []
        docs: dict[int, dict] = {}
        if on("temporal_cue") and pq.when_question and first_pass:
            pool = [f.key for f in first_pass[:cap]]
            docs.update(search_sql.docs_by_rowid(self.conn, pool))
            items = []
            for key in pool:
                d = docs.get(key)
                if d and d.get("text_raw") and resolve_all(d["text_raw"], _date_of(d) or now_date):
                    items.append(Candidate(key, 1.0, {"has_time_expression": True}))
            second.append(RankedList("temporal_cue", items, w.temporal_cue))
        if on("adjacency") and first_pass:
            seeds = first_pass[: cfg.adjacency.seeds]
            docs.update(search_sql.docs_by_rowid(self.conn, [f.key for f in seeds if f.key not in docs]))
            items, seen = [], {f.key for f in seeds}
            for f in seeds:
                d = docs.get(f.key)
                if not d or d.get("position") is None:
                    continue
                for rowid, _pos in search_sql.neighbours(self.conn, d["conversation_id"], d["position"],
                                                         cfg.adjacency.window, bound):
                    if rowid not in seen:
                        seen.add(rowid)
                        items.append(Candidate(rowid, f.score, {"next_to": d["doc_id"]},
                                               [{"kind": "adjacent_to", "message_id": d["doc_id"]}]))
            second.append(RankedList("adjacency", items, w.adjacency))
        for name, lane in self.extra_lanes:
            if enabled is None or name in enabled:
                rl = lane(pq, first_pass)
                if rl is not None:
                    second.append(rl)
        all_lanes = first + second
        fused = rrf(all_lanes, cfg.rrf_k, cap)[:k]
        docs.update(search_sql.docs_by_rowid(self.conn, [f.key for f in fused if f.key not in docs]))
        hits = [self._hit(i + 1, f, docs.get(f.key)) for i, f in enumerate(fused) if docs.get(f.key)]
        lane_info = [{"lane": rl.lane, "weight": rl.weight, "candidates": len(rl.items),
                      **({"note": rl.note} if rl.note else {})} for rl in all_lanes]
        return SearchResult(query, pq, hits, lane_info, list(self.notes))

    def _hit(self, rank: int, f: Fused, d: dict) -> dict[str, Any]:
        text = d.get("text_raw") or ""
        date = _date_of(d)
        event = resolve_text(text, date) if (date and text) else None
        evidence = [{"kind": "message", "message_id": d["doc_id"], "conversation_id": d["conversation_id"],
                     "turn_ref": d.get("export_message_id"), "char_start": 0, "char_end": len(text),
                     "quote_sha256": sha256_hex(text)}] + f.evidence
        return {
            "rank": rank, "kind": d["doc_kind"], "message_id": d["doc_id"], "turn_ref": d.get("export_message_id"),
            "conversation_id": d["conversation_id"], "conversation": d.get("conversation_title"),
            "speaker": d.get("speaker"), "role": d.get("role"), "date": d.get("occurred_at_utc"),
            "text": text, "score": round(f.score, 6),
            "lanes": {k: {kk: (round(vv, 6) if isinstance(vv, float) else vv) for kk, vv in v.items()}
                      for k, v in f.lanes.items()},
            "event_time": event.as_dict() if event else None,
            "evidence": evidence,
        }


def _date_of(d: dict) -> dt.date | None:
    ts = d.get("occurred_at_utc")
    return dt.date.fromisoformat(ts[:10]) if ts else None
