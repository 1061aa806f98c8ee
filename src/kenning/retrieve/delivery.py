"""Pieces the knowledge-delivery paths share (issue 19): the deadline a query checks between steps, the seed's
token estimate, how a relation and a conflict flag read in a line, and resolving a request's words to nodes."""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.confidence import conflict_flag, conflict_score
from kenning.knowledge.writer import normalize_alias
from kenning.sources.timestamps import format_utc
from kenning.store import knowledge_query as kq

_WORD = re.compile(r"[\w][\w'’.-]*", re.UNICODE)


class Deadline:
    """A query's time limit: checked between steps, never inside one (a step is one bounded SQL statement)."""

    def __init__(self, ceiling_ms: float):
        self.ceiling_ms = ceiling_ms
        self.start = time.perf_counter()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000.0

    def expired(self) -> bool:
        return self.elapsed_ms() > self.ceiling_ms


def as_utc(value: str) -> str:
    """Any ISO-8601 date or date-time (a bare date is midnight UTC, a time without offset is UTC) as the stored
    ``YYYY-MM-DDTHH:MM:SS.sssZ`` form."""
    try:
        d = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not an ISO-8601 date or date-time: {value!r}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return format_utc(d)


def tokens(text: str, chars_per_token: float) -> int:
    """§42A.1.4: ``Math.ceil(line.length / 3.5)``."""
    return math.ceil(len(text) / chars_per_token)


def relation_label(relation_type: str) -> str:
    """``domain_lives_in`` → ``lives in``: the governed prefix says nothing to a reader."""
    for prefix in ("domain_", "learned_"):
        if relation_type.startswith(prefix):
            relation_type = relation_type[len(prefix):]
    return relation_type.replace("_", " ")


def hint(relation_type: str | None, direction: str | None) -> str | None:
    """The §42A.1.4 relationship hint: ``lives in`` for an edge out of the context node, ``← has sister`` for one
    into it (the neighbour is the subject)."""
    if not relation_type:
        return None
    label = relation_label(relation_type)
    return f"← {label}" if direction == "in" else label


def flag_of(node: dict[str, Any], config: Config) -> str | None:
    """§5.6 delivery tag from the node's α/β: "distinguish" above 0.7, "caution" above 0.5."""
    cfg = config.knowledge.confidence
    return conflict_flag(conflict_score(node["alpha"], node["beta"], cfg), cfg)


def flagged(text: str, flag: str | None) -> str:
    return f"[{flag}] {text}" if flag else text


def words(text: str, config: Config) -> list[str]:
    """The request's words, normalized like aliases (casefolded, NFKC)."""
    return [normalize_alias(w.strip(".'’-")) for w in _WORD.findall(text) if w.strip(".'’-")]


def ngrams(ws: list[str], max_words: int) -> list[str]:
    out: list[str] = []
    for n in range(min(max_words, len(ws)), 0, -1):
        out += [" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)]
    return list(dict.fromkeys(out))


def fts_expression(ws: list[str], config: Config, conn: apsw.Connection | None = None) -> str | None:
    """Content words OR-ed as quoted FTS5 terms (``"a" OR "b"``, §42A.2.8); None when nothing is left. With a
    connection, a word found in more than max_term_doc_share of the nodes (and more than min_common_term_docs)
    is dropped: it names nothing in particular, and ranking all its matches costs the query its ceiling (D12)."""
    r = config.knowledge.delivery.resolve
    stop = set(r.stopwords)
    keep = [w for w in dict.fromkeys(ws) if len(w) >= r.min_word_chars and w not in stop]
    if keep and conn is not None:
        limit = max(r.min_common_term_docs, r.max_term_doc_share * kq.node_count_estimate(conn))
        docs = kq.term_docs(conn, keep)
        keep = [w for w in keep if docs.get(w, 0) <= limit]
    if not keep:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in keep)


@dataclass
class Resolution:
    """Nodes a request names, best first, with how each was found (§14.6 resolution_path)."""
    nodes: list[dict[str, Any]] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    matched: dict[str, str] = field(default_factory=dict)

    def add(self, node: dict[str, Any], path: str, matched: str | None = None) -> None:
        if node["id"] in self.paths:
            return
        self.nodes.append(node)
        self.paths[node["id"]] = path
        if matched:
            self.matched[node["id"]] = matched


def resolve_request(conn: apsw.Connection, config: Config, request: str, *, deadline: Deadline | None = None,
                    kinds: list[str] | None = None, fts_hits: list[dict[str, Any]] | None = None) -> Resolution:
    """§14.4's cascade without a model: exact alias n-grams (longest first), then FTS5 BM25 over fts_nodes (or the
    caller's already-run FTS hits, best first), then node vectors only when configured."""
    r = config.knowledge.delivery.resolve
    ws = words(request, config)
    res = Resolution()
    grams = [g for g in ngrams(ws, r.max_ngram_words) if len(g) >= r.min_word_chars and g not in r.stopwords]
    by_len = {g: i for i, g in enumerate(grams)}
    hits = kq.nodes_by_alias(conn, grams, limit=r.alias_limit * 4, kinds=kinds)
    # a longer phrase names the thing more precisely than one of its words; then confidence (the SQL's order)
    for n in sorted(hits, key=lambda n: by_len.get(n["matched_alias"], len(grams))):
        if len(res.nodes) >= r.alias_limit:
            break
        res.add(n, "alias_exact", n["matched_alias"])
    if deadline is not None and deadline.expired():
        return res
    if fts_hits is None:
        expr = fts_expression(ws, config, conn)
        fts_hits = kq.fts_match(conn, expr, limit=r.fts_limit, kinds=kinds) if expr and r.fts_limit else []
    for n in [h for h in fts_hits if kinds is None or h["node_kind"] in kinds][:r.fts_limit]:
        res.add(n, "fts5_keyword")
    if r.use_vectors and r.vector_limit and (deadline is None or not deadline.expired()):
        for n in _vector_nodes(conn, config, request, r.vector_limit):
            if kinds is None or n["node_kind"] in kinds:
                res.add(n, "vector_similarity")
    return res


def _vector_nodes(conn: apsw.Connection, config: Config, text: str, k: int) -> list[dict[str, Any]]:
    from kenning.knowledge.vectors import SPACE
    from kenning.llm.index import VectorIndex

    try:
        hits = VectorIndex(conn, config).search(text, k, space=SPACE)
    except Exception:  # no index or no model: the vector tier is optional (§14.4 tier 2)
        return []
    ids = [h.item_id for h in hits]
    found = kq.nodes_by_ids(conn, ids, live=True)
    return [found[i] for i in ids if i in found]
