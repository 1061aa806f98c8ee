"""Tiers 2 and 3 of the temporal profile's classification chain (seed 001 §6.6.5; docs/decisions.md T31–T34).

The chain runs tier 1 (keyword votes, ``graph.profile.Classifier``) first; a member it leaves without a vote goes
to tier 2, one tier 2 leaves goes to tier 3, and whatever is left is ``unclassified`` tier 0.

- Tier 2 — seeded predicate embeddings (:class:`EmbeddingTier`): every evidence predicate label ("lives_in" →
  "lives in") is embedded with the one embedder (``kenning.llm.embed.get_embedder``) and compared with the seed
  predicates of each category (``predicate_cluster_categories``); its category is the seed category with the
  highest cosine when that cosine reaches the embedding model's threshold (``embedding_tier.thresholds``). Each
  evidence claim votes for its predicate's category; ties by the mean cosine, then category order.
- Tier 3 — seeded multi-run LLM (:class:`LLMTier`): the members still without a category, a window at a time,
  are sent to the model layer (prompt ``profile_classify_v<N>.txt``, schema beside it) ``llm_tier.runs`` times,
  each with its ``sample`` number and seed ``llm_tier.seed + sample``; a category is taken when at least
  ``consensus`` of the runs give it. Every call is logged in ``llm_extraction_runs`` / ``llm_extraction_calls``
  in stage 6's transaction; ``--llm replay`` answers from the stored calls.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from importlib import resources
from typing import Any

from pydantic import BaseModel

PROMPT = "profile_classify"


def predicate_text(label: str) -> str:
    return " ".join(label.replace("_", " ").split())


# -- tier 2 -------------------------------------------------------------------------------------------------------
class EmbeddingTier:
    def __init__(self, config: Any, cfg: dict[str, Any], order: list[str], embedder: Any = None):
        from kenning.llm.embed import get_embedder

        tcfg = cfg.get("embedding_tier") or {}
        self.order = order
        self.embedder = embedder if embedder is not None else get_embedder(config)
        ths = tcfg.get("thresholds") or {}
        self.threshold = float(ths.get(self.embedder.model_name, ths.get("default", 0.6)))
        seeds = [(cat, predicate_text(str(p))) for cat in order
                 for p in (cfg.get("predicate_cluster_categories") or {}).get(cat, [])]
        self.seed_cats = [c for c, _ in seeds]
        self.seed_vecs = self.embedder.embed([t for _, t in seeds]) if seeds else None
        self.memo: dict[str, tuple[str | None, float]] = {}

    def prepare(self, labels: list[str]) -> None:
        """Embed every label not seen yet, in one batch (sorted: the order never matters, but stays stable)."""
        todo = sorted({lb for lb in labels if lb not in self.memo})
        if not todo or self.seed_vecs is None:
            for lb in todo:
                self.memo[lb] = (None, 0.0)
            return
        sims = self.embedder.embed([predicate_text(lb) for lb in todo]) @ self.seed_vecs.T
        for lb, row in zip(todo, sims):
            best: dict[str, float] = {}
            for cat, s in zip(self.seed_cats, row):
                best[cat] = max(best.get(cat, -1.0), float(s))
            cat, score = sorted(best.items(), key=lambda kv: (-round(kv[1], 6), self.order.index(kv[0])))[0]
            self.memo[lb] = (cat, round(score, 6)) if score >= self.threshold else (None, round(score, 6))

    def classify(self, evidence: list[dict]) -> tuple[str, float] | None:
        self.prepare([a["predicate_label"] for a in evidence])
        votes: Counter = Counter()
        sims: dict[str, list[float]] = defaultdict(list)
        for a in evidence:
            cat, s = self.memo[a["predicate_label"]]
            if cat:
                votes[cat] += 1
                sims[cat].append(s)
        if not votes:
            return None
        cat = sorted(votes, key=lambda c: (-votes[c], -sum(sims[c]) / len(sims[c]), self.order.index(c)))[0]
        return cat, round(sum(sims[cat]) / len(sims[cat]), 6)


# -- tier 3 -------------------------------------------------------------------------------------------------------
class ProfileClassification(BaseModel):
    id: int
    category: str
    confidence: float


class ProfileClassifyOutput(BaseModel):
    items: list[ProfileClassification]


def schema_text() -> str:
    return json.dumps(ProfileClassifyOutput.model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_schema(config: Any) -> str:
    """The pinned schema file's sha256; an error when the code's schema differs from it (a new prompt version)."""
    from kenning.llm.errors import PromptError
    from kenning.sources.jcs import sha256_hex

    version = config.llm.prompt_versions.get(PROMPT)
    if version is None:
        raise PromptError(f"prompt {PROMPT!r} is not pinned: add `{PROMPT}: N` under llm.prompt_versions")
    fname = f"{PROMPT}_v{int(version)}.schema.json"
    try:
        text = resources.files("kenning.llm").joinpath("prompts", fname).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as e:
        raise PromptError(f"no schema file {fname} in kenning/llm/prompts (it sits beside the prompt)") from e
    if json.loads(text) != json.loads(schema_text()):
        raise PromptError(f"{fname} does not match kenning.graph.tiers.ProfileClassifyOutput; a schema change "
                          "needs a new prompt version (new files, new pin)")
    return sha256_hex(text)


def llm_tier_mode(ctx: Any) -> str:
    """The mode stage 6 asks the model in: the runner already applied the one rule (M30) through
    ``GraphMaterialization.model_wanted`` (an explicit --llm, or graph.profile.enable_llm_classification), so
    this is the stage's ``ctx.llm_mode``; ``none`` outside a stage (a timeline drawn on the fly)."""
    return (getattr(ctx, "llm_mode", "none") or "none") if ctx is not None else "none"


