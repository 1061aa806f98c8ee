"""Fit the per-model similarity thresholds (seed 000 §5.3) on labelled belief-statement pairs.

The bundled set (``llm/data/calibration_pairs.jsonl``) holds 360 first-person pairs, 120 of each label:
``paraphrase`` (the same belief in other words), ``different`` (another belief, half of them on the same topic)
and ``opposite`` (the same topic with the opposite polarity). Each pair is in split ``fit`` (2/3) or ``test``.

The three decisions and how each threshold is fitted on the ``fit`` split (``calibration.*`` in config):
- **match** (resolver: same belief when sim ≥ t): positives = paraphrase, negatives = different.
  t = the lowest threshold whose precision reaches ``match_min_precision``; if none does, 0.999 (only
  near-identical texts match automatically: an automatic merge must err towards not merging).
- **no_match** (resolver: certainly a new belief when sim < t): t = the highest threshold that keeps
  ``no_match_min_recall`` of paraphrases at or above it. Precision/recall are reported for "a different belief"
  predicted by sim < t (paraphrase vs different).
- **tension** (conflict engine: sim > t between opposite-polarity beliefs): positives = opposite, negatives =
  different (paraphrases share polarity, so never reach this check). t = the lowest threshold whose precision
  reaches ``tension_min_precision`` (else 0.999, as for match).
Opposite-polarity pairs are left out of match/no_match: in seed 000 polarity is a field of its own (§4.7 sets
``polarity=deny``; §4.15 compares it), and embeddings cannot see it — opposites score *higher* than paraphrases
with both MiniLM and hashing. The report still shows how many opposites reach the match threshold
(``opposites_matched``), i.e. what a resolver that ignored polarity would merge wrongly.
If the fitted no_match exceeds match it is lowered to match (no uncertain band). Metrics are reported on the fit
split, the held-out test split and all pairs, next to the seed's values (0.90 / 0.75 / 0.88).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from kenning.config import Config
from kenning.llm.embed import get_embedder

LABELS = ("paraphrase", "different", "opposite")
SEED_THRESHOLDS = {"match": 0.90, "no_match": 0.75, "tension": 0.88}


@dataclass(frozen=True)
class Pair:
    id: str
    label: str
    a: str
    b: str
    split: str


def load_pairs(path: str | Path | None = None) -> list[Pair]:
    if path is None:
        text = resources.files("kenning.llm").joinpath("data", "calibration_pairs.jsonl").read_text(encoding="utf-8")
        where = "the bundled calibration_pairs.jsonl"
    else:
        text = Path(path).read_text(encoding="utf-8")
        where = str(path)
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            p = Pair(str(d["id"]), d["label"], d["a"], d["b"], d.get("split", "fit"))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{where} line {n}: not a pair record ({e})") from e
        if p.label not in LABELS:
            raise ValueError(f"{where} line {n}: label {p.label!r} is not one of {', '.join(LABELS)}")
        pairs.append(p)
    return pairs


def pair_similarities(embed: Callable[[list[str]], np.ndarray], pairs: Sequence[Pair]) -> np.ndarray:
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    vecs = embed(texts)
    pos = {t: i for i, t in enumerate(texts)}
    a = vecs[[pos[p.a] for p in pairs]]
    b = vecs[[pos[p.b] for p in pairs]]
    return np.round(np.sum(a * b, axis=1).astype(np.float64), 6)


def _pr(pred: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    tp = int(np.sum(pred & truth))
    fp = int(np.sum(pred & ~truth))
    fn = int(np.sum(~pred & truth))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else 0.0
    return {"precision": _r(precision), "recall": _r(recall), "f1": _r(f1), "tp": tp, "fp": fp, "fn": fn}


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def _candidates(s: np.ndarray) -> list[float]:
    vals = sorted(set(np.round(s, 3).tolist()))
    return sorted(set(vals + [round(v + 0.001, 3) for v in vals]))


NO_DECISION = 0.999  # "only near-identical texts": what a threshold is when the precision target cannot be met


def _fit_precision(s: np.ndarray, truth: np.ndarray, min_precision: float, strict: bool) -> tuple[float, str]:
    """Lowest threshold whose precision reaches ``min_precision``. When none does, 0.999: the decision is then
    left to the verifier / tentative links for everything short of near-identical text, because a threshold that
    acts on its own (merging beliefs, flagging conflicts) must err towards not acting."""
    best_p = 0.0
    for t in _candidates(s):
        pred = s > t if strict else s >= t
        m = _pr(pred, truth)
        if m["precision"] is None or m["tp"] == 0:
            continue
        if m["precision"] >= min_precision:
            return t, f"precision ≥ {min_precision}"
        best_p = max(best_p, m["precision"])
    return NO_DECISION, (f"precision {min_precision} unreachable (best {best_p:.3f}), so only near-identical "
                         f"texts ({NO_DECISION})")


def _fit_no_match(s_para: np.ndarray, min_recall: float) -> float:
    """Highest threshold keeping ``min_recall`` of paraphrases at or above it."""
    if len(s_para) == 0:
        return 0.0
    ordered = np.sort(s_para)
    drop = int(np.floor((1 - min_recall) * len(ordered)))
    return float(np.floor(ordered[drop] * 1000) / 1000)


def evaluate(s: np.ndarray, labels: np.ndarray, th: dict[str, float]) -> dict[str, Any]:
    para = labels == "paraphrase"
    opp = labels == "opposite"
    diff = labels == "different"
    pd = para | diff
    match = _pr((s >= th["match"])[pd], para[pd])
    no_match = _pr((s < th["no_match"])[pd], diff[pd])
    no_match["paraphrases_kept"] = _r(float(np.mean(s[para] >= th["no_match"]))) if para.any() else None
    uncertain = (s[pd] >= th["no_match"]) & (s[pd] < th["match"])
    od = opp | diff
    tension = _pr((s > th["tension"])[od], opp[od])
    return {"match": match, "no_match": no_match, "tension": tension,
            "uncertain_share": _r(float(np.mean(uncertain))) if pd.any() else None,
            "opposites_matched": _r(float(np.mean(s[opp] >= th["match"]))) if opp.any() else None}


def fit(s: np.ndarray, labels: np.ndarray, config: Config) -> tuple[dict[str, float], dict[str, str]]:
    c = config.calibration
    para = labels == "paraphrase"
    pd = para | (labels == "different")
    match, how_match = _fit_precision(s[pd], para[pd], c.match_min_precision, strict=False)
    no_match = _fit_no_match(s[para], c.no_match_min_recall)
    how_no = f"keeps ≥ {c.no_match_min_recall} of paraphrases"
    if no_match > match:
        no_match, how_no = match, how_no + "; lowered to match"
    sub = (labels == "opposite") | (labels == "different")
    tension, how_t = _fit_precision(s[sub], (labels == "opposite")[sub], c.tension_min_precision, strict=True)
    return ({"match": round(match, 3), "no_match": round(no_match, 3), "tension": round(tension, 3)},
            {"match": how_match, "no_match": how_no, "tension": how_t})


def calibrate_backend(config: Config, spec: str, pairs: Sequence[Pair]) -> dict[str, Any]:
    import time

    emb = get_embedder(config, spec)
    t0 = time.perf_counter()
    s = pair_similarities(emb.embed, pairs)
    seconds = time.perf_counter() - t0
    labels = np.array([p.label for p in pairs])
    split = np.array([p.split for p in pairs])
    fit_mask = split == config.calibration.fit_split
    if not fit_mask.any():
        fit_mask = np.ones(len(pairs), dtype=bool)
    th, how = fit(s[fit_mask], labels[fit_mask], config)
    configured = config.embeddings.thresholds.get(emb.model_name)
    return {
        "backend": spec, "model_id": emb.model_id, "model_name": emb.model_name, "dimension": emb.dimension,
        "pairs": len(pairs), "fit_pairs": int(fit_mask.sum()), "test_pairs": int((~fit_mask).sum()),
        "embed_seconds": round(seconds, 2),
        "mean_similarity": {lab: _r(float(np.mean(s[labels == lab]))) for lab in LABELS if (labels == lab).any()},
        "thresholds": th, "fitted_by": how,
        "configured": configured.model_dump() if configured is not None else None,
        "at_fitted": {"fit": evaluate(s[fit_mask], labels[fit_mask], th),
                      "test": evaluate(s[~fit_mask], labels[~fit_mask], th) if (~fit_mask).any() else None,
                      "all": evaluate(s, labels, th)},
        "at_seed_values": evaluate(s, labels, SEED_THRESHOLDS),
    }


def calibrate(config: Config, backends: Sequence[str], pairs_path: str | Path | None = None) -> dict[str, Any]:
    path = pairs_path or config.calibration.pairs_file
    pairs = load_pairs(path)
    counts = {lab: sum(p.label == lab for p in pairs) for lab in LABELS}
    return {"pairs_file": str(path) if path else "kenning/llm/data/calibration_pairs.jsonl", "pairs": len(pairs),
            "labels": counts, "settings": config.calibration.model_dump(),
            "backends": [calibrate_backend(config, b, pairs) for b in backends]}


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown (what benchmarks/RESULTS.md carries)."""
    s = report["settings"]
    lines = [
        f"Pairs: {report['pairs']} ({', '.join(f'{k} {v}' for k, v in report['labels'].items())}); thresholds fitted "
        f"on split `{s['fit_split']}`, checked on the held-out rest. Rules: match = lowest t with precision ≥ "
        f"{s['match_min_precision']} (paraphrase vs different); no_match = highest t keeping ≥ {s['no_match_min_recall']} of paraphrases; "
        f"tension = lowest t with precision ≥ {s['tension_min_precision']} (opposite vs different).",
        "",
    ]
    for b in report["backends"]:
        th = b["thresholds"]
        lines += [
            f"**{b['backend']}** (`{b['model_id']}`, {b['dimension']}-d): fitted match **{th['match']:.3f}**, "
            f"no_match **{th['no_match']:.3f}**, tension **{th['tension']:.3f}**. Mean similarity: "
            + ", ".join(f"{k} {v:.3f}" for k, v in b["mean_similarity"].items()) + ". Fitted by: "
            + "; ".join(f"{k} — {v}" for k, v in b["fitted_by"].items()) + ".",
            "",
            "| thresholds | split | match P | match R | no_match P | no_match R | paraphrases kept | tension P | "
            "tension R | uncertain share | opposites ≥ match |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        rows = [("fitted", k, v) for k, v in b["at_fitted"].items() if v is not None]
        rows.append(("seed 0.90/0.75/0.88", "all", b["at_seed_values"]))
        for name, split, m in rows:
            lines.append(f"| {name} | {split} | {_fmt(m['match']['precision'])} | {_fmt(m['match']['recall'])} | "
                         f"{_fmt(m['no_match']['precision'])} | {_fmt(m['no_match']['recall'])} | "
                         f"{_fmt(m['no_match']['paraphrases_kept'])} | {_fmt(m['tension']['precision'])} | "
                         f"{_fmt(m['tension']['recall'])} | {_fmt(m['uncertain_share'])} | "
                         f"{_fmt(m['opposites_matched'])} |")
        lines.append("")
    return "\n".join(lines)
