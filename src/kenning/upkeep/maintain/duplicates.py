"""Deterministic near-duplicate evidence (seed 003 §42 "near-dup name/aliases → merge queue"; decisions G34, G61).

Evidence, all within one node kind:
- ``shared_alias``: both nodes carry the same normalized alias — the only evidence that may fold without a model
  (§42: without a model only exact-alias folds);
- ``typo``: the normalized names are within a small edit distance (rapidfuzz ratio ≥ typo_min_similarity, names
  of at least typo_min_length characters), unless they differ only where each has a different known given name
  ("Alexander" / "Alexandra": two people);
- ``nickname``: one given name under two forms, by a bundled table ("Bob Hill" / "Robert Hill", "Bob" / "Robert
  Hill");
- ``name_part``: a one-word person name that is the first or last name of a longer one ("Hill" / "Robert Hill").
Everything but ``shared_alias`` goes to the merge queue (one click merges it through the writer) and only with
three guards: the two share context (a common neighbour — not the vault owner or a hub — or thread; look-alike names with nothing in common
around them are different people far more often than one: at 100k synthetic nodes, 8,336 typo-like pairs of which
10 were real); a short name must pair with exactly one node around it (a "Daniel" beside two Daniels is neither);
and no identity attribute (``maintain.cleanup.identity_attributes``: e-mail, birthday, entity type …) differs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import apsw
from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from kenning.config import Config
from kenning.knowledge.writer import normalize_alias
from kenning.store import knowledge_query as kq
from kenning.store import upkeep as usql
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.nicknames import given_names_of, is_given_name, same_given_name

_EVIDENCE_RANK = {"shared_alias": 0, "typo": 1, "nickname": 2, "name_part": 3, "embedding": 4}
_SHORT_NAME_EVIDENCE = ("nickname", "name_part")
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


def kept_apart(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """A person said these two are different (G67): the verdict lives on the nodes, so a rebuild from the event
    log keeps it."""
    return (b["id"] in ((a.get("payload") or {}).get("kept_apart_from") or ())
            or a["id"] in ((b.get("payload") or {}).get("kept_apart_from") or ()))


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
                if x < y and texts[x] != texts[y] and not _different_given_names(texts[x], texts[y]):
                    pending.append((kind, ids[x], ids[y], "typo", float(sims[dx, y]) / 100,
                                    f"names differ by a typo ({texts[x]!r} / {texts[y]!r}, similarity "
                                    f"{sims[dx, y]})"))

    pending += _name_pairs(names, norm)
    ctx = msql.context_of(conn, {x for p in pending for x in p[1:3]})
    # the vault owner and hubs (more edges than backlinks.hub_threshold) touch nearly everyone: being linked to
    # "me" or to a big employer is no shared context (G61)
    around = {c[2:] for p in pending for c in ctx[p[1]] & ctx[p[2]] if c.startswith("n:")}
    hub_cap = config.backlinks.hub_threshold
    not_context = {"n:" + h for h, d in kq.capped_degrees(conn, sorted(around), hub_cap + 1).items() if d > hub_cap}
    owner = usql.owner_node(conn)
    if owner:
        not_context.add("n:" + owner)
    shared_ok = []
    for kind, x, y, evidence, score, reason in pending:
        shared = (ctx[x] & ctx[y]) - {"n:" + x, "n:" + y} - not_context
        if shared:
            shared_ok.append((kind, x, y, evidence, score, f"{reason}; {len(shared)} shared neighbour(s)/thread(s)"))
    # a short name that could be two people around it ("Chris" beside Christopher Lane and Christina Lane, or
    # "Daniel" beside two Daniels) is evidence of neither (G61)
    partners: dict[str, set[str]] = defaultdict(set)
    for _, x, y, evidence, *_ in shared_ok:
        if evidence in _SHORT_NAME_EVIDENCE:
            partners[x].add(y)
            partners[y].add(x)
    payloads = msql.payloads_of(conn, {x for p in shared_ok for x in p[1:3]})
    for kind, x, y, evidence, score, reason in shared_ok:
        if evidence in _SHORT_NAME_EVIDENCE and (len(partners[x]) > 1 or len(partners[y]) > 1):
            continue
        if conflicting_attributes(payloads.get(x) or {}, payloads.get(y) or {}, cfg.identity_attributes):
            continue
        add(kind, x, y, evidence, score, reason)
    return sorted(found.values(), key=lambda p: (_EVIDENCE_RANK[p.evidence], -p.score, p.a, p.b))


def _different_given_names(a: str, b: str) -> bool:
    """"alexander novak" / "alexandra novak", "marco rossi" / "mario rossi": the names differ only where both sides
    have a different known given name — two people (siblings, colleagues), not a typo (G61)."""
    ta, tb = a.split(), b.split()
    if len(ta) != len(tb):
        return False
    diff = [(x, y) for x, y in zip(ta, tb) if x != y]
    return bool(diff) and all(is_given_name(x) and is_given_name(y) and not same_given_name(x, y) for x, y in diff)


def _name_pairs(names: dict[str, dict], norm: dict[str, str]) -> list[tuple[str, str, str, str, float, str]]:
    """People's names that can be one person (G61), before the context checks:
    - ``nickname``: the same surname, first names one given name ("Bob Hill" / "Robert Hill", bundled table);
    - ``nickname`` / ``name_part``: a one-word name that is the other's first name, a short form of it, or its
      last name ("Bob" or "Robert" or "Hill" / "Robert Hill")."""
    out: list[tuple[str, str, str, str, float, str]] = []
    by_root_tail: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    by_first: dict[str, list[str]] = defaultdict(list)
    by_last: dict[str, list[str]] = defaultdict(list)
    singles: list[str] = []
    for i, r in names.items():
        if r["node_kind"] != "world_entity":
            continue
        toks = norm[i].split()
        if len(toks) == 1 and (len(toks[0]) >= 3 or given_names_of(toks[0])):
            singles.append(i)
        elif 2 <= len(toks) <= 4:
            by_first[toks[0]].append(i)
            by_last[toks[-1]].append(i)
            for root in given_names_of(toks[0]) or {toks[0]}:
                by_root_tail[(root, tuple(toks[1:]))].append(i)
            for root in given_names_of(toks[0]):
                if root != toks[0]:
                    by_first["~" + root].append(i)  # reachable from another form of the same given name
    seen: set[tuple[str, str]] = set()
    for (_, tail), ids in sorted((k, v) for k, v in by_root_tail.items() if len(v) > 1):
        ids = sorted(set(ids))
        for k, x in enumerate(ids):
            for y in ids[k + 1:]:
                fx, fy = norm[x].split()[0], norm[y].split()[0]
                if (x, y) not in seen and same_given_name(fx, fy):
                    seen.add((x, y))
                    out.append(("world_entity", x, y, "nickname", 0.6,
                                f"{fx!r} and {fy!r} are one given name, same surname {' '.join(tail)!r}"))
    for i in sorted(singles):
        t = norm[i]
        cands: dict[str, tuple[str, float, str]] = {}
        for o in by_last.get(t, []):
            cands[o] = ("name_part", 0.5, f"{t!r} is the last name of {norm[o]!r}")
        for o in by_first.get(t, []):
            cands[o] = ("name_part", 0.5, f"{t!r} is the first name of {norm[o]!r}")
        for root in given_names_of(t):
            for o in by_first.get(root, []) + by_first.get("~" + root, []):
                if norm[o].split()[0] != t:
                    cands.setdefault(o, ("nickname", 0.55, f"{t!r} and {norm[o].split()[0]!r} are one given "
                                                           f"name ({norm[o]!r})"))
        for o, (evidence, score, reason) in sorted(cands.items()):
            if o != i:
                out.append(("world_entity", i, o, evidence, score, reason))
    return out


def conflicting_attributes(pa: dict, pb: dict, keys) -> str | None:
    """The first identity attribute both payloads carry with different values (an e-mail, a birthday, the entity
    type …): two records that say so are two people, whatever their names (G61)."""
    for k in keys:
        va, vb = pa.get(k), pb.get(k)
        if va not in (None, "") and vb not in (None, "") and str(va).casefold() != str(vb).casefold():
            return k
    return None


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
