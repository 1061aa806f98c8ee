"""LoCoMo turn-retrieval evaluation: Kenning and the baselines, in the same run, on the same questions.

Per conversation: a fresh vault, the file imported through ``kenning ingest`` (transcript path, search
index stage), then every question asked with the conversation's last session date as the question date.
Baselines index each turn as ``"<speaker>: <text>"`` plus ``" [image: <caption>]"`` (the data README):
- ``bm25``  — Okapi BM25 exactly as the ``rank_bm25`` package computes it (k1 1.5, b 0.75, ε 0.25 idf
  floor), lowercase alphanumeric tokens;
- ``dense`` — all-MiniLM-L6-v2 cosine;
- ``rrf``   — reciprocal rank fusion (k = 60) of the two full rankings.
Metrics (categories 1–4 overall, 5 separately): hit@5, hit@10 (an evidence turn in the top k) and
evidence recall@10, over questions whose evidence list names at least one turn (R9).
"""

from __future__ import annotations

import collections
import datetime as dt
import math
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import orjson

from kenning.retrieve.when import Interval, day, is_when_question, resolve_all
from kenning.sources.locomo import evidence_ids, from_obj, session_numbers
from kenning.sources.transcript import parse_time

SPLITS = {"dev": ["26", "30", "41", "42", "43"], "test": ["44", "47", "48", "49", "50"]}
SYSTEMS = ("kenning", "bm25", "dense", "rrf")
CATEGORIES = ("1", "2", "3", "4", "5")
_TOK = re.compile(r"[a-z0-9]+")


class EvalError(RuntimeError):
    pass


def default_data_dir() -> Path:
    env = os.environ.get("KENNING_LOCOMO")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for base in [Path.cwd(), *here.parents]:
        cand = base.parent / "shared" / "data" / "locomo"
        if cand.is_dir():
            return cand
        cand = base / "shared" / "data" / "locomo"
        if cand.is_dir():
            return cand
    return Path("../shared/data/locomo")


# -- baselines -----------------------------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    return _TOK.findall(text.lower())


class BM25Okapi:
    """rank_bm25.BM25Okapi, reimplemented (same formula, same idf floor) with numpy."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b = k1, b
        self.tf = [collections.Counter(d) for d in corpus]
        self.dl = np.array([len(d) for d in corpus], dtype=float)
        self.avgdl = float(self.dl.mean()) if len(corpus) else 0.0
        nd = collections.Counter(w for c in self.tf for w in c)
        n = len(corpus)
        self.idf: dict[str, float] = {}
        total, negative = 0.0, []
        for w, f in nd.items():
            v = math.log(n - f + 0.5) - math.log(f + 0.5)
            self.idf[w] = v
            total += v
            if v < 0:
                negative.append(w)
        eps = epsilon * total / len(self.idf) if self.idf else 0.0
        for w in negative:
            self.idf[w] = eps
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        acc: dict[str, tuple[list[int], list[int]]] = {}
        for i, c in enumerate(self.tf):
            for w, f in c.items():
                a = acc.setdefault(w, ([], []))
                a[0].append(i)
                a[1].append(f)
        self.postings = {w: (np.array(ix), np.array(fs, dtype=float)) for w, (ix, fs) in acc.items()}

    def scores(self, query: Sequence[str]) -> np.ndarray:
        s = np.zeros(len(self.tf))
        norm = self.k1 * (1 - self.b + self.b * self.dl / self.avgdl) if self.avgdl else np.ones(len(self.tf))
        for w in query:
            p = self.postings.get(w)
            if p is None:
                continue
            ix, qf = p
            s[ix] += self.idf[w] * (qf * (self.k1 + 1) / (qf + norm[ix]))
        return s


def rank_order(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def rrf_order(rankings: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    acc: dict[int, float] = collections.defaultdict(float)
    for r in rankings:
        for pos, i in enumerate(r):
            acc[i] += 1.0 / (k + pos + 1)
    return sorted(acc, key=lambda i: (-acc[i], i))


def turn_text(t: dict) -> str:
    s = f"{t.get('speaker')}: {t.get('text') or ''}"
    if isinstance(t.get("blip_caption"), str):
        s += f" [image: {t['blip_caption']}]"
    return s


# -- gold dates ----------------------------------------------------------------------------------------------

def gold_interval(question: str, answer: Any, anchor: dt.date) -> Interval | None:
    """The date a category-2 answer names ("7 May 2023", "The week before 9 June 2023", "2022"), or None
    when the question is not a 'when' question or the answer is a duration / vague ("10 years ago")."""
    if not is_when_question(question) or answer is None:
        return None
    text = str(answer).strip()
    if re.search(r"\bago\b|^\s*(since|for)\b|\b(years?|months?|weeks?|days?)\s*$", text, re.I) and not re.search(
            r"\d{4}", text):
        return None
    found = resolve_all(text, anchor)
    return found[0] if found else None


def time_matches(kenning: Interval | None, gold: Interval) -> bool:
    """Kenning's resolved time is right when its middle day lies in the gold interval and it is no coarser (R10)."""
    return kenning is not None and gold.contains(kenning.mid) and kenning.days <= gold.days


