"""Deterministic near-duplicate evidence (seed 003 §42 "near-dup name/aliases → merge queue"; decision G34).

Three kinds of evidence, all within one node kind:
- ``shared_alias``: both nodes carry the same normalized alias — the only evidence that may fold without a model
  (§42: without a model only exact-alias folds);
- ``typo``: the normalized names are within a small edit distance (rapidfuzz ratio ≥ typo_min_similarity, names
  of at least typo_min_length characters) and the two share context (a common neighbour or thread) — review only;
- ``name_part``: a one-word person name is the first or last word of exactly one longer name of the same kind
  ("Smith" / "Robert Smith"), with shared context — review only.
Look-alike names with nothing around them in common are two different people far more often than one (at 100k
synthetic nodes, 8,336 typo-like pairs of which 10 were real), so shared context is required.
Nicknames ("Bob" / "Robert") have no deterministic evidence and are left to the model or a person."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import apsw
from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from kenning.config import Config
from kenning.knowledge.writer import normalize_alias
from kenning.store import upkeep_maintain as msql

_EVIDENCE_RANK = {"shared_alias": 0, "typo": 1, "name_part": 2, "embedding": 3}
MAX_EMBEDDING_QUERIES = 2000  # recently updated nodes looked up in the vector space per run
_MAX_ALIAS_GROUP = 10  # an alias shared by more nodes ("mom", "the team") is not evidence of identity


@dataclass(frozen=True)
class Pair:
    kind: str
    a: str  # the smaller id
    b: str
    evidence: str
    score: float
    reason: str
    name_a: str
    name_b: str


def propose_pairs(conn: apsw.Connection, config: Config) -> list[Pair]:
    cfg = config.maintain.cleanup
    names = {r["id"]: r for r in msql.active_names(conn)}
    found: dict[tuple[str, str], Pair] = {}

    pending: list[tuple[str, str, str, str, float, str]] = []  # typo/name-part pairs, checked for context below

    def add(kind: str, x: str, y: str, evidence: str, score: float, reason: str) -> None:
        a, b = sorted((x, y))
        old = found.get((a, b))
        if old is None or _EVIDENCE_RANK[evidence] < _EVIDENCE_RANK[old.evidence]:
            found[(a, b)] = Pair(kind, a, b, evidence, round(score, 4), reason, names[a]["canonical_name"],
                                 names[b]["canonical_name"])

    for g in msql.shared_alias_groups(conn):
        ids = [i for i in g["node_ids"] if i in names]
        if len(ids) > _MAX_ALIAS_GROUP:
            continue
        for i, x in enumerate(ids):
            for y in ids[i + 1:]:
                add(g["node_kind"], x, y, "shared_alias", 1.0, f"both are called {g['normalized_alias']!r}")

    # typo distance, compared within blocks (same kind and same first or last three characters)
    norm = {i: normalize_alias(r["canonical_name"]) for i, r in names.items()}
    blocks: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for i, r in names.items():
        n = norm[i]
        if len(n) >= cfg.typo_min_length:
            blocks[(r["node_kind"], "head", n[:3])].append(i)
            blocks[(r["node_kind"], "tail", n[-3:])].append(i)
    for (kind, _, _), ids in sorted(blocks.items()):
        if len(ids) < 2:
            continue
        ids = sorted(ids)
        texts = [norm[i] for i in ids]
        for start in range(0, len(ids), 500):  # row chunks keep a big block's matrix small
            sims = cdist(texts[start:start + 500], texts, scorer=fuzz.ratio, score_cutoff=cfg.typo_min_similarity,
                         dtype="uint8", workers=1)
            for dx, y in zip(*sims.nonzero()):
                x = start + int(dx)
                if x < y and texts[x] != texts[y]:
                    pending.append((kind, ids[x], ids[y], "typo", float(sims[dx, y]) / 100,
                                    f"names differ by a typo ({texts[x]!r} / {texts[y]!r}, similarity "
                                    f"{sims[dx, y]})"))

    # one-word names that are part of exactly one longer name of the same kind
    parts: dict[tuple[str, str], list[str]] = defaultdict(list)
    singles: list[str] = []
    for i, r in names.items():
        if r["node_kind"] != "world_entity":
            continue
        toks = norm[i].split()
        if len(toks) == 1 and len(toks[0]) >= 3:
            singles.append(i)
        elif 2 <= len(toks) <= 4:
            for t in {toks[0], toks[-1]}:
                parts[(r["node_kind"], t)].append(i)
    for i in sorted(singles):
        owners = parts.get((names[i]["node_kind"], norm[i]), [])
        if len(owners) == 1:
            pending.append((names[i]["node_kind"], i, owners[0], "name_part", 0.5,
                            f"{norm[i]!r} is part of {norm[owners[0]]!r} (and of no other name)"))
    ctx = msql.context_of(conn, {x for p in pending for x in p[1:3]})
    for kind, x, y, evidence, score, reason in pending:
        shared = (ctx[x] & ctx[y]) - {"n:" + x, "n:" + y}
        if shared:
            add(kind, x, y, evidence, score, f"{reason}; {len(shared)} shared neighbour(s)/thread(s)")
    return sorted(found.values(), key=lambda p: (_EVIDENCE_RANK[p.evidence], -p.score, p.a, p.b))


def embedding_pairs(conn: apsw.Connection, config: Config, since: str | None) -> list[Pair]:
    """§42 [EMB]: nodes updated since ``since`` against active nodes of the same kind in the node vector space,
    paired when the cosine distance is under the kind's threshold (``maintain.folding.cosine_distance``). Empty
    when the vault has no node vectors (or another model made them). Used only when a model gives verdicts."""
    from kenning.knowledge.vectors import SPACE, node_text
    from kenning.llm.embed import get_embedder
    from kenning.llm.index import VectorIndex
    from kenning.store import vectors as vsql

    limits = config.maintain.folding.cosine_distance
    table = vsql.active_table(conn)
    if table is None or not limits:
        return []
    recent = msql.nodes_updated_since(conn, since, sorted(limits), MAX_EMBEDDING_QUERIES)
    if not recent:
        return []
    emb = get_embedder(config, table["model_id"], dimension=int(table["dimension"]))
    if emb.model_id != table["model_id"]:
        return []
    vecs = emb.embed([node_text(n) for n in recent])
    idx = VectorIndex(conn, config)
    names = {r["id"]: r for r in msql.active_names(conn)}
    found: dict[tuple[str, str], Pair] = {}
    for n, v in zip(recent, vecs):
        dist = limits[n["node_kind"]]
        for h in idx.search(v, 10, space=SPACE, kinds=[n["node_kind"]], min_score=1 - dist,
                            model_id=table["model_id"]):
            if h.item_id == n["id"] or h.item_id not in names:
                continue
            a, b = sorted((n["id"], h.item_id))
            found.setdefault((a, b), Pair(n["node_kind"], a, b, "embedding", round(float(h.score), 4),
                                          f"cosine distance {1 - h.score:.3f} < {dist:g} ({n['node_kind']})",
                                          names[a]["canonical_name"], names[b]["canonical_name"]))
    return sorted(found.values(), key=lambda p: (-p.score, p.a, p.b))
