"""`why` for a question in plain words ("where do I live?", "what do I think about remote work?"), after the seed's
exact resolvers found nothing (W34): four lanes over the ledger, fused by reciprocal rank.

* **predicate** — the predicate index: a content word that is a predicate's word ("live" ~ lives_in) brings every
  belief with that predicate;
* **entity** — the entity index: a name, alias or lexicon term in the question ("my partner", "Sam") brings the
  beliefs whose subject or object is that entity (and, when the question also names a predicate, that predicate);
* **fts** — the ledger's FTS over statement/subject/predicate/object with the stopwords out and each word as a
  prefix of its stem ("working" finds "work"), all words first, then any;
* **vector** — the belief statements' vectors (space ``beliefs``, the one embedder) above the model's floor
  (``beliefs.why.vector_min_score``), so "vegetarian" finds "I do not eat meat".

Nothing above the floors means nothing matches: the answer says so instead of returning noise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import apsw

from kenning.config import Config
from kenning.store import beliefs as sql

_WORD = re.compile(r"\w+", re.UNICODE)
SPACE = "beliefs"
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A crude English stem, enough to meet a predicate's word ("lives"/"living"/"live" → "liv")."""
    w = word.casefold()
    for suf, rep in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3 and not w.endswith("ss"):
            w = w[: len(w) - len(suf)] + rep
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_ME = {"i", "me", "myself", "i'm", "im"}


def about_me(query: str) -> bool:
    """"where do I live?" asks about you, not about everyone who lives somewhere ("my sister" is someone else)."""
    return any(w.casefold() in _ME for w in re.findall(r"[\w']+", query))


def self_subjects(config: Config) -> set[str]:
    return {"SELF", config.self_beliefs.ledger.subject}


def content_words(query: str, config: Config) -> list[str]:
    stop = set(config.retrieval.fts.stopwords) | set(config.beliefs.why.question_words)
    return list(dict.fromkeys(w for w in (m.casefold() for m in _WORD.findall(query)) if w not in stop))


@dataclass
class Lanes:
    """belief_id → (lane, rank) per lane, and the fused order."""

    found: dict[str, list[str]] = field(default_factory=dict)      # lane -> ranked belief ids
    predicates: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    all_words: bool = False          # the words lane matched every content word

    def fused(self, k: int) -> list[tuple[str, float, str]]:
        """(belief_id, score, first lane that found it), best first; ties by id. When every content word
        matched somewhere, the predicate lane only ranks ("where does my sister live" is about the sister, not
        about everyone's home)."""
        score: dict[str, float] = {}
        first: dict[str, str] = {}
        for lane, ids in self.found.items():
            for rank, bid in enumerate(ids, 1):
                score[bid] = score.get(bid, 0.0) + 1.0 / (k + rank)
                first.setdefault(bid, lane)
        if self.all_words:
            keep = set(self.found.get("fts", [])) | set(self.found.get("vector", [])) | set(self.found.get("entity", []))
            score = {b: s for b, s in score.items() if b in keep}
        return sorted(((b, s, first[b]) for b, s in score.items()), key=lambda t: (-t[1], t[0]))


def predicate_lane(conn: apsw.Connection, ws: str, words: list[str]) -> list[str]:
    """Predicates whose words meet a content word (stem equality, words of 3+ letters)."""
    stems = {stem(w) for w in words if len(w) >= 3}
    out = []
    for p in sql.workspace_predicates(conn, ws):
        parts = [t for t in re.split(r"[_\W]+", p.casefold()) if len(t) >= 3]
        if any(stem(t) in stems for t in parts):
            out.append(p)
    return out


def entity_names(conn: apsw.Connection, query: str, config: Config) -> list[str]:
    """Canonical names of the entities the question names, through the search index's name table (canonical
    names, aliases, lexicon terms; `kenning.retrieve`'s entity lane reads the same): "my partner" → "Sam"."""
    from kenning.detect.keys import norm_name
    from kenning.store import search as search_sql

    stop = set(config.retrieval.fts.stopwords) | set(config.beliefs.why.question_words)
    words = _WORD.findall(query)
    grams = set()
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            g = norm_name(" ".join(words[i:i + n]))
            if len(g) >= 2 and not (n == 1 and g in stop):
                grams.add(g)
    if not grams:
        return []
    try:
        found = search_sql.entities_named(conn, sorted(grams))
    except apsw.SQLError:
        return []
    return sorted({r["canonical_name"] for r in found if r["canonical_name"]} - {"SELF"})


