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

_EVIDENCE_RANK = {"shared_alias": 0, "typo": 1, "name_part": 2}
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
