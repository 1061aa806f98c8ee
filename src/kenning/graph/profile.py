"""The temporal profile (seed 001 §6.6): SELF → profile → monthly windows → category clusters → members.

T0 resolves the focal entities, T1 partitions their assertions into aligned windows, T2 scores each member
(Entity or Value) inside its window, T3 classifies members by the tier chain — keyword votes (tier 1), seeded
predicate embeddings (tier 2), a seeded multi-run LLM with consensus (tier 3, only when the model was asked for;
``graph.tiers``) — or leaves them ``unclassified`` (tier 0), T4 writes the nodes and the navigation edges,
including the "what mattered" shortcuts (WINDOW_TOP_MEMBER, WINDOW_TOP_CLUSTER) and the state changes of each
window.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from kenning.config.loader import load_yaml
from kenning.graph.build import GraphBuilder, object_text, sha, value_source
from kenning.sources.timestamps import format_utc, parse_utc


class ProfileConfigError(ValueError):
    pass


def load_profile_config(name_or_path: str) -> dict[str, Any]:
    p = Path(name_or_path).expanduser()
    try:
        text = p.read_text(encoding="utf-8") if p.is_file() else \
            resources.files("kenning.graph").joinpath(name_or_path).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as e:
        raise ProfileConfigError(f"temporal profile config {name_or_path!r} not found (§6.6.1 requires it when "
                                 f"profiles are enabled)") from e
    data = (load_yaml(text) or {}).get("temporal_profile_config")
    if not isinstance(data, dict) or not data.get("categories"):
        raise ProfileConfigError(f"{name_or_path}: needs temporal_profile_config.categories")
    keys = [c["key"] for c in data["categories"]]
    if "unclassified" not in keys:
        raise ProfileConfigError(f"{name_or_path}: the category list must contain 'unclassified'")
    for section in ("strong_rule_keywords", "value_keywords", "predicate_cluster_categories"):
        for k in (data.get(section) or {}):
            if k not in keys:
                raise ProfileConfigError(f"{name_or_path}: {section} for unknown category {k!r}")
    return data


def window_bounds(t: dt.datetime, granularity: str) -> tuple[dt.datetime, dt.datetime]:
    if granularity == "year":
        start = dt.datetime(t.year, 1, 1, tzinfo=dt.timezone.utc)
        return start, start.replace(year=t.year + 1)
    months = 3 if granularity == "quarter" else 1
    m0 = ((t.month - 1) // months) * months + 1
    start = dt.datetime(t.year, m0, 1, tzinfo=dt.timezone.utc)
    m1 = m0 + months
    end = dt.datetime(t.year + (m1 - 1) // 12, (m1 - 1) % 12 + 1, 1, tzinfo=dt.timezone.utc)
    return start, end


def resolve_focal(data: dict[str, Any], pcfg: Any) -> tuple[list[str], str]:
    """§6.6.2 T0."""
    if pcfg.focal_entities:
        return list(pcfg.focal_entities), "configured"
    selves = sorted(e["entity_id"] for e in data["entities"] if e["entity_key"] == "__SELF__"
                    and e["entity_type"] == "PERSON" and e["status"] == "active")
    if selves and any(a["subject_entity_id"] == selves[0] for a in data["assertions"]):
        return [selves[0]], "self" if len(selves) == 1 else "self_lowest_id"
    counts = Counter(a["subject_entity_id"] for a in data["assertions"]
                     if a["status"] in pcfg.allowed_assertion_statuses and a["valid_from_utc"])
    if not counts:
        return [], "none"
    best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return [best], "most_assertions"


class Classifier:
    def __init__(self, cfg: dict[str, Any]):
        self.order = [c["key"] for c in cfg["categories"]]
        self.labels = {c["key"]: c.get("label", c["key"]) for c in cfg["categories"]}
        self.kw = {k: [str(w).lower() for w in v] for k, v in (cfg.get("strong_rule_keywords") or {}).items()}
        self.vkw = {k: [str(w).lower() for w in v] for k, v in (cfg.get("value_keywords") or {}).items()}
        self.modality = dict(cfg.get("modality_votes") or {})

    def vote(self, label: str) -> str | None:
        """The first category with a keyword starting at a token of the label ("likes" is in "likes" and
        "has_likes", not in "dislikes": T32)."""
        for cat in self.order:
            if any(label.startswith(w) or "_" + w in label for w in self.kw.get(cat, [])):
                return cat
        return None

    def classify(self, evidence: list[dict], value_text: str | None) -> tuple[str, int, float, list[str]]:
        votes: Counter = Counter()
        for a in evidence:
            c = self.vote(a["predicate_label"])
            if c:
                votes[c] += 1
            m = self.modality.get(a["modality"])
            if m:
                votes[m] += 0.5
        if value_text:
            low = value_text[:200].lower()
            for cat in self.order:
                if any(w in low for w in self.vkw.get(cat, [])):
                    votes[cat] += 1
                    break
        preds = sorted({a["predicate_label"] for a in evidence})
        if not votes:
            return "unclassified", 0, 0.0, preds
        best = sorted(votes.items(), key=lambda kv: (-kv[1], self.order.index(kv[0])))[0]
        return best[0], 1, round(best[1] / sum(votes.values()), 6), preds


def build_profiles(g: GraphBuilder, data: dict[str, Any], pcfg: Any, *, config: Any = None, ctx: Any = None,
                   embedder: Any = None) -> dict[str, Any]:
    """T0–T4. ``config`` (the whole Config) enables tier 2 (the embedder); ``ctx`` (stage 6's StageContext) enables
    tier 3 under the runner's model rule (M30, A32). Without them: tier 1 only."""
    stats: Counter = Counter()
    cfg = load_profile_config(pcfg.temporal_profile_config)
    clf = Classifier(cfg)
    focal, mode = resolve_focal(data, pcfg)
    w_f, w_r, w_c = (pcfg.salience_weights.get(k, 0.0) for k in ("frequency", "recency", "confidence"))
    if pcfg.include_category_nodes:
        for key in clf.order:
            g.node("SemanticCategory", key, clf.labels[key], {"category_key": key, "display_label": clf.labels[key]})
    by_id = {a["assertion_id"]: a for a in data["assertions"]}
    etype = {e["entity_id"]: e["entity_type"] for e in data["entities"]}
    # T1–T3 for every focal entity first (tiers 2 and 3 work in batches), then T4
    profiles = []
    for eid in focal:
        if not g.has("Entity", eid):
            stats["focal_entity_missing"] += 1
            continue
        mine = [a for a in data["assertions"] if a["subject_entity_id"] == eid and a["valid_from_utc"]
                and a["status"] in pcfg.allowed_assertion_statuses
                and (not pcfg.user_grounded_only or a["asserted_role"] == "user" or a["has_user_corroboration"])]
        windows: dict[tuple, list[dict]] = defaultdict(list)
        for a in mine:
            s, e = window_bounds(parse_utc(a["valid_from_utc"]), pcfg.granularity)
            windows[(s, e)].append(a)
        kept = sorted(k for k, v in windows.items() if len(v) >= pcfg.window_min_assertions)
        stats["windows_dropped_small"] += len(windows) - len(kept)
        if not kept:
            continue
        wins = []
        for ws, we in kept:
            was = windows[(ws, we)]
            members: dict[str, dict] = {}
            for a in sorted(was, key=lambda a: a["assertion_id"]):
                if a["object_entity_id"]:
                    key, ntype, src = "E:" + a["object_entity_id"], "Entity", a["object_entity_id"]
                    if a["object_entity_id"] == eid or not g.has("Entity", src):
                        continue
                elif a["object_value_type"] and pcfg.include_value_members_in_profiles:
                    src = value_source(a["object_value_type"], a["object_value"])
                    key, ntype = "V:" + src, "Value"
                else:
                    continue
                label = object_text(a) or ""
                if ntype == "Value" and a["object_value_type"] in ("number", "boolean"):
                    pred = a["predicate_label"]
                    label = (f"{label} {pred[len('number_of_'):].replace('_', ' ')}" if pred.startswith("number_of_")
                             else f"{pred.replace('_', ' ')}: {label}")    # "2 children"
                m = members.setdefault(key, {"node_type": ntype, "source_id": src, "label": label,
                                             "entity_type": etype.get(src) if ntype == "Entity" else None,
                                             "evidence": [],
                                             "value_text": object_text(a) if ntype == "Value" else None})
                m["evidence"].append(a)
            scored = []
            for key, m in members.items():
                ev = m["evidence"]
                freq = len(ev) / len(was)
                rec = sum(0.5 ** (max(0.0, (we - parse_utc(a["valid_from_utc"])).total_seconds() / 86400)
                                  / pcfg.recency_halflife_days) for a in ev) / len(ev)
                conf = sum(a["confidence_final"] for a in ev) / len(ev)
                sal = round(w_f * freq + w_r * rec + w_c * conf, 6)
                if sal <= 0:
                    continue
                cat, tier, cconf, preds = clf.classify(ev, m["value_text"])
                scored.append({**m, "key": key, "salience": sal, "frequency": round(freq, 6),
                               "recency": round(rec, 6), "confidence": round(conf, 6), "category": cat, "tier": tier,
                               "classification_confidence": cconf, "predicates": preds,
                               "node_id": g.node_id(m["node_type"], m["source_id"])})
            scored.sort(key=lambda m: (-m["salience"], m["node_id"]))
            wins.append((ws, we, was, scored))
        profiles.append((eid, kept, wins))
    _tier2(profiles, cfg, clf, pcfg, config, embedder, stats)
    _tier3(profiles, cfg, pcfg, ctx, stats)
    for eid, kept, wins in profiles:
        _emit(g, data, pcfg, clf, eid, kept, wins, mode, by_id, stats)
    stats["resolution_mode_" + mode] += 1
    return dict(stats)


def _unclassified(profiles: list) -> list[tuple[str, dict]]:
    return [(format_utc(ws)[:7], m) for _, _, wins in profiles for ws, _, _, scored in wins for m in scored
            if m["tier"] == 0]


def _tier2(profiles: list, cfg: dict, clf: Classifier, pcfg: Any, config: Any, embedder: Any, stats: Counter) -> None:
    """§6.6.5 tier 2 for the members tier 1 left without a vote (T31)."""
    todo = _unclassified(profiles)
    if not todo or config is None or not pcfg.enable_embedding_classification \
            or not cfg.get("predicate_cluster_categories"):
        return
    from kenning.graph.tiers import EmbeddingTier
    from kenning.llm.errors import ModelLayerError

    try:
        tier = EmbeddingTier(config, cfg, clf.order, embedder)
        tier.prepare([a["predicate_label"] for _, m in todo for a in m["evidence"]])
    except (ModelLayerError, ImportError, OSError) as e:       # no embedder: tiers 1 and 3 still run (T31)
        stats["embedding_tier_unavailable"] += 1
        stats["embedding_tier_error"] = str(e)[:200]
        return
    stats["embedding_tier_threshold"] = tier.threshold
    for _, m in todo:
        got = tier.classify(m["evidence"])
        if got:
            m["category"], m["tier"], m["classification_confidence"] = got[0], 2, got[1]


def _tier3(profiles: list, cfg: dict, pcfg: Any, ctx: Any, stats: Counter) -> None:
    """§6.6.5 tier 3 for the members tiers 1–2 left (T33); asked only by stage 4's rule (A32)."""
    from kenning.graph.tiers import LLMTier, llm_tier_mode

    todo = _unclassified(profiles)
    stats["llm_tier_mode"] = mode = llm_tier_mode(ctx)
    if not todo or mode == "none":
        return
    tier = LLMTier(ctx, cfg, cfg["categories"], stats)
    ok = False
    try:
        by_window: dict[str, list[dict]] = defaultdict(list)
        for label, m in todo:
            by_window[label].append(m)
        for label in sorted(by_window):
            got = tier.classify(label, by_window[label])
            for m in by_window[label]:
                if m["key"] in got:
                    m["category"], m["classification_confidence"] = got[m["key"]]
                    m["tier"] = 3
        ok = True
    finally:
        tier.close(ok)


def _emit(g: GraphBuilder, data: dict, pcfg: Any, clf: Classifier, eid: str, kept: list, wins: list, mode: str,
          by_id: dict, stats: Counter) -> None:
    """§6.6.6 T4: the profile, its windows and clusters, and the navigation edges."""
    total = sum(len(was) for _, _, was, _ in wins)
    prof_src = sha([eid, pcfg.granularity, pcfg.profile_version])
    first, last = format_utc(kept[0][0]), format_utc(kept[-1][1])
    pn = g.node("TemporalProfile", prof_src, f"{g.nodes[g.node_id('Entity', eid)][3]} by {pcfg.granularity}", {
        "entity_id": eid, "granularity": pcfg.granularity, "window_count": len(kept), "total_assertions": total,
        "date_range": [first, last], "profile_version": pcfg.profile_version, "resolution_mode": mode})
    g.edge("HAS_PROFILE", g.node_id("Entity", eid), pn, {"granularity": pcfg.granularity, "resolution_mode": mode})
    stats["temporal_profiles_generated"] += 1
    changes = _changes(data, eid, by_id)
    prev_w: str | None = None
    prev_clusters: dict[str, tuple[str, set]] = {}
    for idx, (ws, we, was, scored) in enumerate(wins):
        w_src = sha([eid, format_utc(ws), format_utc(we), pcfg.granularity])
        for m in scored:
            stats[f"classifications_tier{m['tier']}"] += 1
            stats[f"profile_members_{m['node_type']}"] += 1
        by_cat: dict[str, list[dict]] = defaultdict(list)
        for m in scored:
            by_cat[m["category"]].append(m)
        top = scored[:pcfg.window_top_n_members]
        w_changes = [c for c in changes if format_utc(ws) <= c["at"] < format_utc(we)]
        wn = g.node("TemporalWindow", w_src, format_utc(ws)[:7] if pcfg.granularity == "month"
                    else f"{format_utc(ws)[:10]}…{format_utc(we)[:10]}", {
            "entity_id": eid, "granularity": pcfg.granularity, "window_index": idx,
            "bounds": [format_utc(ws), format_utc(we)], "assertion_count": len(was), "cluster_count": len(by_cat),
            # T37: a member the month only denies ("I don't live in Berlin") reads "not Berlin"
            "top_members": [{"label": ("not " if all(a["polarity"] == "negative" for a in m["evidence"]) else "")
                             + m["label"], "node_type": m["node_type"], "salience": m["salience"],
                             "category_key": m["category"], "tier": m["tier"], "mentions": len(m["evidence"])}
                            for m in top],
            "changes": w_changes,
            "statuses": dict(sorted(Counter(a["status"] for a in was).items()))})
        stats["temporal_windows_generated"] += 1
        g.edge("HAS_WINDOW", pn, wn, {"window_index": idx})
        if prev_w is not None and pcfg.include_window_sequence_edges:
            g.edge("WINDOW_PRECEDES", prev_w, wn, {"granularity": pcfg.granularity})
        if pcfg.include_window_assertion_edges:
            for a in was:
                g.edge("WINDOW_INCLUDES", wn, g.node_id("Assertion", a["assertion_id"]))
        clusters = []
        cur_clusters: dict[str, tuple[str, set]] = {}
        for cat in clf.order:
            ms = by_cat.get(cat)
            if not ms:
                continue
            tier = max(m["tier"] for m in ms)
            c_src = sha([w_src, cat, tier])
            tiers = Counter(str(m["tier"]) for m in ms)
            cn = g.node("SemanticCluster", c_src, f"{clf.labels[cat]} {format_utc(ws)[:7]}", {
                "category_key": cat, "member_count": len(ms),
                "avg_salience": round(sum(m["salience"] for m in ms) / len(ms), 6),
                "avg_classification_confidence": round(sum(m["classification_confidence"] for m in ms) / len(ms),
                                                       6),
                "tier_distribution": dict(sorted(tiers.items())), "window_start_utc": format_utc(ws)})
            stats[f"semantic_clusters_{cat}"] += 1
            g.edge("HAS_CLUSTER", wn, cn)
            if pcfg.include_category_nodes:
                g.edge("CLUSTER_OF_CATEGORY", cn, g.node_id("SemanticCategory", cat))
            for rank, m in enumerate(ms, 1):
                g.edge("CLUSTER_CONTAINS", cn, m["node_id"], {
                    "rank": rank, "salience": m["salience"], "tier": m["tier"], "predicates": m["predicates"],
                    "classification_confidence": m["classification_confidence"]})
            clusters.append((round(sum(m["salience"] for m in ms), 6), cat, cn))
            cur_clusters[cat] = (cn, {m["key"] for m in ms})
            if pcfg.include_cluster_evolution_edges and cat in prev_clusters:
                pcn, pkeys = prev_clusters[cat]
                g.edge("EVOLVES_TO", pcn, cn, {"shared_members": len(pkeys & cur_clusters[cat][1])})
        if pcfg.include_window_top_edges:
            for rank, m in enumerate(top, 1):
                g.edge("WINDOW_TOP_MEMBER", wn, m["node_id"], {"rank": rank, "salience": m["salience"],
                                                               "member_node_type": m["node_type"],
                                                               "category_key": m["category"]})
                stats["window_top_edges_emitted"] += 1
            for rank, (score, cat, cn) in enumerate(sorted(clusters, key=lambda c: (-c[0], c[1]))
                                                    [:pcfg.window_top_n_clusters], 1):
                g.edge("WINDOW_TOP_CLUSTER", wn, cn, {"rank": rank, "score": score, "category_key": cat})
        if pcfg.include_member_evidence_edges:
            budget = pcfg.member_evidence_edge_cap_per_window
            for m in scored:
                for a in sorted(m["evidence"], key=lambda a: a["assertion_id"]):
                    if budget <= 0:
                        stats["member_evidence_edges_capped"] += 1
                        break
                    g.edge("MEMBER_EVIDENCED_BY", m["node_id"], g.node_id("Assertion", a["assertion_id"]), {
                        "window_start_utc": format_utc(ws), "window_end_utc": format_utc(we),
                        "granularity": pcfg.granularity, "mention_count_in_window": len(m["evidence"])})
                    budget -= 1
                    stats["member_evidence_edges_emitted"] += 1
        prev_w, prev_clusters = wn, cur_clusters


def _changes(data: dict[str, Any], eid: str, by_id: dict[str, dict]) -> list[dict]:
    """State changes of the focal entity, dated by valid time: a superseded state and its successor, an ended or
    negated one. Each lands in the window that holds its date."""
    out = []
    for a in data["assertions"]:
        if a["subject_entity_id"] != eid or not a["valid_to_utc"]:
            continue
        nxt = by_id.get(a["temporal_superseded_by_assertion_id"] or "")
        if nxt is not None and (a["status"] == "superseded" or (
                a["status"] == "negated" and nxt["valid_from_utc"] == a["valid_to_utc"])):
            # T35: a negated state a newer one closed first changed into it ("Berlin → Paris")
            n = by_id[a["temporal_superseded_by_assertion_id"]]
            out.append({"at": a["valid_to_utc"], "kind": "superseded", "predicate": a["predicate_label"],
                        "from": object_text(a), "to": object_text(n), "assertion_id": a["assertion_id"],
                        "by": n["assertion_id"]})
        elif a["status"] == "negated":
            out.append({"at": a["valid_to_utc"], "kind": "ended", "predicate": a["predicate_label"],
                        "from": object_text(a), "to": None, "assertion_id": a["assertion_id"],
                        "by": a["negated_by_assertion_id"] or a["retracted_by_retraction_id"]})
    out.sort(key=lambda c: (c["at"], c["assertion_id"]))
    # T50: every mention of a state closes with it (T43); the window lists the change once, with its mentions
    seen: dict[tuple, dict] = {}
    for c in out:
        k = (c["at"], c["kind"], c["predicate"], c["from"], c["to"])
        if k in seen:
            seen[k]["mentions"] += 1
        else:
            seen[k] = {**c, "mentions": 1}
    return list(seen.values())