# -- the run -------------------------------------------------------------------------------------------------

def _metrics(gold: set[str], ranked: Sequence[str]) -> tuple[float, float, float]:
    top = list(ranked[:10])
    h5 = float(any(x in gold for x in top[:5]))
    h10 = float(any(x in gold for x in top))
    rec = len(gold & set(top)) / len(gold)
    return h5, h10, rec


def _summary(rows: list[tuple[str, tuple[float, float, float]]]) -> dict[str, Any]:
    by: dict[str, list] = collections.defaultdict(list)
    for cat, m in rows:
        by[cat].append(m)

    def agg(ms: list) -> dict[str, float]:
        if not ms:
            return {"hit@5": 0.0, "hit@10": 0.0, "recall@10": 0.0, "n": 0}
        a = np.array(ms)
        return {"hit@5": round(float(a[:, 0].mean()), 4), "hit@10": round(float(a[:, 1].mean()), 4),
                "recall@10": round(float(a[:, 2].mean()), 4), "n": len(ms)}

    overall = [m for c, m in rows if c != "5"]
    return {"overall": agg(overall), "by_category": {c: agg(by[c]) for c in CATEGORIES if by.get(c)}}


def question_date(obj: dict) -> dt.date:
    """The conversation's last session date: questions are asked after the whole conversation."""
    dates = []
    for n in session_numbers(obj):
        if obj.get(f"session_{n}"):
            ts = parse_time(obj.get(f"session_{n}_date_time"), "UTC")
            if ts:
                dates.append(ts[:10])
    return dt.date.fromisoformat(max(dates)) if dates else dt.date.today()