def fts_match(words: list[str], any_word: bool) -> str | None:
    terms = []
    for w in words:
        s = stem(w)
        terms.append(f'"{s}"*' if len(s) >= 3 else f'"{w}"')
    if not terms:
        return None
    return (" OR " if any_word else " AND ").join(terms)


def vector_floor(config: Config, model_id: str) -> float:
    floors = config.beliefs.why.vector_min_score
    short = model_id.split(":", 1)[-1].split("@", 1)[0]
    for key in (model_id, short):
        if key in floors:
            return float(floors[key])
    from kenning.llm.thresholds import thresholds_for

    return float(thresholds_for(config, model_id).no_match)


def vector_lane(conn: apsw.Connection, config: Config, ws: str, query: str, limit: int,
                strict: bool = False) -> list[str]:
    """Belief ids whose statement vector is close enough to the question's (nothing when none are indexed).
    ``strict`` (the other lanes found something): only what the model calls possibly the same claim (at least
    its calibrated no_match) joins them, so meaning adds paraphrases without adding neighbours."""
    from kenning.llm.errors import ModelLayerError
    from kenning.llm.index import VectorIndex

    if not config.beliefs.why.vectors or not config.retrieval.vector.enabled:
        return []
    try:
        idx = VectorIndex(conn, config)
        table = idx.active()
        if table is None:
            return []
        floor = vector_floor(config, table["model_id"])
        if strict:
            floor = max(floor, idx.thresholds().no_match)
        hits = idx.search(query, k=limit, space=SPACE, kinds=[ws], min_score=floor)
    except (ModelLayerError, apsw.Error):
        return []
    return [h.item_id for h in hits]


def search(conn: apsw.Connection, config: Config, ws: str, query: str, limit: int) -> Lanes:
    words = content_words(query, config)
    lanes = Lanes()
    if words:
        preds = predicate_lane(conn, ws, words)
        if preds:
            lanes.predicates = preds
            lanes.found["predicate"] = sql.belief_ids_with_predicates(conn, ws, preds, limit)
        names = entity_names(conn, query, config)
        if names:
            lanes.entities = names
            about = sql.belief_ids_about(conn, ws, names, preds, limit)
            if about:
                lanes.found["entity"] = about
        for any_word in (False, True):
            if any_word and (len(words) < 2 or not config.beliefs.why.fts_any_fallback):
                break
            match = fts_match(words, any_word)
            ids = sql.belief_ids_by_fts(conn, ws, match, limit) if match else []
            if ids:
                lanes.found["fts"] = ids
                lanes.all_words = not any_word and len(words) > 1
                break
    vec = vector_lane(conn, config, ws, query, limit, strict=bool(lanes.found))
    if vec:
        lanes.found["vector"] = vec
    return lanes


def index_statements(conn: apsw.Connection, config: Config, ws: str, items: list[tuple[str, str]],
                     warn: Any = None, clock: Any = None) -> int:
    """Keep the ``beliefs`` vector space in step with published statements (item id = belief id, kind =
    workspace). A model that cannot load leaves the lane empty with a warning; publishing never fails on it."""
    from kenning.llm.errors import ModelLayerError
    from kenning.llm.index import VectorIndex

    if not config.beliefs.why.vectors or not config.retrieval.vector.enabled or not items:
        return 0  # vectors off for the vault (retrieval.vector.enabled) means none anywhere
    try:
        # the run's clock: same input + frozen clock ⇒ identical vector rows
        return VectorIndex(conn, config, clock=clock).upsert(SPACE, [(bid, text, ws) for bid, text in items])
    except ModelLayerError as e:
        if warn is not None:
            warn("BELIEF_VECTORS_SKIPPED", f"belief statements were not embedded ({e}); `why` finds them by words only")
        return 0


def drop_statements(conn: apsw.Connection, config: Config, ids: list[str], clock: Any = None) -> None:
    from kenning.llm.errors import ModelLayerError
    from kenning.llm.index import VectorIndex

    if not config.beliefs.why.vectors or not ids:
        return
    try:
        VectorIndex(conn, config, clock=clock).delete(SPACE, ids)
    except ModelLayerError:
        pass
