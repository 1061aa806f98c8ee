"""Seed 000 §7 pilot annotation scripts: export samples for human review, and score the extractor against a gold
file (`kenning self annotate export N OUT`, `kenning self annotate metrics GOLD.jsonl`). Format:
docs/self-beliefs.md "Gold files".

Matching: for each statement, a predicted atom matches a gold atom when the F1 of their content words (canonical
text, function words dropped, light suffix stemming) reaches ``annotate.match_min_f1`` (0.5); pairs are taken
best first, one-to-one. Atom precision / recall / F1 count matched pairs; belief type, polarity and temporal scope
are reported as accuracy over the matched pairs and as strict P/R/F1 (a pair counts only if that field agrees).
Gold atoms may also carry ``modality`` and ``holds_now`` (issue 22): those are scored where the gold has them.

A statement is **fully right** (issue 22) when its predicted atoms pair one-to-one with its gold atoms (none missed,
none extra; a statement with no gold atoms must yield none) and every pair has the same canonical text, polarity,
temporal scope and, where the gold gives them, modality and ``holds_now``. The belief type is reported beside it
(``fully_right_with_type``), not inside it: it is the one judgement call of the format.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from kenning.selfbelief.canonicalizer import canonical_text
from kenning.selfbelief.types import BELIEF_TYPES, MODALITIES, POLARITIES, SCOPES

FIELDS = ("belief_type", "polarity", "temporal_scope")
OPTIONAL_FIELDS = ("modality", "holds_now")      # scored only on gold atoms that have them
_STOP = {"i", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did",
         "a", "an", "the", "my", "me", "to", "of", "at", "in", "on", "for", "with", "and", "or", "it", "that", "this",
         "so", "than", "more", "very", "really", "can", "will", "would", "not", "never", "them", "they", "by", "as"}


class GoldFormatError(ValueError):
    pass


def stem(w: str) -> str:
    for suf in ("ing", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[:-len(suf)]
    return w


def content_words(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z0-9'-]+", canonical_text(text)) if w not in _STOP]


def token_f1(a: str, b: str) -> float:
    x, y = Counter(content_words(a)), Counter(content_words(b))
    if not x and not y:
        return 1.0
    common = sum((x & y).values())
    if common == 0:
        return 0.0
    p, r = common / sum(y.values()), common / sum(x.values())
    return 2 * p * r / (p + r)


def load_gold(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise GoldFormatError(f"cannot read {p}: {e.strerror}") from e
    items = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            it = json.loads(line)
        except json.JSONDecodeError as e:
            raise GoldFormatError(f"{p}:{n}: not JSON ({e.msg})") from e
        if not isinstance(it, dict) or not isinstance(it.get("text"), str) or not isinstance(it.get("atoms"), list):
            raise GoldFormatError(f"{p}:{n}: each line needs \"text\" (string) and \"atoms\" (list)")
        for a in it["atoms"]:
            missing = [k for k in ("atom_text", *FIELDS) if not isinstance(a.get(k), str)]
            if missing:
                raise GoldFormatError(f"{p}:{n}: an atom lacks {', '.join(missing)}")
            if a["belief_type"] not in BELIEF_TYPES or a["polarity"] not in POLARITIES or a["temporal_scope"] not in SCOPES:
                raise GoldFormatError(f"{p}:{n}: atom {a['atom_text']!r} has an unknown belief_type, polarity or "
                                      "temporal_scope")
            if ("modality" in a and a["modality"] not in MODALITIES) or (
                    "holds_now" in a and not isinstance(a["holds_now"], bool)):
                raise GoldFormatError(f"{p}:{n}: atom {a['atom_text']!r}: modality must be one of "
                                      f"{', '.join(MODALITIES)} and holds_now true or false")
        it.setdefault("id", f"line{n}")
        items.append(it)
    if not items:
        raise GoldFormatError(f"{p} holds no statements")
    return items


def match(gold: list[dict], pred: list[dict], min_f1: float) -> list[tuple[int, int, float]]:
    pairs = sorted(((token_f1(g["atom_text"], p["atom_text"]), i, j) for i, g in enumerate(gold)
                    for j, p in enumerate(pred)), key=lambda t: (-t[0], t[1], t[2]))
    used_g, used_p, out = set(), set(), []
    for f, i, j in pairs:
        if f < min_f1 or i in used_g or j in used_p:
            continue
        used_g.add(i)
        used_p.add(j)
        out.append((i, j, f))
    return out


def _prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}


@dataclass
class _Tally:
    n_items: int = 0
    n_gold: int = 0
    n_pred: int = 0
    tp: int = 0

    fully_right: int = 0
    fully_right_with_type: int = 0

    def __post_init__(self):
        self.agree = Counter()
        self.scored = Counter()      # pairs whose gold atom has the (optional) field
        self.confusion = {f: Counter() for f in FIELDS + OPTIONAL_FIELDS}


def predicted_atoms(analysis) -> list[dict]:
    return [{"atom_text": a.atom.canonical_text, "belief_type": a.atom.belief_type, "polarity": a.polarity,
             "temporal_scope": a.epistemics.frame.temporal_scope, "modality": a.epistemics.frame.modality,
             "holds_now": a.epistemics.frame.holds_now} for a in analysis.atoms]


def _pair_right(g: dict, p: dict) -> bool:
    """Same canonical text and every scored field but the belief type (see "fully right" above)."""
    if canonical_text(g["atom_text"]) != canonical_text(p["atom_text"]):
        return False
    if any(g[f] != p.get(f) for f in ("polarity", "temporal_scope")):
        return False
    return all(g[f] == p.get(f) for f in OPTIONAL_FIELDS if f in g)


def fully_right(gold: list[dict], pred: list[dict], pairs: list[tuple[int, int, float]]) -> bool:
    return len(pairs) == len(gold) == len(pred) and all(_pair_right(gold[i], pred[j]) for i, j, _ in pairs)


def evaluate(items: Iterable[dict], analyze: Callable[[dict], list[dict]], min_f1: float,
             keep_errors: int = 0) -> dict[str, Any]:
    """Score ``analyze(item) -> predicted atoms`` on gold ``items``: overall and per ``split``."""
    tallies: dict[str, _Tally] = {}
    errors: list[dict] = []
    for it in items:
        pred = analyze(it)
        gold = it["atoms"]
        pairs = match(gold, pred, min_f1)
        for key in ("all", f"split:{it.get('split', 'unsplit')}"):
            t = tallies.setdefault(key, _Tally())
            t.n_items += 1
            t.n_gold += len(gold)
            t.n_pred += len(pred)
            t.tp += len(pairs)
            right = fully_right(gold, pred, pairs)
            t.fully_right += right
            t.fully_right_with_type += right and all(gold[i]["belief_type"] == pred[j]["belief_type"]
                                                     for i, j, _ in pairs)
            for i, j, _ in pairs:
                for f in FIELDS + OPTIONAL_FIELDS:
                    if f not in gold[i]:
                        continue
                    ok = gold[i][f] == pred[j].get(f)
                    t.scored[f] += 1
                    t.agree[f] += ok
                    if not ok:
                        t.confusion[f][f"{gold[i][f]}→{pred[j].get(f)}"] += 1
        if keep_errors and len(errors) < keep_errors:
            matched_g = {i for i, _, _ in pairs}
            matched_p = {j for _, j, _ in pairs}
            wrong = [(gold[i], pred[j]) for i, j, _ in pairs if not _pair_right(gold[i], pred[j])]
            if len(matched_g) < len(gold) or len(matched_p) < len(pred) or wrong:
                errors.append({"id": it.get("id"), "text": it["text"],
                               "missed": [g for n, g in enumerate(gold) if n not in matched_g],
                               "spurious": [p for n, p in enumerate(pred) if n not in matched_p],
                               "field_errors": [{"gold": g, "pred": p} for g, p in wrong]})
    report: dict[str, Any] = {"match_min_f1": min_f1}
    for key, t in sorted(tallies.items()):
        block: dict[str, Any] = {"statements": t.n_items, "gold_atoms": t.n_gold, "predicted_atoms": t.n_pred,
                                 "matched": t.tp, "atoms": _prf(t.tp, t.n_pred, t.n_gold),
                                 "fully_right": round(t.fully_right / t.n_items, 4) if t.n_items else 0.0,
                                 "fully_right_count": t.fully_right,
                                 "fully_right_with_type": round(t.fully_right_with_type / t.n_items, 4)
                                 if t.n_items else 0.0}
        for f in FIELDS:
            block[f] = {"accuracy": round(t.agree[f] / t.tp, 4) if t.tp else 0.0,
                        **_prf(t.agree[f], t.n_pred, t.n_gold),
                        "confusion": dict(t.confusion[f].most_common(8))}
        for f in OPTIONAL_FIELDS:
            if t.scored[f]:
                block[f] = {"accuracy": round(t.agree[f] / t.scored[f], 4), "scored": t.scored[f],
                            "confusion": dict(t.confusion[f].most_common(8))}
        report[key] = block
    if keep_errors:
        report["errors"] = errors
    return report


# -- export -------------------------------------------------------------------------------------------------
def export_rows(experiences: list[dict], atoms_by_experience: dict[str, list[dict]], n: int, seed: int) -> list[dict]:
    """A reproducible random sample of ``n`` experiences in the gold format, atoms prefilled with what Kenning
    extracted, for a person to correct (``"review": "todo"``)."""
    pool = sorted(experiences, key=lambda e: e["experience_id"])
    rng = random.Random(seed)
    picked = pool if n >= len(pool) else rng.sample(pool, n)
    out = []
    for e in sorted(picked, key=lambda e: e["experience_id"]):
        out.append({"id": e["experience_id"], "text": e["text"], "mode": e.get("mode"),
                    "source": f"vault:{e['message_id']}", "occurred_at": e.get("occurred_at"),
                    "selected_because": e.get("selected_reason"),
                    "atoms": atoms_by_experience.get(e["experience_id"], []), "review": "todo"})
    return out