def run_eval(*, split: str = "dev", data_dir: Path | None = None, conversations: str | None = None,
             max_questions: int | None = None, systems: Sequence[str] | None = None, workdir: Path | None = None,
             config_path: Path | None = None, overrides: dict | None = None, reuse: bool = False,
             lanes_top: int = 0, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``lanes_top`` > 0 (dev only, needs ``workdir``): each question's record in ``questions.jsonl`` also holds
    Kenning's top ``lanes_top`` hits with every lane's rank, for :func:`replay` (R39)."""
    from kenning.api import Vault
    from kenning.llm.embed import MINILM_DIMENSION, get_embedder
    from kenning.llm.errors import EmbeddingError
    from kenning.retrieve.search import Searcher

    if split not in SPLITS:
        raise EvalError(f"--split must be one of {', '.join(SPLITS)}")
    data = Path(data_dir) if data_dir else default_data_dir()
    names = [c.strip() for c in conversations.split(",")] if conversations else SPLITS[split]
    files = [data / f"{n}.json" for n in names]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise EvalError(f"LoCoMo files not found: {', '.join(missing)} (use --data or KENNING_LOCOMO)")
    wanted = [s for s in (systems or SYSTEMS)]
    unknown = set(wanted) - set(SYSTEMS)
    if unknown:
        raise EvalError(f"unknown systems {sorted(unknown)}; known: {', '.join(SYSTEMS)}")
    if lanes_top:
        if lanes_top < 0 or not workdir:
            raise EvalError("--lanes N needs N > 0 and --workdir (the ranks go to questions.jsonl there)")
        if set(names) & set(SPLITS["test"]):
            raise EvalError("--lanes dumps per-question lane ranks for tuning, and tuning is on dev only: "
                            f"not for the test conversations ({', '.join(sorted(set(names) & set(SPLITS['test'])))})")
    say = progress or (lambda _m: None)
    results: dict[str, list] = {s: [] for s in wanted}
    temporal = {"n": 0, "correct": 0, "top_hit_correct": 0, "evidence_n": 0, "evidence_correct": 0}
    per_question: list[dict] = []
    skipped = 0
    timings: dict[str, float] = collections.defaultdict(float)
    tmp = tempfile.TemporaryDirectory(prefix="kenning-locomo-") if workdir is None else None
    root = Path(workdir) if workdir else Path(tmp.name)  # type: ignore[union-attr]
    root.mkdir(parents=True, exist_ok=True)
    dense_model = None
    try:
        for f in files:
            obj = orjson.loads(f.read_bytes())
            transcript = from_obj(obj)
            now = question_date(obj)
            turns = [t.obj for s in transcript.sessions for t in s.turns]
            ids = [str(t.get("id")) for t in turns]
            raw_turns = [t for n in session_numbers(obj) for t in (obj.get(f"session_{n}") or [])]
            texts = [turn_text(t) for t in raw_turns]
            qs = [q for q in obj.get("qa", []) if str(q.get("category")) in CATEGORIES]
            if max_questions:
                qs = qs[:max_questions]
            say(f"{f.name}: {len(turns)} turns, {len(qs)} questions, question date {now}")
            searcher = None
            if "kenning" in wanted:
                t0 = time.perf_counter()
                db = root / f"locomo-{f.stem}.db"
                if reuse and workdir and db.exists():
                    vault = Vault.open(db, config_path=config_path, overrides=overrides)
                    vault.reindex(full=False, as_of=f"{now.isoformat()}T23:59:59Z")
                else:
                    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                        if p.exists():
                            p.unlink()
                    vault = Vault.open(db, config_path=config_path, overrides=overrides)
                    vault.ingest([f], as_of=f"{now.isoformat()}T23:59:59Z")
                searcher = Searcher(vault.conn, vault.config)
                timings["kenning_ingest_s"] += time.perf_counter() - t0
            if any(s in wanted for s in ("bm25", "rrf")):
                bm = BM25Okapi([tokens(t) for t in texts])
            if any(s in wanted for s in ("dense", "rrf")):
                if dense_model is None:
                    from kenning.config import load_config

                    try:
                        dense_model = get_embedder(load_config(config_path), "minilm", dimension=MINILM_DIMENSION)
                    except EmbeddingError as e:
                        raise EvalError(f"the dense baseline needs all-MiniLM-L6-v2: {e}") from e
                t0 = time.perf_counter()
                emb = dense_model.embed(texts)
                qemb = dense_model.embed([str(q.get("question")) for q in qs])
                timings["dense_embed_s"] += time.perf_counter() - t0
            for qi, q in enumerate(qs):
                gold = set(evidence_ids(q.get("evidence")))
                cat = str(q.get("category"))
                if not gold:
                    skipped += 1
                    continue
                question = str(q.get("question"))
                record: dict[str, Any] = {"conversation": f.stem, "question": question, "category": cat,
                                          "evidence": sorted(gold)}
                rankings: dict[str, list[str]] = {}
                lane_ranks: list | None = None
                if searcher is not None:
                    t0 = time.perf_counter()
                    res = searcher.search(question, k=max(10, lanes_top), now=now.isoformat(), kinds=["message"])
                    timings["kenning_search_s"] += time.perf_counter() - t0
                    rankings["kenning"] = [h["turn_ref"] for h in res.hits[:10]]
                    if lanes_top:
                        lane_ranks = [[h["turn_ref"], {ln: v["rank"] for ln, v in h["lanes"].items()}]
                                      for h in res.hits[:lanes_top]]
                    gi = gold_interval(question, q.get("answer"), now) if cat == "2" else None
                    if gi is not None:
                        temporal["n"] += 1
                        top = res.hits[0] if res.hits else None
                        top_ok = top is not None and time_matches(_hit_time(top), gi)
                        temporal["top_hit_correct"] += int(top_ok)
                        ev = next((h for h in res.hits[:10] if h["turn_ref"] in gold), None)
                        ok = ev is not None and time_matches(_hit_time(ev), gi)
                        temporal["correct"] += int(ok)
                        if ev is not None:
                            temporal["evidence_n"] += 1
                            temporal["evidence_correct"] += int(ok)
                        record["temporal"] = {"gold": gi.as_dict(),
                                              "evidence": _hit_time(ev).as_dict() if ev and _hit_time(ev) else None,
                                              "top": _hit_time(top).as_dict() if top and _hit_time(top) else None,
                                              "correct": ok, "top_hit_correct": top_ok}
                if "bm25" in wanted or "rrf" in wanted:
                    r_bm = rank_order(bm.scores(tokens(question)))
                    rankings["bm25"] = [ids[i] for i in r_bm[:10]]
                if "dense" in wanted or "rrf" in wanted:
                    r_de = rank_order(emb @ qemb[qi])
                    rankings["dense"] = [ids[i] for i in r_de[:10]]
                if "rrf" in wanted:
                    rankings["rrf"] = [ids[i] for i in rrf_order([r_bm, r_de])[:10]]
                for s in wanted:
                    m = _metrics(gold, rankings.get(s, []))
                    results[s].append((cat, m))
                    record[s] = {"top10": rankings.get(s, []), "hit@10": m[1]}
                if lane_ranks is not None:
                    record["kenning"]["lanes"] = lane_ranks
                per_question.append(record)
            if searcher is not None:
                vault.close()
    finally:
        if tmp is not None:
            tmp.cleanup()
    if workdir:
        (root / "questions.jsonl").write_bytes(b"\n".join(orjson.dumps(r) for r in per_question) + b"\n")
    report: dict[str, Any] = {
        "split": split if not conversations else f"{split}:{conversations}",
        "conversations": names,
        "systems": {s: _summary(results[s]) for s in wanted},
        "temporal_accuracy": (round(temporal["correct"] / temporal["n"], 4) if temporal["n"] else None)
        if "kenning" in wanted else None,
        "temporal_detail": {
            "n": temporal["n"], "correct": temporal["correct"],
            "top_hit": round(temporal["top_hit_correct"] / temporal["n"], 4) if temporal["n"] else None,
            "given_evidence_in_top10": round(temporal["evidence_correct"] / temporal["evidence_n"], 4)
            if temporal["evidence_n"] else 0.0,
            "evidence_in_top10_n": temporal["evidence_n"],
        },
        "questions_scored": len(per_question),
        "questions_skipped_no_evidence": skipped,
        "timings_s": {k: round(v, 2) for k, v in timings.items()},
    }
    return report


def replay(records: Sequence[dict], weights: dict[str, float], *, k: int = 10, rrf_k: int = 60,
           extra: Callable[[dict], Sequence[str]] | None = None, extra_weight: float = 1.0) -> dict[str, Any]:
    """hit@k recomputed from recorded lane ranks (``run_eval(lanes_top=N)``'s records) with other lane weights,
    and optionally one more ranked list of turn refs per question (``extra(record)``), fused as the search fuses:
    Σ weight / (rrf_k + rank), ties by the best single rank, then the recorded order. Exact for a change of a
    second-pass lane's weight or a lane added after the first pass; for the first-pass lanes only approximate (the
    second-pass lanes were computed from the recorded first pass), and a turn outside the recorded top N has no
    ranks (record N ≥ 300 so that every lane's top 50 is in it). Overall = categories 1–4 (R9)."""
    by: dict[str, list[bool]] = collections.defaultdict(list)
    for r in records:
        ranked = r["kenning"]["lanes"]
        score: dict[str, float] = {}
        best: dict[str, int] = {}
        order: dict[str, int] = {}
        for i, (ref, ranks) in enumerate(ranked):
            score[ref] = sum(weights.get(ln, 1.0) / (rrf_k + rk) for ln, rk in ranks.items())
            best[ref] = min(ranks.values()) if ranks else 10**9
            order[ref] = i
        if extra is not None:
            for rk, ref in enumerate(list(extra(r))[:50], 1):
                score[ref] = score.get(ref, 0.0) + extra_weight / (rrf_k + rk)
                best[ref] = min(best.get(ref, 10**9), rk)
                order.setdefault(ref, len(order))
        top = sorted(score, key=lambda x: (-score[x], best[x], order[x]))[:k]
        gold = set(r["evidence"])
        by[str(r["category"])].append(any(x in gold for x in top))
    overall = [x for c, v in by.items() if c != "5" for x in v]
    return {"hit@k": round(sum(overall) / len(overall), 4) if overall else None, "hits": sum(overall),
            "n": len(overall), "by_category": {c: sum(v) for c, v in sorted(by.items())}}


def _hit_time(hit: dict | None) -> Interval | None:
    """The time Kenning gives a hit: its resolved event time, else the day it was said."""
    if hit is None:
        return None
    ev = hit.get("event_time")
    if ev:
        return Interval(dt.date.fromisoformat(ev["start"]), dt.date.fromisoformat(ev["end"]), ev["text"],
                        ev["granularity"])
    if hit.get("date"):
        return day(dt.date.fromisoformat(hit["date"][:10]), "date said")
    return None