class LLMTier:
    """Opens one model-layer run (``name = "profile_classify"``) in stage 6's transaction."""

    def __init__(self, ctx: Any, cfg: dict[str, Any], categories: list[dict], stats: Counter):
        from kenning.llm.client import open_llm_run
        from kenning.llm.version import extractor_version

        t = cfg.get("llm_tier") or {}
        self.runs = max(1, int(t.get("runs", 3)))
        self.consensus = float(t.get("consensus", 0.6))
        self.seed = int(t.get("seed", 0))
        self.batch = max(1, int(t.get("max_items_per_request", 40)))
        self.quotes = int(t.get("quotes_per_item", 2))
        self.categories = categories
        self.keys = {c["key"] for c in categories}
        self.stats = stats
        ev = extractor_version(ctx.config, prompts=[PROMPT], llm_mode=ctx.llm_mode, extra={
            "schema_sha256": check_schema(ctx.config), "llm_tier": t})
        self._cm = open_llm_run(ctx, PROMPT, extractor_version=ev)
        self.client = self._cm.__enter__()

    def close(self, ok: bool) -> None:
        if ok:
            self.client.run.add(messages_processed=0, assertions_extracted=0)
            self._cm.__exit__(None, None, None)
        else:
            self.client.close()

    def classify(self, window_label: str, members: list[dict]) -> dict[str, tuple[str, float]]:
        """``members`` (each with key, label, node_type, entity_type, evidence) → {key: (category, share)} for the
        members at least ``consensus`` of the runs put in one category."""
        out: dict[str, tuple[str, float]] = {}
        cats = [{"key": c["key"], "label": c.get("label", c["key"]), "description": c.get("description", "")}
                for c in self.categories]
        for start in range(0, len(members), self.batch):
            chunk = members[start:start + self.batch]
            items = []
            for i, m in enumerate(chunk, 1):
                quotes = sorted({(a.get("surface_text") or "")[:200] for a in m["evidence"]
                                 if a.get("surface_text")})[:self.quotes]
                items.append({"id": i, "member": m["label"], "kind": m.get("entity_type") or m["node_type"],
                              "predicates": sorted({predicate_text(a["predicate_label"]) for a in m["evidence"]}),
                              "quotes": quotes})
            votes: list[Counter] = [Counter() for _ in chunk]
            for sample in range(1, self.runs + 1):
                request = {"window": window_label, "sample": sample, "categories": cats, "items": items}
                res = self.client.structured(PROMPT, {"request": json.dumps(request, ensure_ascii=False, indent=1)},
                                             ProfileClassifyOutput, item_key=f"{window_label}/{start}/{sample}",
                                             options={"seed": self.seed + sample})
                self.stats["llm_classification_requests"] += 1
                self.stats["llm_classification_calls"] += len(res.call_ids)
                if not res.ok:
                    self.stats["llm_classification_failed"] += 1
                    continue
                seen: set[int] = set()
                for it in res.value.items:
                    if not 1 <= it.id <= len(chunk) or it.id in seen:
                        self.stats["llm_classification_invalid_id"] += 1
                        continue
                    seen.add(it.id)
                    if it.category not in self.keys:
                        self.stats["llm_classification_invalid_category"] += 1
                        continue
                    votes[it.id - 1][it.category] += 1
            need = math.ceil(self.consensus * self.runs - 1e-9)
            order = [c["key"] for c in self.categories]
            for m, v in zip(chunk, votes):
                if not v:
                    continue
                cat, n = sorted(v.items(), key=lambda kv: (-kv[1], order.index(kv[0])))[0]
                if cat != "unclassified" and n >= need:
                    out[m["key"]] = (cat, round(n / self.runs, 6))
                else:
                    self.stats["llm_classification_no_consensus"] += 1
        return out
