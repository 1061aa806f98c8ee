"""Hybrid search over the vault: lanes → RRF → hits with a per-lane score breakdown and an evidence chain.

Lanes (each a :class:`~kenning.retrieve.fusion.RankedList`; decisions R7, R14–R21):
- ``fts``        FTS5 BM25 over speaker, text, captions, the previous turn; on a large vault one shared candidate
                 pool per query, common words pruned conjunctive-first, feeds every BM25 lane (R40–R41);
- ``vector``     cosine similarity to each document's embedding (the model layer's embedder and vector index);
- ``speaker``    the query names a participant: BM25 + vector restricted to that speaker, the name removed;
- ``time``       the query names a time ("in May 2023", "last summer", resolved against the question date by
                 ``retrieve.when``, R17): BM25 + vector restricted to turns said then or telling of then;
- ``entity``     the query names an entity (canonical name, alias, nickname, lexicon term): BM25 + vector over
                 the turns that mention it, the name removed (R18);
- ``belief``     the query matches beliefs in the ledger (``wiki_beliefs`` FTS): belief hits with their quotes (R20);
- ``temporal_cue`` a "when …" question: first-pass candidates whose text carries a time expression;
- ``answer_type`` a where / who / how-many / which-book question: first-pass candidates whose text carries a place,
                 a person's name, a number, a title (``retrieve.answer_type``, R33);
- ``disposition`` a would / does / is-it-likely question about someone: first-pass candidates in which that person
                 states a preference, value, goal or habit in the first person (R34);
- ``adjacency``  the turns next to the best first-pass hits (an answer follows its question).
More lanes register in :attr:`Searcher.extra_lanes`: a lane is any callable ``(ParsedQuery, first_pass) ->
RankedList``. A candidate's key is a search-document rowid (turns, entities) or ``("belief", belief_id)``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import apsw
import numpy as np
import orjson

from kenning.config.models import Config
from kenning.retrieve.answer_type import answer_type, carries, disposition_question, states_disposition
from kenning.retrieve.fusion import Candidate, Fused, RankedList, rrf
from kenning.retrieve.vectors import SearchVectors
from kenning.retrieve.when import Interval, event_time, is_when_question, resolve_all, resolve_query
from kenning.sources.jcs import sha256_hex
from kenning.sources.timestamps import normalize_to_utc
from kenning.store import beliefs as beliefs_sql
from kenning.store import search as search_sql

_TOKEN = re.compile(r"[a-z0-9]+")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_ROLES = {"user", "assistant", "system", "tool", "unknown"}

Lane = Callable[["ParsedQuery", list[Fused]], RankedList | None]


@dataclass
class EntityMatch:
    entity_id: str
    name: str               # canonical name
    entity_type: str
    surface: str            # the query words that named it
    source: str             # canonical | alias | lexicon
    mentions: int

    def as_dict(self) -> dict[str, Any]:
        return {"entity_id": self.entity_id, "name": self.name, "type": self.entity_type, "matched": self.surface,
                "via": self.source, "mentions": self.mentions}


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
    entities: list[EntityMatch] = field(default_factory=list)
    entity_terms: set[str] = field(default_factory=set)
    answer_type: str | None = None    # place | person | number | title (R33)
    disposition: bool = False         # "would X …?", "does X …?": asks what someone likes, values, does (R34)

    def as_dict(self) -> dict[str, Any]:
        return {"terms": self.terms, "speakers": self.speakers, "times": [t.as_dict() for t in self.times],
                "entities": [e.as_dict() for e in self.entities], "when_question": self.when_question,
                "answer_type": self.answer_type, "disposition": self.disposition, "now": self.now.isoformat(),
                "as_of": self.as_of}


@dataclass
class SearchResult:
    query: str
    parsed: ParsedQuery
    hits: list[dict[str, Any]]
    lanes: list[dict[str, Any]]       # which lanes ran, how many candidates, notes
    notes: list[str] = field(default_factory=list)
    vector_lane: dict[str, Any] | None = None  # how complete the vector lane is (Vault.search fills it; issue 24)

    def as_dict(self) -> dict[str, Any]:
        out = {"query": self.query, "parsed": self.parsed.as_dict(), "lanes": self.lanes, "hits": self.hits,
               "notes": self.notes}
        if self.vector_lane is not None:
            out["vector_lane"] = self.vector_lane
        return out


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


def _norm(s: str) -> str:
    import unicodedata

    return " ".join(unicodedata.normalize("NFKC", s).casefold().split())


class Searcher:
    """One vault's search. Keep it for many queries: it caches speakers, term statistics and the embedder."""

    def __init__(self, conn: apsw.Connection, config: Config, embedder: Any = True):
        self.conn, self.config, self.cfg = conn, config, config.retrieval
        if self.cfg.fts.mmap_mb:  # R52: random rows of a large vault through the page cache, no read() each
            conn.execute(f"PRAGMA mmap_size={int(self.cfg.fts.mmap_mb) * 1024 * 1024}").fetchall()
        self._speakers: list[tuple[str, list[str]]] | None = None
        self.vectors = SearchVectors(conn, config) if (embedder is not False and self.cfg.vector.enabled) else None
        self._embedder = embedder if embedder not in (True, False, None) else None
        self.notes: list[str] = []
        self.extra_lanes: list[tuple[str, Lane]] = []
        self._tokenizer = None
        self._df: dict[str, int] = {}
        self._df_version: int | None = None
        self._pool: FtsPool | None = None
        self._pool_terms: list[str] | None = None
        self._pool_speakers: list[tuple[str, list[str]]] = []
        self._totals: tuple[int, tuple[int, int]] | None = None
        self._forward: tuple[int, bool] | None = None
        self._detail: tuple[int, bool] | None = None
        self._memory: tuple[int, Any] | None = None
        self._postings = PostingCache(conn, self.cfg.fts.posting_cache_mb)
        self._searches = 0  # searches begun: the in-memory index is built for a searcher's second (C6)
        self._has_beliefs: bool | None = None
        self._vec_jobs: dict[tuple, Callable[[], list[tuple[int, float]]]] = {}
        self._mentions: dict[str, list[dict]] = {}
        self._text_stems: dict[str, frozenset[str]] = {}
        self._stem_cache: dict[str, str] = {}

    # -- query understanding ------------------------------------------------------------------------------
    def speaker_names(self) -> list[tuple[str, list[str]]]:
        """(stored speaker, names that refer to them) for every speaker in the index."""
        if self._speakers is None:
            names: dict[str, set[str]] = {}
            for s in search_sql.speakers(self.conn):
                if s and s.lower() not in _ROLES:
                    names.setdefault(s, set()).add(s)
            for name, aliases_json in search_sql.participant_aliases(self.conn):
                if name in names:
                    names[name] |= set(orjson.loads(aliases_json))
            self._speakers = [(s, sorted(v)) for s, v in sorted(names.items())]
        return self._speakers

    def match_entities(self, query: str, skip: set[str]) -> tuple[list[EntityMatch], set[str]]:
        """Entities the query names: every word n-gram (1–4 words) looked up among the names of entities
        (canonical, aliases, nicknames, lexicon terms). Longest match wins; speakers' names are the speaker
        lane's, and stopwords alone never match (R18)."""
        ecfg = self.cfg.entity
        words = [(m.group(0), m.start(), m.end()) for m in _WORDS.finditer(query)]
        stop = set(self.cfg.fts.stopwords)
        grams: dict[str, tuple[int, int]] = {}
        for n in range(min(4, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                span = words[i:i + n]
                text = _norm(query[span[0][1]:span[-1][2]])
                if len(text) < ecfg.min_name_chars or text in skip:
                    continue
                if n == 1 and (text in stop or text.isdigit()):
                    continue
                grams.setdefault(text, (i, i + n))
        if not grams:
            return [], set()
        found = search_sql.entities_named(self.conn, list(grams))
        taken: list[tuple[int, int]] = []
        out: list[EntityMatch] = []
        terms: set[str] = set()
        for name in sorted({r["name_norm"] for r in found}, key=lambda g: (-(grams[g][1] - grams[g][0]), grams[g])):
            a, b = grams[name]
            if any(not (b <= s or a >= e) for s, e in taken):
                continue
            taken.append((a, b))
            for r in [r for r in found if r["name_norm"] == name][: ecfg.max_entities_per_name]:
                out.append(EntityMatch(r["entity_id"], r["canonical_name"], r["entity_type"], name, r["source"],
                                       int(r["mention_count"] or 0)))
            terms |= set(_TOKEN.findall(name))
        return out[: ecfg.max_entities], terms

    def parse(self, query: str, now: dt.date, as_of: str | None) -> ParsedQuery:
        low = query.lower()
        stop = set(self.cfg.fts.stopwords)
        speakers, speaker_terms = [], set()
        min_chars = self.cfg.speaker.min_name_chars
        speaker_norms: set[str] = set()
        first_at: dict[str, int] = {}
        for stored, names in self.speaker_names():
            for n in names:
                m = re.search(rf"(?<![\w]){re.escape(n.lower())}(?![\w])", low) if len(n) >= min_chars else None
                if m:
                    if stored not in speakers:
                        speakers.append(stored)
                    first_at[stored] = min(first_at.get(stored, m.start()), m.start())
                    speaker_terms |= set(_TOKEN.findall(n.lower()))
            speaker_norms |= {_norm(n) for n in names}
        if self.cfg.speaker.name_prefixes:
            # a short form of one participant's name, written as a name ("Mel" for Melanie): that participant (R38)
            all_names = [(stored, n.lower()) for stored, names in self.speaker_names() for n in names]
            for m in re.finditer(r"(?<![\w.!?])\s*\b([A-Z][a-z]+)\b", query):
                w = m.group(1).lower()
                if m.start(1) == 0 or len(w) < self.cfg.speaker.min_prefix_chars or w in stop:
                    continue
                owners = {stored for stored, n in all_names if n.startswith(w)}
                if len(owners) == 1 and not any(n == w for _, n in all_names):
                    stored = owners.pop()
                    if stored not in speakers:
                        speakers.append(stored)
                    first_at[stored] = min(first_at.get(stored, m.start(1)), m.start(1))
                    speaker_terms.add(w)
        speakers.sort(key=lambda x: (first_at[x], x))     # in the order the query names them
        times = resolve_query(query, now)   # a part of a month narrows it; an explicit date anchors (R36)
        time_terms: set[str] = set()
        for t in times:
            time_terms |= set(_TOKEN.findall(t.text.lower()))
        terms = [t for t in _TOKEN.findall(low) if t not in stop][: self.cfg.fts.max_query_terms]
        entities, entity_terms = ([], set())
        if self.cfg.lane_weights.entity > 0:
            entities, entity_terms = self.match_entities(query, speaker_norms)
        return ParsedQuery(query, terms, speakers, speaker_terms, times, time_terms, is_when_question(query), now,
                           as_of, entities, entity_terms, answer_type(query), disposition_question(query))

    # -- lanes ---------------------------------------------------------------------------------------------
    def embedder(self):
        if self._embedder is not None:
            return self._embedder
        return self.vectors.embedder() if self.vectors is not None else None

    def _weights(self) -> list[float]:
        w = self.cfg.fts.column_weights
        return [w.speaker, w.body, w.extra, w.context]

    def _stems(self, terms: Sequence[str]) -> dict[str, str]:
        """Query word → the form FTS5's porter tokenizer stores (for document frequencies)."""
        if self._tokenizer is None:
            self._tokenizer = self.conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        out = {}
        for t in terms:
            st = self._stem_cache.get(t)
            if st is None:
                toks = self._tokenizer(t.encode(), apsw.FTS5_TOKENIZE_QUERY, None)
                st = self._stem_cache[t] = toks[0][2] if toks else t
            out[t] = st
        return out

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        v = search_sql.version(self.conn)
        if v != self._df_version:
            self._df, self._df_version = {}, v
        stems = self._stems([t for t in terms if t not in self._df])
        if stems:
            found = search_sql.term_doc_counts(self.conn, sorted(set(stems.values())))
            for t, s in stems.items():
                self._df[t] = found.get(s, 0)
        return {t: self._df.get(t, 0) for t in terms}

    def fts_lane(self, name: str, terms: Sequence[str], weight: float, cap: int, **filters: Any) -> RankedList:
        """BM25 over the FTS index. Inside a search whose query words together match more than
        ``fts.rank_all_below`` documents, every FTS lane is cut from the query's one shared candidate pool
        (:class:`FtsPool`, R40–R41) instead of running an FTS5 query of its own."""
        w = self._weights()
        cols = [c for c, x in zip(FTS_COLUMNS, w) if x > 0]
        terms = [t for t in dict.fromkeys(terms) if t and t.isalnum()]
        match = fts_match(terms, cols)
        items: list[Candidate] = []
        if not match:
            return RankedList(name, items, weight)
        if self._pool_terms is not None:  # first FTS lane of this search: build the pool once
            words, self._pool_terms = self._pool_terms, None
            self._pool = self.fts_pool(words, self._pool_speakers)
            if self._pool is None and not self.fts_positions():  # C2: every match, in one pool for every lane
                self._pool = self.complete_pool(words)
        pool = self._pool
        if pool is None or not set(terms) <= pool.all_terms:
            pool = None if self.fts_positions() else self.complete_pool(terms)  # words beyond the query's
            if pool is None and not self.fts_positions():
                return RankedList(name, items, weight)
        if pool is not None:
            for rowid, sc in pool.rank(terms, cap, self._pool_keep(pool, filters)):
                items.append(Candidate(rowid, sc))
            return RankedList(name, items, weight)
        for rowid, s in search_sql.fts_search(self.conn, match, w, cap, **filters):
            items.append(Candidate(rowid, -s))
        return RankedList(name, items, weight)

    def fts_positions(self) -> bool:
        """Whether the FTS table keeps positions (detail=full, before migration 0120): then FTS5's bm25() and
        kenning_hits count hits; else (detail=column, C1) every hit count is the forward index's."""
        v = search_sql.version(self.conn)
        if self._detail is None or self._detail[0] != v:
            self._detail = (v, search_sql.fts_detail(self.conn) == "full")
        return self._detail[1]

    def complete_pool(self, terms: Sequence[str]) -> "FtsPool | None":
        """Every document matching one of ``terms`` (over the weighted columns) with its exact column-weighted
        hits and length, and FTS5's statistics: ranking it gives what FTS5's bm25() gave every match (C2). From the
        in-memory forward index on a vault of at most ``fts.memory_index_docs`` documents (C6), else one doclist
        walk and the matches' forward rows. None when a word is not one token (it cannot be looked up)."""
        terms = [t for t in dict.fromkeys(terms) if t and t.isalnum()]
        keys = self._term_keys(terms) if terms else None
        if keys is None:
            return None
        w = self._weights()
        cols = [c for c, x in zip(FTS_COLUMNS, w) if x > 0]
        col_arg = cols if set(cols) != set(FTS_COLUMNS) else None
        n_docs, n_tokens = self._fts_totals()
        mem = self._memory_index()
        if mem is not None:
            rowids, hits, length, held = mem.arrays(search_sql.query_term_ids(self.conn, keys))
            odd = {r: v for r, v in hits_from_columns(self.conn, mem.odd, keys, w).items()
                   if any(x > 0 for x in v[1])} if mem.odd else {}
            if odd:  # documents without packed records (a count past a byte), measured from their columns
                rowids = np.concatenate([rowids, np.fromiter(odd, dtype=np.int64, count=len(odd))])
                hits = np.vstack([hits, np.asarray([v[1] for v in odd.values()], dtype=np.float64)])
                length = np.concatenate([length, np.asarray([v[0] for v in odd.values()], dtype=np.float64)])
                order = np.argsort(rowids, kind="stable")
                rowids, hits, length = rowids[order], hits[order], length[order]
                held = [n + sum(1 for v in odd.values() if v[1][j] > 0) for j, n in enumerate(held)]
            # a column weighted 0 is left out of the query: FTS5's bm25() counted a word's documents in the others
            df = self.doc_freqs(terms) if col_arg is None else dict(zip(terms, held))
            pool = FtsPool(self, terms, {}, [df[t] for t in terms], n_docs, n_tokens, arrays=(rowids, hits, length))
        else:
            if col_arg is None:
                df = self.doc_freqs(terms)
            else:
                df = {t: search_sql.fts_count(self.conn, fts_match([t], cols) or '""') for t in terms}
            kept = self._postings.kept(keys) if col_arg is None else set()
            if kept and len(kept) == len(set(keys)):  # every word's matches seen in an earlier complete pool (C10)
                pool = FtsPool(self, terms, {}, [df[t] for t in terms], n_docs, n_tokens,
                               arrays=self._postings.get(keys))
            else:
                # the documents of the words not kept, read (with every word's hits); those holding only kept words
                # from their postings (C11)
                rest = [t for t, k in zip(terms, keys) if k not in kept]
                rowids = search_sql.fts_rowids(self.conn, fts_match(rest, cols) or '""', -1, newest_first=False)
                pool = FtsPool.from_doc_terms(self, terms, keys, sorted(rowids), w, col_arg, [df[t] for t in terms],
                                              n_docs, n_tokens)
                if kept:
                    cols_kept = [j for j, k in enumerate(keys) if k in kept]
                    docs, sub, length = self._postings.get([keys[j] for j in cols_kept])
                    only = ~np.isin(docs, pool.rowids, assume_unique=True)
                    extra = np.zeros((int(only.sum()), len(terms)), dtype=np.float64)
                    extra[:, cols_kept] = sub[only]
                    ids = np.concatenate([pool.rowids, docs[only]])
                    order = np.argsort(ids, kind="stable")
                    pool = FtsPool(self, terms, {}, [df[t] for t in terms], n_docs, n_tokens,
                                   arrays=(ids[order], np.vstack([pool.hits, extra])[order],
                                           np.concatenate([pool.length, length[only]])[order]))
                if col_arg is None:
                    self._postings.put(keys, pool)
        pool.all_terms = set(terms)
        return pool

    def _memory_index(self):
        """The forward index in memory (:class:`~kenning.retrieve.lexical_memory.MemoryIndex`, C6) for this index
        version, or None: a table with positions, a vault of more than ``fts.memory_index_docs`` documents, a
        forward index with rows missing, or a searcher's first search (a one-shot `kenning search` does not pay for
        building it; ~0.3 s at 10k messages)."""
        if self._searches < 2:
            return None
        v = search_sql.version(self.conn)
        if self._memory is None or self._memory[0] != v:
            mem = None
            limit = self.cfg.fts.memory_index_docs
            n_docs = self._fts_totals()[0] if limit > 0 and not self.fts_positions() else limit + 1
            if n_docs <= limit:
                from kenning.retrieve.lexical_memory import MemoryIndex

                mem = MemoryIndex(self.conn, self._weights())
                if mem.n_rows < n_docs:  # documents without a forward row (indexed before migration 0063)
                    mem = None
            self._memory = (v, mem)
        return self._memory[1]

    def fts_pool(self, terms: Sequence[str], speakers: Sequence[tuple[str, Sequence[str]]] = ()) -> "FtsPool | None":
        """The shared candidate pool of one query (R40), or None when its words together match at most
        ``fts.rank_all_below`` documents (then every lane ranks all its matches, exactly as FTS5 does).

        Pruning (R41): a word in more than ``fts.common_term_cap`` documents is *common*. The pool is every
        document of the rare words, then conjunctive-first the newest documents holding all the common words and each pair of the three rarest common words (``fts.pool_and_cap`` each), and each common word
        alone (``fts.pool_cap``) — each fetched by a
        doclist walk that stops at its limit, with every query word's weighted hits and the document length, so
        that BM25 (FTS5's formula and statistics) is computed for any subset of the words without scoring the
        rest of the vault. ``speakers`` ((stored name, the speaker lane's words)) add, per speaker the query names,
        the newest ``fts.pool_speaker_cap`` of that speaker's documents holding one of the lane's words (the FTS
        speaker column as an index), which the speaker lane needs and the word-driven steps may not hold."""
        fcfg = self.cfg.fts
        terms = [t for t in dict.fromkeys(terms) if t and t.isalnum()]
        if not terms or fcfg.rank_all_below <= 0:
            return None
        df = self.doc_freqs(terms)
        if sum(df.values()) <= fcfg.rank_all_below:
            return None
        all_terms = set(terms)
        terms = [t for t in terms if df[t] > 0]
        if not terms:
            return None
        w = self._weights()
        cols = [c for c, x in zip(FTS_COLUMNS, w) if x > 0]
        col_arg = cols if set(cols) != set(FTS_COLUMNS) else None
        order = sorted(terms, key=lambda t: (df[t], t))
        rare = [t for t in order if df[t] <= fcfg.common_term_cap]
        common = [t for t in order if df[t] > fcfg.common_term_cap]
        q = lambda ts, op: f" {op} ".join(f'"{t}"' for t in ts)  # noqa: E731
        steps: list[tuple[str, int]] = []
        if rare:
            steps.append((q(rare, "OR"), sum(df[t] for t in rare)))
        if len(common) >= 3:
            steps.append((q(common, "AND"), -fcfg.pool_and_cap))  # negative: probed first (R50)
        top = common[:fcfg.pool_pair_words]
        for i in range(len(top)):
            for j in range(i + 1, len(top)):
                steps.append((q([top[i], top[j]], "AND"), fcfg.pool_and_cap))
        for t in common:
            steps.append((q([t], "OR"), fcfg.pool_cap))
        phrases: dict[int, list[str]] = {}  # step → the speaker phrase its documents must hold (C3)
        for name, lane_words in (speakers if fcfg.pool_speaker_cap > 0 else ()):
            toks = _TOKEN.findall(name.lower())
            words = [t for t in lane_words if t in terms]
            if toks and words:
                if len(toks) > 1 and not self.fts_positions():  # no phrase queries without positions
                    phrases[len(steps)] = toks
                    steps.append((f'({{speaker}} : ({q(toks, "AND")})) AND ({q(words, "OR")})', fcfg.pool_speaker_cap))
                else:
                    steps.append((f'({{speaker}} : "{" ".join(toks)}") AND ({q(words, "OR")})', fcfg.pool_speaker_cap))
        # ranking every match (FTS5, in C) costs a few µs a match, a pool document ~5× that (each pruning step is
        # an FTS5 walk of its own, R50): pool only when that pays off even if every step fills up
        if sum(df.values()) < fcfg.pool_min_ratio * sum(abs(limit) for _, limit in steps):
            return None
        n_docs, n_tokens = self._fts_totals()
        keys = self._term_keys(terms)
        if keys is not None:  # the forward index: the steps are bare doclist walks, the hits one lookup (R51)
            picked: set[int] = set()
            run = list(enumerate(steps))
            # the documents holding every common word are among those holding the two rarest: that pair is walked
            # first, and when it returned all its documents (fewer than its limit) the conjunction — a walk to the
            # end of the index when it matches few — adds nothing to the pool and is skipped (R59)
            every = next((i for i, (_r, limit) in enumerate(steps) if limit < 0), None)
            pair = every + 1 if every is not None and len(top) >= 2 else None
            if pair is not None:
                run[every], run[pair] = run[pair], run[every]
            pair_complete = False
            for i, (restrict, limit) in run:
                if limit < 0 and pair_complete:
                    continue
                expr = restrict if col_arg is None else "{" + " ".join(col_arg) + "} : (" + restrict + ")"
                if i in phrases:
                    got = self._speaker_phrase_rowids(expr, phrases[i], abs(limit))
                else:
                    got = search_sql.fts_rowids(self.conn, expr, abs(limit), newest_first=not (rare and i == 0))
                if i == pair and len(got) < limit:
                    pair_complete = True
                picked.update(got)
            pool = FtsPool.from_doc_terms(self, terms, keys, sorted(picked), w, col_arg,
                                          [df[t] for t in terms], n_docs, n_tokens)
            pool.all_terms = all_terms
            return pool
        found: dict[int, tuple[int, list[float]]] = {}
        for i, (restrict, limit) in enumerate(steps):
            # the conjunction of every common word often matches nothing, found only after walking the whole
            # index; its bare doclist walk costs about half the measured one, so it is probed first (R50)
            if limit < 0:
                probe = restrict if col_arg is None else "{" + " ".join(col_arg) + "} : (" + restrict + ")"
                if not search_sql.fts_any(self.conn, probe):
                    continue
            # the rare words' step takes every match (its limit is their document counts): oldest first is the same
            # set, and FTS5's forward walk is cheaper than its reverse one (R50)
            search_sql.fts_term_hits(self.conn, restrict, terms, w, abs(limit), col_arg, found,
                                     newest_first=not (rare and i == 0))
        pool = FtsPool(self, terms, found, [df[t] for t in terms], n_docs, n_tokens)
        pool.all_terms = all_terms  # words in no document rank nothing, as in FTS5
        return pool

    def _speaker_phrase_rowids(self, expr: str, toks: list[str], limit: int) -> list[int]:
        """The newest ``limit`` documents matching ``expr`` whose speaker column holds the words ``toks`` one after
        the other — what FTS5's phrase query gave before migration 0120 (C3): the documents holding every word in
        that column, newest first, those whose speaker field has them as a phrase."""
        tok = search_sql.fts_tokenizer(self.conn)
        flag = apsw.FTS5_TOKENIZE_QUERY
        phrase = tok(" ".join(toks).encode(), flag, None, include_offsets=False, include_colocated=False)
        n = len(phrase)
        out: list[int] = []
        cands = search_sql.fts_rowids(self.conn, expr, -1, newest_first=True)
        for i in range(0, len(cands), 4 * limit):
            chunk = cands[i:i + 4 * limit]
            fields = search_sql.speaker_fields(self.conn, chunk)
            for r in chunk:
                have = tok(fields.get(r, "").encode(), flag, None, include_offsets=False, include_colocated=False)
                if any(have[j:j + n] == phrase for j in range(len(have) - n + 1)):
                    out.append(r)
                    if len(out) >= limit:
                        return out
        return out

    def _term_keys(self, terms: Sequence[str]) -> list[int] | None:
        """Each query word's key in the forward index (R51), or None when the pool cannot read hits from it: a
        document indexed before it existed has no row yet, or a word is not exactly one token. Without positions
        in the FTS table (C1) the forward index is where hits come from whatever ``fts.forward_index`` says; a
        document without a row is then measured from its columns (C2)."""
        if self.fts_positions():
            if not self.cfg.fts.forward_index:
                return None
            v = search_sql.version(self.conn)
            if self._forward is None or self._forward[0] != v:
                self._forward = (v, search_sql.doc_terms_complete(self.conn))
            if not self._forward[1]:
                return None
        tok = search_sql.fts_tokenizer(self.conn)
        keys = []
        for t in terms:
            toks = tok(t.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)
            if len(toks) != 1:
                return None
            keys.append(search_sql.term_key(toks[0]))
        return keys

    def _fts_totals(self) -> tuple[int, int]:
        v = search_sql.version(self.conn)
        if self._totals is None or self._totals[0] != v:
            self._totals = (v, search_sql.fts_totals(self.conn))
        return self._totals[1]

    def _pool_keep(self, pool: "FtsPool", filters: dict[str, Any]) -> Callable[[np.ndarray], np.ndarray] | None:
        """Which pool documents (by position) pass a lane's filters — the SQL of ``store.search._filters`` in
        Python, on documents fetched from ``search_docs`` only as the ranking reaches them."""
        f = {k: v for k, v in filters.items() if v is not None and v != []}
        if not f:
            return None
        if f.get("entity_ids"):
            raise ValueError("entity_ids filter is not cut from the pool: pass the mentioning rowids")
        allowed = set(int(r) for r in f["rowids"]) if "rowids" in f else None
        as_of, kinds = f.get("as_of"), (set(f["kinds"]) if f.get("kinds") else None)
        want = {x.casefold() for x in f["speakers"]} if f.get("speakers") else None
        start, end = f.get("start"), f.get("end")
        s10, e10 = (start or "")[:10], (end or "")[:10]

        def ok(rowid: int, m: tuple) -> bool:
            kind, spk, occ, ev_s, ev_e = m
            if allowed is not None and rowid not in allowed:
                return False
            if as_of and not (occ is not None and occ <= as_of):
                return False
            if want is not None and not (spk is not None and spk.casefold() in want):
                return False
            if start and end:
                if not ((occ is not None and start <= occ < end) or
                        (ev_s is not None and ev_e is not None and ev_s < e10 and ev_e >= s10)):
                    return False
            elif start and not (occ is not None and occ >= start):
                return False
            elif end and not start and not (occ is not None and occ < end):
                return False
            return kinds is None or kind in kinds

        # the vector lanes' per-document metadata, when loaded for this index, rules out most documents of a speaker
        # or time filter without their search_docs rows (a narrow time range: most of the pool) (R59)
        dm = self._doc_meta() if (want is not None or (start and end)) else None

        def keep(pos: np.ndarray) -> np.ndarray:
            rids = pool.rowids[pos]
            if allowed is not None and len(f) == 1:  # the entity lane: no document lookup needed
                return np.fromiter((int(r) in allowed for r in rids), dtype=bool, count=len(rids))
            out = np.zeros(len(rids), dtype=bool)
            maybe = np.arange(len(rids)) if dm is None else np.flatnonzero(dm.may_pass(
                rids, speakers=f.get("speakers"), start=start if (start and end) else None, end=end))
            if len(maybe):
                sub = rids[maybe]
                if len(sub) > 64:  # the filters in SQL, one statement a chunk (C6): what FTS5's query joined
                    passed = search_sql.filter_rowids(self.conn, sub.tolist(), as_of=as_of, speakers=f.get("speakers"),
                                                      start=start, end=end, kinds=f.get("kinds"))
                    out[maybe] = np.fromiter(((int(r) in passed) and (allowed is None or int(r) in allowed)
                                              for r in sub), dtype=bool, count=len(sub))
                else:
                    meta = pool.meta_of(sub)
                    out[maybe] = np.fromiter((ok(int(r), m) for r, m in zip(sub, meta)), dtype=bool, count=len(sub))
            return out
        return keep

    def _doc_meta(self):
        """The vector lanes' document metadata (:class:`~kenning.retrieve.vectors.DocMeta`) of this index, or None
        without a vector index of the search documents."""
        if self.vectors is None or self.vectors.table() is None:
            return None
        return self.vectors.meta()

    def vector_lane(self, name: str, qvec, weight: float, cap: int, *, speakers: Sequence[str] | None = None,
                    start: str | None = None, end: str | None = None, as_of: str | None = None,
                    kinds: Sequence[str] | None = None, rowids: Sequence[int] | None = None) -> RankedList:
        """The nearest documents, filtered by kind / speaker / said-at interval / --as-of inside the search."""
        if qvec is None or self.vectors is None:
            return RankedList(name, [], weight)
        job = self._vec_jobs.pop(self._vec_key(qvec, cap, kinds, speakers, start, end, as_of, rowids), None)
        if job is not None:  # started in the worker thread before the FTS lanes (R44)
            found = job()
        else:
            found = self.vectors.knn(qvec, cap, kinds=kinds, speakers=speakers, start=start, end=end, as_of=as_of,
                                     rowids=rowids)
        return RankedList(name, [Candidate(r, s) for r, s in found], weight)

    @staticmethod
    def _vec_key(qvec, cap, kinds, speakers, start, end, as_of, rowids) -> tuple:
        tup = lambda x: None if x is None else tuple(x)  # noqa: E731
        return (np.asarray(qvec, dtype=np.float32).tobytes(), cap, tup(kinds), tup(speakers) if speakers else None,
                start, end, as_of, tup(rowids))

    def _start_vector(self, qvec, cap: int, *, kinds: Sequence[str] | None = None,
                      speakers: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                      as_of: str | None = None) -> None:
        """Start a vector lane's search in the worker thread (R44); :meth:`vector_lane` with the same arguments
        takes its result."""
        assert self.vectors is not None
        key = self._vec_key(qvec, cap, kinds, speakers, start, end, as_of, None)
        if key not in self._vec_jobs:
            job = self.vectors.knn_start(qvec, cap, kinds=kinds, speakers=speakers, start=start, end=end, as_of=as_of)
            if job is not None:
                self._vec_jobs[key] = job

    def _time_range(self, iv: Interval) -> tuple[str, str]:
        """The said-at / event-time range of the time lane for a resolved query time: slack days either side."""
        slack = dt.timedelta(days=self.cfg.time.slack_days)
        return (iv.start - slack).isoformat(), (iv.end + slack + dt.timedelta(days=1)).isoformat()

    def _restricted(self, name: str, terms, qvec, weight: float, note: str, detail: dict | None = None,
                    evidence: Callable[[Hashable], list[dict]] | None = None, **filters: Any) -> RankedList:
        """BM25 and vector restricted by a filter, fused into one ranked list."""
        cap = self.cfg.lane_cap
        parts = [self.fts_lane("f", terms, 1.0, cap, **filters)]
        if qvec is not None:
            vf = {k: v for k, v in filters.items() if k != "entity_ids"}
            parts.append(self.vector_lane("v", qvec, 1.0, cap, **vf))
        fused = rrf(parts, self.cfg.rrf_k, cap)
        return RankedList(name, [Candidate(f.key, round(f.score, 6), dict(detail or {}),
                                           evidence(f.key) if evidence else []) for f in fused], weight, note)

    def entity_lane(self, pq: ParsedQuery, qvec, weight: float, bound: str | None,
                    kinds: Sequence[str] | None) -> RankedList | None:
        """Turns that mention an entity the query names (R18), ranked by BM25 + vector over those turns with
        the entity's words removed; when nothing else is left to rank by, newest first."""
        if not pq.entities:
            return None
        ecfg = self.cfg.entity
        ids = list(dict.fromkeys(e.entity_id for e in pq.entities))
        ment = search_sql.entity_mention_docs(self.conn, ids, ecfg.max_mentions, bound)
        if not ment:
            return RankedList("entity", [], weight, "entity: " + ", ".join(e.name for e in pq.entities))
        by_doc: dict[int, list[dict]] = {}
        for m in ment:
            by_doc.setdefault(int(m["doc_rowid"]), []).append(m)
        names = {e.entity_id: e for e in pq.entities}

        def evidence(key: Hashable) -> list[dict]:
            return [{"kind": "mentions_entity", "entity_id": m["entity_id"], "name": names[m["entity_id"]].name,
                     "matched": names[m["entity_id"]].surface, "surface": m["surface_text"],
                     "char_start": m["char_start"], "char_end": m["char_end"]} for m in by_doc.get(key, [])]  # type: ignore[arg-type]

        if kinds is not None and "message" not in kinds:
            return None
        terms = [t for t in pq.terms if t not in pq.entity_terms and t not in pq.speaker_terms]
        rowids = list(by_doc)
        note = "entity: " + ", ".join(dict.fromkeys(e.name for e in pq.entities))
        if not terms and qvec is None:
            items = [Candidate(r, 1.0, {}, evidence(r)) for r in rowids]
            return RankedList("entity", items, weight, note)
        rl = self._restricted("entity", terms, qvec, weight, note, None, evidence, as_of=bound, rowids=rowids)
        # every mentioning turn is a candidate: those neither ranking reached follow, newest first
        seen = {c.key for c in rl.items}
        rl.items += [Candidate(r, 0.0, {}, evidence(r)) for r in rowids if r not in seen]
        return rl

    def assertion_lane(self, pq: ParsedQuery, weight: float, bound: str | None) -> RankedList | None:
        """Assertion-to-evidence expansion (R21): assertions about an entity or speaker the query names whose
        predicate / object / quote share the query's other words (or whose valid time falls in the query's
        time) bring their source turn; the evidence chain names the assertion."""
        names = [_norm(s) for s in pq.speakers] + [_norm(e.surface) for e in pq.entities]
        ids = list(dict.fromkeys([e.entity_id for e in pq.entities] +
                                 search_sql.entity_ids_named(self.conn, [n for n in names if n])))
        if not ids:
            return None
        found = search_sql.assertions_about(self.conn, ids, self.cfg.assertion.max_assertions, bound)
        if not found:
            return RankedList("assertion", [], weight)
        words = [t for t in pq.terms if t not in pq.entity_terms and t not in pq.speaker_terms
                 and t not in pq.time_terms]
        qstems = set(self._stems(words).values())
        iv = pq.times[0] if pq.times else None
        best: dict[int, tuple[float, dict]] = {}
        for a in found:
            text = " ".join(x for x in (a["predicate"].replace("_", " "), a["object_name"] or "",
                                        _literal(a["object_value"]), a["surface_text"] or "") if x)
            stems = self._text_stems.get(text)
            if stems is None:
                stems = self._text_stems[text] = frozenset(self._stems(_TOKEN.findall(text.lower())).values())
            score = float(len(qstems & stems))
            if iv is not None and a["valid_from_utc"]:
                start = a["valid_from_utc"][:10]
                end = (a["valid_to_utc"] or a["valid_from_utc"])[:10]
                if start <= iv.end.isoformat() and end >= iv.start.isoformat():
                    score += 1.0
            if score <= 0 and (qstems or iv is not None):
                continue
            score += float(a["confidence_final"] or 0) / 10
            key = int(a["doc_rowid"])
            if key not in best or score > best[key][0]:
                best[key] = (score, a)
        order = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[: self.cfg.lane_cap]
        items = [Candidate(k, round(sc, 6), {"assertion_id": a["assertion_id"]}, [_assertion_step(a)])
                 for k, (sc, a) in order]
        return RankedList("assertion", items, weight)

    def has_beliefs(self) -> bool:
        if self._has_beliefs is None:
            self._has_beliefs = beliefs_sql.count_beliefs(self.conn) > 0
        return self._has_beliefs

    def belief_lane(self, pq: ParsedQuery, weight: float, bound: str | None) -> RankedList | None:
        """Beliefs whose statement, topic or structured form matches the query words (the ledger's own FTS
        index, R20). Current beliefs, and under --as-of those believed then."""
        if not pq.terms or not self.has_beliefs():
            return None
        match = " OR ".join(f'"{t}"' for t in dict.fromkeys(pq.terms) if t.isalnum())
        if not match:
            return None
        found = beliefs_sql.search_beliefs(self.conn, match, self.cfg.lane_cap, bound)
        return RankedList("belief", [Candidate(("belief", b["belief_id"]), -float(b["_rank"])) for b in found],
                          weight)

    # -- the search ----------------------------------------------------------------------------------------
    def search(self, query: str, *, k: int | None = None, as_of: str | None = None, now: str | None = None,
               lanes: Sequence[str] | None = None, kinds: Sequence[str] | None = None) -> SearchResult:
        """``kinds`` limits what the hits may be (message, entity, belief); lanes still use every signal."""
        cfg = self.cfg
        k = k or cfg.default_k
        bound = _as_of_bound(as_of)
        now_ts = normalize_to_utc(now) if now else None
        if now and now_ts is None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", now.strip()):
            raise ValueError(f"question date {now!r} is not a date")
        now_date = (dt.date.fromisoformat(now.strip()[:10]) if now else
                    dt.date.fromisoformat(bound[:10]) if bound else dt.datetime.now(dt.timezone.utc).date())
        self.notes = []
        self._searches += 1
        pq = self.parse(query, now_date, bound)
        w = cfg.lane_weights
        enabled = set(lanes) if lanes else None
        doc_kinds = [x for x in kinds if x != "belief"] if kinds is not None else None
        want_beliefs = kinds is None or "belief" in kinds

        def on(name: str) -> bool:
            return (enabled is None or name in enabled) and getattr(w, name, 1.0) > 0

        cap = cfg.lane_cap
        qvec = None
        svec = None                 # the speaker lane's query vector: the question without the names (R30)
        if any(on(x) for x in ("vector", "speaker", "time", "entity")):
            emb = self.embedder() if (self.vectors is not None and self.vectors.table() is not None) else None
            if emb is not None:
                texts = [query]
                if on("speaker") and pq.speakers and cfg.speaker.vector_without_names:
                    stripped = strip_words(query, pq.speaker_terms)
                    if stripped and stripped != query:
                        texts.append(stripped)
                vecs = emb.embed(texts)     # one call: the model runs once for both
                qvec = np.asarray(vecs[0], dtype=np.float32)
                svec = np.asarray(vecs[1], dtype=np.float32) if len(texts) > 1 else qvec
            elif self.vectors is not None and on("vector"):
                self.notes.append("no vectors in the search index yet: run `kenning reindex` for the vector lanes")
        first: list[RankedList] = []
        kf = {"kinds": doc_kinds} if doc_kinds is not None else {}
        self._vec_jobs = {}
        if qvec is not None and self.vectors is not None and cfg.vector.overlap and self.vectors.quantized():
            # the vector lanes' scans, in lane order, in the worker thread while the FTS pool and lanes run (R44)
            if on("vector"):
                self._start_vector(qvec, cap, as_of=bound, **kf)
            if on("speaker") and pq.speakers:
                self._start_vector(svec, cap, as_of=bound, speakers=pq.speakers)
            if on("time") and pq.times:
                t0, t1 = self._time_range(pq.times[0])
                self._start_vector(qvec, cap, as_of=bound, start=t0, end=t1)
        # one FTS pass per query (R40): every FTS lane below is cut from this pool when the vault is large
        self._pool, self._pool_terms = None, list(pq.terms)
        if on("speaker"):
            self._pool_speakers = [(sp, [t for t in pq.terms if t not in pq.speaker_terms]) for sp in pq.speakers]
        else:
            self._pool_speakers = []
        if on("fts"):
            fterms = pq.terms
            if pq.speakers and on("speaker") and not cfg.fts.speaker_names_in_plain_lane:
                # the speaker lane carries who; a name in the text is mostly a greeting ("Bye Nate!") (R30)
                fterms = [t for t in pq.terms if t not in pq.speaker_terms] or pq.terms
            first.append(self.fts_lane("fts", fterms, w.fts, cap, as_of=bound, **kf))
        if on("vector") and qvec is not None:
            first.append(self.vector_lane("vector", qvec, w.vector, cap, as_of=bound, **kf))
        if on("speaker") and pq.speakers:
            terms = [t for t in pq.terms if t not in pq.speaker_terms]
            first.append(self._restricted("speaker", terms, svec, w.speaker, "speaker: " + ", ".join(pq.speakers),
                                          as_of=bound, speakers=pq.speakers))
        if on("time") and pq.times:
            iv = pq.times[0]
            start, end = self._time_range(iv)
            terms = [t for t in pq.terms if t not in pq.time_terms]
            first.append(self._restricted("time", terms, qvec, w.time, f"time: {iv.start}..{iv.end} ({iv.text})",
                                          as_of=bound, start=start, end=end))
        if on("entity"):
            rl = self.entity_lane(pq, qvec, w.entity, bound, doc_kinds)
            if rl is not None:
                first.append(rl)
        if on("assertion"):
            rl = self.assertion_lane(pq, w.assertion, bound)
            if rl is not None:
                first.append(rl)
        if on("belief") and want_beliefs:
            rl = self.belief_lane(pq, w.belief, bound)
            if rl is not None:
                first.append(rl)
        first_pass = rrf(first, cfg.rrf_k, cap)
        second: list[RankedList] = []
        docs: dict[Hashable, dict] = {}
        if on("temporal_cue") and pq.when_question and first_pass:
            pool = [f.key for f in first_pass[:cap] if isinstance(f.key, int)]
            docs.update(search_sql.docs_by_rowid(self.conn, pool))
            items = []
            for key in pool:
                d = docs.get(key)
                if d and d.get("text_raw") and resolve_all(d["text_raw"], _date_of(d) or now_date):
                    items.append(Candidate(key, 1.0, {"has_time_expression": True}))
            second.append(RankedList("temporal_cue", items, w.temporal_cue))
        if on("answer_type") and pq.answer_type and first_pass:
            # the question word says what the answer is; prefer candidates that hold one (R33)
            pool = [f.key for f in first_pass[:cap] if isinstance(f.key, int)]
            docs.update(search_sql.docs_by_rowid(self.conn, [x for x in pool if x not in docs]))
            names = {w_ for _, ns in self.speaker_names() for n in ns for w_ in n.split()}
            items = [Candidate(key, 1.0, {"answer_type": pq.answer_type}) for key in pool
                     if (d := docs.get(key)) and d.get("doc_kind") == "message"
                     and carries(pq.answer_type, d.get("text_raw") or "", names)]
            second.append(RankedList("answer_type", items, w.answer_type))
        if on("disposition") and pq.disposition and first_pass:
            # "would X …?" / "does X …?": the person's own statements of what they like, value, want or do (R34)
            pool = [f.key for f in first_pass[:cap] if isinstance(f.key, int)]
            docs.update(search_sql.docs_by_rowid(self.conn, [x for x in pool if x not in docs]))
            who = {s_.casefold() for s_ in pq.speakers}
            items = [Candidate(key, 1.0, {"states": "preference, value, goal or habit"}) for key in pool
                     if (d := docs.get(key)) and d.get("doc_kind") == "message"
                     and (not who or (d.get("speaker") or "").casefold() in who)
                     and states_disposition(d.get("text_raw") or "")]
            second.append(RankedList("disposition", items, w.disposition))
        if on("adjacency") and first_pass:
            seeds = [f for f in first_pass if isinstance(f.key, int)][: cfg.adjacency.seeds]
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
        self._pool, self._pool_terms = None, None
        for job in self._vec_jobs.values():  # a started scan no lane took (none expected): let it finish
            job()
        self._vec_jobs = {}
        fused = rrf(all_lanes, cfg.rrf_k, cap)
        rowids = [f.key for f in fused if isinstance(f.key, int) and f.key not in docs]
        docs.update(search_sql.docs_by_rowid(self.conn, rowids))
        belief_ids = [f.key[1] for f in fused if isinstance(f.key, tuple) and f.key[0] == "belief"]
        beliefs = self._beliefs(belief_ids) if belief_ids else {}
        hits: list[dict[str, Any]] = []
        self._mentions = search_sql.time_mentions_of(
            self.conn, [d["doc_id"] for f in fused[: k * 3] if isinstance(f.key, int)
                        for d in [docs.get(f.key)] if d and d["doc_kind"] == "message"])
        for f in fused:
            if isinstance(f.key, tuple):
                b = beliefs.get(f.key[1])
                if b is not None and want_beliefs:
                    hits.append(self._belief_hit(len(hits) + 1, f, b))
            else:
                d = docs.get(f.key)
                if d is not None and (doc_kinds is None or d["doc_kind"] in doc_kinds):
                    hits.append(self._hit(len(hits) + 1, f, d))
            if len(hits) >= k:
                break
        lane_info = [{"lane": rl.lane, "weight": rl.weight, "candidates": len(rl.items),
                      **({"note": rl.note} if rl.note else {})} for rl in all_lanes]
        return SearchResult(query, pq, hits, lane_info, list(self.notes))

    def _beliefs(self, ids: list[str]) -> dict[str, dict]:
        found = beliefs_sql.get_beliefs(self.conn, ids)
        prov = beliefs_sql.provenance_for_beliefs(self.conn, ids)
        for bid, b in found.items():
            b["_provenance"] = prov.get(bid, [])
        return found

    @staticmethod
    def _lanes(f: Fused) -> dict[str, Any]:
        return {k: {kk: (round(vv, 6) if isinstance(vv, float) else vv) for kk, vv in v.items()}
                for k, v in f.lanes.items()}

    def _hit(self, rank: int, f: Fused, d: dict) -> dict[str, Any]:
        if d["doc_kind"] == "entity":
            aliases = orjson.loads(d.get("entity_aliases_json") or "[]")
            text = d.get("entity_name") or ""
            others = [a for a in aliases if a and a != text]
            if others:
                text += " (also: " + ", ".join(others) + ")"
            return {"rank": rank, "kind": "entity", "entity_id": d["doc_id"], "message_id": None, "turn_ref": None,
                    "conversation_id": None, "conversation": None, "speaker": None, "role": None,
                    "date": d.get("occurred_at_utc"), "text": text, "entity_type": d.get("entity_type"),
                    "mentions": d.get("entity_mentions"), "score": round(f.score, 6), "lanes": self._lanes(f),
                    "event_time": None,
                    "evidence": [{"kind": "entity", "entity_id": d["doc_id"], "name": d.get("entity_name"),
                                  "type": d.get("entity_type")}] + f.evidence}
        text = d.get("text_raw") or ""
        date = _date_of(d)
        event = event_time(text, date, self._mentions.get(d["doc_id"]))
        evidence = [{"kind": "message", "message_id": d["doc_id"], "conversation_id": d["conversation_id"],
                     "turn_ref": d.get("export_message_id"), "char_start": 0, "char_end": len(text),
                     "quote_sha256": sha256_hex(text)}] + f.evidence
        return {
            "rank": rank, "kind": d["doc_kind"], "message_id": d["doc_id"], "turn_ref": d.get("export_message_id"),
            "conversation_id": d["conversation_id"], "conversation": d.get("conversation_title"),
            "speaker": d.get("speaker"), "role": d.get("role"), "date": d.get("occurred_at_utc"),
            "text": text, "score": round(f.score, 6), "lanes": self._lanes(f),
            "event_time": event.as_dict() if event else None,
            "evidence": evidence,
        }

    def _belief_hit(self, rank: int, f: Fused, b: dict) -> dict[str, Any]:
        evidence: list[dict[str, Any]] = [{"kind": "belief", "belief_id": b["belief_id"], "workspace": b["workspace"],
                                           "asserted_at": b["asserted_at"], "superseded_at": b["superseded_at"]}]
        for p in b.get("_provenance", []):
            step = {"kind": "quote", "source": p["source_kind"], "char_start": p["char_start"],
                    "char_end": p["char_end"], "quote_sha256": p["quote_hash"], "quote": p["quote"]}
            if p["source_kind"] == "raw_file":
                step["path"] = p["raw_path"]
            else:
                step["message_id"], step["conversation_id"] = p["message_id"], p["conversation_id"]
            evidence.append(step)
        return {"rank": rank, "kind": "belief", "belief_id": b["belief_id"], "message_id": None, "turn_ref": None,
                "conversation_id": None, "conversation": b.get("topic"), "speaker": None, "role": None,
                "date": b["asserted_at"], "text": b["statement"], "current": b["superseded_at"] is None,
                "score": round(f.score, 6), "lanes": self._lanes(f), "event_time": None,
                "evidence": evidence + f.evidence}


def strip_words(text: str, words: set[str]) -> str:
    """``text`` without the words in ``words`` (lowercase tokens) and a possessive 's after them, spaces
    collapsed: "What did Nate do for Joanna's birthday?" − {nate, joanna} → "What did do for birthday?"."""
    def keep(m: re.Match) -> str:
        toks = _TOKEN.findall(m.group(0).lower())
        return "" if toks and all(t in words or t == "s" for t in toks) and toks[0] in words else m.group(0)

    out = " ".join(re.sub(r"[^\W_]+(?:['’]s\b)?", keep, text).split())
    return out if _WORDS.search(out) else ""


class PostingCache:
    """Query words' complete postings — each document holding the word in a weighted column, with the word's
    column-weighted hits and the document's length — kept from the complete pools (C2) a searcher built, least
    recently used first out past ``mb`` MiB (24 bytes a posting), dropped when the index changes (C10). A complete
    pool whose every word is kept is put together from them: the same documents, hits and lengths as reading the
    matches' forward rows, without the doclist walk, the rows or their decoding; one with some words kept reads
    only the documents of the others (C11)."""

    def __init__(self, conn: apsw.Connection, mb: float):
        from collections import OrderedDict

        self.conn, self.limit = conn, int(mb * 1024 * 1024)
        self._lists: "OrderedDict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]" = OrderedDict()
        self._version: int | None = None
        self.nbytes = 0

    def _current(self) -> None:
        v = search_sql.version(self.conn)
        if v != self._version:
            self._lists.clear()
            self._version, self.nbytes = v, 0

    def kept(self, keys: Sequence[int]) -> set[int]:
        """Which of these words' postings are kept."""
        if self.limit <= 0:
            return set()
        self._current()
        return {k for k in keys if k in self._lists}

    def get(self, keys: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rowids ascending, hits (m, len(keys)), lengths) over the documents holding one of the words, every one
        of them kept (:meth:`kept`)."""
        lists = []
        for k in keys:
            self._lists.move_to_end(k)
            lists.append(self._lists[k])
        allr = np.concatenate([r for r, _h, _n in lists])
        docs, first = np.unique(allr, return_index=True)
        length = np.concatenate([n for _r, _h, n in lists])[first]
        hits = np.zeros((len(docs), len(keys)), dtype=np.float64)
        for j, (r, h, _n) in enumerate(lists):
            hits[np.searchsorted(docs, r), j] = h
        return docs, hits, length

    def put(self, keys: Sequence[int], pool: "FtsPool") -> None:
        """Keep each word's postings from ``pool``, a complete pool over ``keys`` (every document matching one of
        its words, in every weighted column)."""
        if self.limit <= 0:
            return
        self._current()
        for j, k in enumerate(keys):
            if k in self._lists:
                continue
            held = pool.hits[:, j] > 0
            item = (pool.rowids[held].copy(), pool.hits[held, j].copy(), pool.length[held].copy())
            size = sum(a.nbytes for a in item)
            if size > self.limit // 4:  # one word does not push out most of the rest
                continue
            self._lists[k] = item
            self.nbytes += size
        while self.nbytes > self.limit and self._lists:
            _k, old = self._lists.popitem(last=False)
            self.nbytes -= sum(a.nbytes for a in old)


class FtsPool:
    """One query's shared FTS candidates (R40): each document's length and weighted hits of every query word, so
    that any lane's BM25 — over a subset of the words, restricted by a filter — is computed here exactly as FTS5's
    bm25() would compute it (k1 = 1.2, b = 0.75, IDF from the index's document counts, floored at 1e-6)."""

    K1, B = 1.2, 0.75

    def __init__(self, searcher: Searcher, terms: list[str], found: dict[int, tuple[int, list[float]]],
                 dfs: list[int], n_docs: int, n_tokens: int,
                 arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None):
        self.searcher, self.terms = searcher, list(terms)
        if arrays is not None:  # (rowids sorted, hits, lengths), from the forward index (R51)
            self.rowids, self.hits, self.length = arrays
        else:
            m, vals = len(found), list(found.values())
            rowids = np.fromiter(found.keys(), dtype=np.int64, count=m)
            order = np.argsort(rowids, kind="stable")
            self.rowids = rowids[order]
            hits = np.fromiter(itertools.chain.from_iterable(v[1] for v in vals), dtype=np.float64,
                               count=m * len(terms))
            self.hits = hits.reshape(m, len(terms))[order]
            self.length = np.fromiter((v[0] for v in vals), dtype=np.float64, count=m)[order]
        n = max(n_docs, 1)
        self.idf = np.asarray([max(np.log((n - d + 0.5) / (d + 0.5)), 1e-6) for d in dfs], dtype=np.float64)
        avgdl = (n_tokens / n) if n_tokens else 1.0
        self._norm = self.K1 * (1 - self.B + self.B * self.length / avgdl)
        self._meta: dict[int, tuple] = {}
        self.all_terms: set[str] = set(terms)

    @classmethod
    def from_doc_terms(cls, searcher: Searcher, terms: list[str], keys: list[int], rowids: list[int],
                       weights: Sequence[float], columns: Sequence[str] | None, dfs: list[int], n_docs: int,
                       n_tokens: int) -> "FtsPool":
        """The pool of ``rowids`` (sorted) with each query word's hits read from the forward index (R51): the
        documents' packed records are joined and matched against the words' keys in numpy — the same
        column-weighted counts ``kenning_hits`` takes from FTS5. A document with no records (a count past a
        byte) is measured by FTS5 as before."""
        conn = searcher.conn
        ids_l, len_l, nbytes, buf, code_buf, esc_buf = search_sql.doc_term_rows(conn, rowids)
        found: dict[int, tuple[int, list[float]]] = {}
        n = len(terms)
        if len(ids_l) != len(rowids) or None in nbytes:
            # no row (cannot happen once the index is complete) or NULL records: those documents by FTS5
            lost = sorted(set(rowids) - {r for r, b in zip(ids_l, nbytes) if b is not None})
            if not searcher.fts_positions():  # no hit counts in FTS5 (C1): from the documents' columns (C2)
                found.update(hits_from_columns(conn, lost, keys, weights))
            else:
                for r in lost:
                    search_sql.fts_term_hits(conn, " OR ".join(f'"{t}"' for t in terms), terms, weights, 1, columns,
                                             found, rowid=r)
            keep = [i for i, b in enumerate(nbytes) if b is not None]
            ids_l, len_l, nbytes = [ids_l[i] for i in keep], [len_l[i] for i in keep], [nbytes[i] for i in keep]
        m = len(ids_l)
        ids = np.asarray(ids_l, dtype=np.int64)
        length = np.asarray(len_l, dtype=np.float64)
        hits = np.zeros((m, n), dtype=np.float64)
        tids = search_sql.query_term_ids(conn, keys)  # -1: a word no document holds (Y1)
        known = sorted({t for t in tids if t >= 0})
        if m and known:
            allids = search_sql.decode_ids(buf, nbytes, np.int32)  # nbytes: each document's tokens (Y1)
            codes = np.frombuffer(code_buf, dtype=np.uint8)
            uk = np.asarray(known, dtype=np.int64)
            hit = allids == np.int32(known[0])
            for k in known[1:]:
                hit |= allids == np.int32(k)
            sel = np.flatnonzero(hit)
            ends = np.cumsum(np.asarray(nbytes, dtype=np.int64))
            doc = np.searchsorted(ends, sel, side="right")  # the document each matching record belongs to
            pos = np.searchsorted(uk, allids[sel])
            w = np.asarray(weights, dtype=np.float64)
            # a record whose counts did not fit its code byte takes the next row of the escaped counts (Y1)
            escaped = np.frombuffer(esc_buf, dtype=np.uint8).reshape(-1, 4).astype(np.int64)
            # (its row: the escaped records before it — found for the matching records only, C12)
            rank = (np.searchsorted(np.flatnonzero(codes == 0), sel) if len(escaped)
                    else np.zeros(len(sel), dtype=np.int64))
            cnt = search_sql.decode_counts(codes[sel], escaped, rank).astype(np.float64)
            # as kenning_hits: the sum over the columns of weight × count, column by column (a column the query
            # leaves out — ``columns`` — has weight 0: its counts add nothing, as in FTS5)
            val = ((cnt[:, 0] * w[0] + cnt[:, 1] * w[1]) + cnt[:, 2] * w[2]) + cnt[:, 3] * w[3]
            per_key = np.zeros((m, len(uk) + 1), dtype=np.float64)  # the last column: words no document holds
            per_key[doc, pos] = val
            col_of = np.asarray([int(np.searchsorted(uk, t)) if t >= 0 else len(uk) for t in tids], dtype=np.int64)
            hits = per_key[:, col_of]
        if found:  # the few measured by FTS5 join the rest, in rowid order
            ids = np.concatenate([ids, np.fromiter(found, dtype=np.int64, count=len(found))])
            hits = np.vstack([hits, np.asarray([v[1] for v in found.values()], dtype=np.float64).reshape(-1, n)])
            length = np.concatenate([length, np.asarray([v[0] for v in found.values()], dtype=np.float64)])
            order = np.argsort(ids, kind="stable")
            ids, hits, length = ids[order], hits[order], length[order]
        return cls(searcher, terms, {}, dfs, n_docs, n_tokens, arrays=(ids, hits, length))

    def __len__(self) -> int:
        return len(self.rowids)

    def meta_of(self, rowids: np.ndarray) -> list[tuple]:
        """(doc_kind, speaker, occurred_at_utc, event_start, event_end) of these pool documents (fetched once)."""
        missing = [int(r) for r in rowids if int(r) not in self._meta]
        if missing:
            got = search_sql.doc_filter_meta(self.searcher.conn, missing)
            for r in missing:
                self._meta[r] = got.get(r, (None,) * 5)
        return [self._meta[int(r)] for r in rowids]

    def rank(self, terms: Sequence[str], cap: int,
             keep: Callable[[np.ndarray], np.ndarray] | None = None) -> list[tuple[int, float]]:
        """(doc_rowid, BM25) best first (ties by rowid), for documents holding one of ``terms`` that ``keep``
        (positions → passes the lane's filter) admits; ``keep`` sees the ranking in chunks until ``cap`` pass."""
        idx = [self.terms.index(t) for t in dict.fromkeys(terms) if t in self.terms]
        if not idx or not len(self.rowids):
            return []
        score = np.zeros(len(self.rowids), dtype=np.float64)
        held = np.zeros(len(self.rowids), dtype=bool)
        for i in idx:  # term by term, in query order, as bm25() sums its phrases
            f = self.hits[:, i]
            score += self.idf[i] * (f * (self.K1 + 1.0)) / (f + self._norm)
            held |= f > 0
        sel = np.nonzero(held)[0]
        if not len(sel):
            return []
        order = sel[np.lexsort((self.rowids[sel], -score[sel]))]
        if keep is None:
            order = order[:cap]
        else:
            out: list[np.ndarray] = []
            got, step = 0, max(4 * cap, 256)
            for i in range(0, len(order), step):
                chunk = order[i:i + step]
                passed = chunk[keep(chunk)]
                out.append(passed)
                got += len(passed)
                if got >= cap:
                    break
            order = np.concatenate(out)[:cap] if out else order[:0]
        return [(int(self.rowids[i]), float(score[i])) for i in order]


def hits_from_columns(conn: apsw.Connection, rowids: Sequence[int], keys: Sequence[int],
                      weights: Sequence[float]) -> dict[int, tuple[int, list[float]]]:
    """(length, each query word's column-weighted hits) of documents measured from their columns, tokenized as
    the index tokenizes them (C2): a document whose forward row is NULL (a count past a byte, R51) or missing.
    The weighted sum is taken column by column as the forward-index path takes it."""
    from collections import Counter

    tok = search_sql.fts_tokenizer(conn)
    flag = apsw.FTS5_TOKENIZE_DOCUMENT
    w = [float(x) for x in weights]
    out: dict[int, tuple[int, list[float]]] = {}
    for rowid, *cols in search_sql.doc_columns(conn, rowids):
        counts = []
        length = 0
        for text in cols:
            toks = tok(text.encode(), flag, None, include_offsets=False, include_colocated=False) if text else []
            length += len(toks)
            counts.append(Counter(search_sql.term_key(t) for t in toks))
        out[int(rowid)] = (length, [((float(counts[0][k]) * w[0] + float(counts[1][k]) * w[1])
                                     + float(counts[2][k]) * w[2]) + float(counts[3][k]) * w[3] for k in keys])
    return out


def _literal(v: str | None) -> str:
    """An assertion's literal object (JCS JSON) as words."""
    if not v:
        return ""
    try:
        x = orjson.loads(v)
    except orjson.JSONDecodeError:
        return v
    return x if isinstance(x, str) else " ".join(str(y) for y in x.values()) if isinstance(x, dict) else str(x)


def _assertion_step(a: dict) -> dict[str, Any]:
    obj = a["object_name"] or _literal(a["object_value"]) or None
    step = {"kind": "assertion", "assertion_id": a["assertion_id"], "subject": a["subject_name"],
            "predicate": a["predicate"], "object": obj, "modality": a["modality"], "polarity": a["polarity"],
            "char_start": a["char_start"], "char_end": a["char_end"], "surface": a["surface_text"]}
    if a["valid_from_utc"]:
        step["valid_time"] = {"from": a["valid_from_utc"], "to": a["valid_to_utc"], "text": a["qualifier_surface"]}
    return step


def _date_of(d: dict) -> dt.date | None:
    ts = d.get("occurred_at_utc")
    return dt.date.fromisoformat(ts[:10]) if ts else None
