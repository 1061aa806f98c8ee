"""all-MiniLM-L6-v2 on ONNX Runtime: the ``minilm`` backend's fast runtime (``embeddings.minilm.runtime``).

    model = load_onnx_minilm(model_dir, max_seq_length=128, threads=2, cache_dir=None)   # once per process
    vecs = model.encode(texts, batch_size=64)        # (n, 384) float32, unit rows — the torch path's vectors

The sentence-transformers model (BertModel → mean pooling over the attention mask → L2 normalization) is exported
once with ``torch.onnx.export`` into a cache directory, keyed by the weights, the model config and the exporter
settings (:func:`export_key`). An export is built in a temporary directory and renamed into place, under a file
lock, so a process never sees half an export; every load checks the file against probe vectors the torch model
made at export time, so a damaged file is rebuilt rather than used. Once the export exists, embedding needs
neither torch nor transformers: tokenization uses the model's own ``tokenizer.json`` through ``tokenizers``.

Decisions M16–M19.
"""

from __future__ import annotations

import importlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from kenning.llm.errors import EmbeddingError

EXPORT_VERSION = 1          # bump when the exported graph changes (wrapper, inputs, pooling)
OPSET = 17
MAX_POSITIONS = 512         # BertModel's position embeddings
ONNX_FILE, META_FILE = "model.onnx", "meta.json"
PROBES = ("i am patient", "I don't like crowds, but I love small dinners with friends.",
          "Tomorrow I'll finally finish the report.")
PROBE_MIN_COSINE = 0.99999
ENV_CACHE_DIR = "KENNING_ONNX_CACHE"

_SESSIONS: dict[tuple, "OnnxMiniLM"] = {}
_FAILED: dict[tuple, "OnnxExportError"] = {}  # an export that failed is not retried per embedder
_LOCK = threading.Lock()


class OnnxExportError(EmbeddingError):
    """The ONNX file could not be exported or loaded (the caller falls back to torch)."""


def onnxruntime_available() -> bool:
    try:
        importlib.import_module("onnxruntime")
    except ImportError:
        return False
    return True


def default_cache_dir(configured: str | None = None) -> Path:
    """``embeddings.minilm.onnx_cache_dir``, else ``$KENNING_ONNX_CACHE``, else ``$XDG_CACHE_HOME/kenning/onnx``
    (``~/.cache/kenning/onnx``)."""
    if configured:
        return Path(configured).expanduser()
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "kenning" / "onnx"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _weights_file(model_dir: Path) -> Path:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_dir / name).is_file():
            return model_dir / name
    raise OnnxExportError(f"no model weights (model.safetensors / pytorch_model.bin) in {model_dir}")


def _stat_stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


def _dist_stamp(dist: str) -> tuple[str | None, list[int] | None]:
    """(version, stamp of its metadata file) of an installed distribution; (None, None) when absent."""
    import importlib.metadata as md

    try:
        d = md.distribution(dist)
    except md.PackageNotFoundError:
        return None, None
    meta = getattr(d, "_path", None)
    try:
        stamp = _stat_stamp(Path(meta) / "METADATA") if meta is not None else None
    except OSError:
        stamp = None
    return d.version, stamp


def export_key(model_dir: Path, memo_dir: Path | None = None) -> dict[str, Any]:
    """What the exported file depends on: the weights, the model config, and how it was exported.

    With ``memo_dir`` the key is remembered there beside the stat of every file it was computed from (the
    weights, the config, torch's and onnx's metadata): a one-shot search then stats four files instead of
    hashing the 90 MB weights and scanning site-packages (~0.1–0.4 s of its start-up; decisions F7). Any change
    of size, mtime or inode recomputes it; the probe check of every load still guards the export itself."""
    weights, config = _weights_file(model_dir), model_dir / "config.json"
    memo = None
    if memo_dir is not None:
        memo = memo_dir / f"key-{hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:16]}.json"
        try:
            stamps = [_stat_stamp(weights), _stat_stamp(config)]
            saved = json.loads(memo.read_text(encoding="utf-8"))
            if saved.get("files") == stamps and all(
                    _dist_stamp_cached(name) == tuple(saved["dists"][name]) for name in ("torch", "onnx")):
                return saved["key"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    dists = {name: _dist_stamp_cached(name) for name in ("torch", "onnx")}
    key = {"export_version": EXPORT_VERSION, "opset": OPSET,
           "weights_sha256": _sha256_file(weights), "config_sha256": _sha256_file(config),
           "torch": dists["torch"][0], "onnx": dists["onnx"][0]}
    if memo is not None:
        try:
            memo_dir.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
            tmp.write_text(json.dumps({"files": [_stat_stamp(weights), _stat_stamp(config)],
                                       "dists": {n: list(v) for n, v in dists.items()}, "key": key}),
                           encoding="utf-8")
            os.replace(tmp, memo)
        except OSError:
            pass  # a read-only cache: the key is simply computed again next time
    return key


_DISTS: dict[str, tuple] = {}


def _dist_stamp_cached(dist: str) -> tuple:
    if dist not in _DISTS:
        _DISTS[dist] = _dist_stamp(dist)
    return _DISTS[dist]


def key_hash(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]


class _Tokenizer:
    """The model's own fast tokenizer (``tokenizer.json``): lower-casing BERT WordPiece, [CLS] … [SEP],
    truncated to ``max_seq_length`` tokens like sentence-transformers does. Padding is done per batch."""

    def __init__(self, model_dir: Path, max_seq_length: int):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=max_seq_length)

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(list(texts))]


class OnnxMiniLM:
    """An ONNX Runtime session over the exported model plus its tokenizer."""

    def __init__(self, onnx_path: Path, model_dir: Path, max_seq_length: int, threads: int,
                 spin_wait: bool = False):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.inter_op_num_threads = 1
        if threads > 0:
            so.intra_op_num_threads = threads
        # By default like OMP_WAIT_POLICY=PASSIVE for torch (decisions M17): threads that spin while waiting
        # starve each other and everything else on a busy 2-core machine.
        so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin_wait else "0")
        so.log_severity_level = 3
        self.path, self.threads, self.spin_wait = onnx_path, threads, spin_wait
        try:
            self.session = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - a damaged file: the loader rebuilds it
            raise OnnxExportError(f"onnxruntime cannot load {onnx_path}: {e}") from e
        self.tokenizer = _Tokenizer(model_dir, max_seq_length)
        self.dimension = int(self.session.get_outputs()[0].shape[-1] or 384)

    def encode(self, texts: Sequence[str], batch_size: int = 64, batch_tokens: int = 0) -> np.ndarray:
        """Unit vectors for ``texts``: tokenized, sorted by length (less padding), run in batches of at most
        ``batch_size`` texts and (``batch_tokens`` > 0) at most that many padded tokens — many short texts per run,
        few long ones (issue 24, Q10: long rows in batches of 64 ran ~1.4× slower than in batches of 8–16 here) —
        mean-pooled over the attention mask and L2-normalized inside the graph."""
        ids = self.tokenizer.ids(texts)
        out = np.empty((len(ids), self.dimension), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        s = 0
        while s < len(order):
            e = s + 1  # sorted ascending: the last row of a batch sets its width
            while e < len(order) and e - s < batch_size and (
                    batch_tokens <= 0 or (e - s + 1) * len(ids[order[e]]) <= batch_tokens):
                e += 1
            idx = order[s:e]
            s = e
            width = max(len(ids[i]) for i in idx)
            input_ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                input_ids[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1
            out[idx] = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        return out


# -- export ------------------------------------------------------------------------------------------------
def _export(model_dir: Path, target: Path, key: dict[str, Any]) -> None:
    """Export the torch model into ``target`` (a fresh directory): ``model.onnx`` and ``meta.json`` (the key
    and the torch model's probe vectors)."""
    import torch

    from kenning.llm.embed import load_minilm

    st = load_minilm("cpu", 128, 0)  # the export has dynamic axes: any window runs on it
    hf = st[0].auto_model

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(e, p=2.0, dim=1)

    wrapper = Pooled(hf).eval()
    enc = st.tokenizer(list(PROBES), padding=True, return_tensors="pt")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(wrapper, (enc["input_ids"], enc["attention_mask"]), str(target / ONNX_FILE),
                          input_names=["input_ids", "attention_mask"], output_names=["embedding"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                        "attention_mask": {0: "batch", 1: "sequence"},
                                        "embedding": {0: "batch"}},
                          opset_version=OPSET, dynamo=False, do_constant_folding=True)
    probes = st.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    meta = {"key": key, "probes": list(PROBES), "probe_vectors": [[float(x) for x in v] for v in probes],
            "exported_at_unix": int(time.time())}
    (target / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    for f in (target / ONNX_FILE, target / META_FILE):
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())


class _FileLock:
    """An exclusive ``flock`` on a lock file (a no-op where fcntl does not exist)."""

    def __init__(self, path: Path):
        self.path, self.fh = path, None

    def __enter__(self):
        self.fh = open(self.path, "a+b")
        try:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows: the atomic rename alone keeps readers safe
            pass
        return self

    def __exit__(self, *exc):
        self.fh.close()  # closing releases the lock


def _check(model: OnnxMiniLM, meta: dict) -> None:
    got = model.encode(meta["probes"], batch_size=len(meta["probes"]))
    want = np.asarray(meta["probe_vectors"], dtype=np.float32)
    cos = (got * want).sum(axis=1)
    if got.shape != want.shape or float(cos.min()) < PROBE_MIN_COSINE:
        raise OnnxExportError(f"{model.path} does not reproduce the torch model's probe vectors "
                              f"(cosine {float(cos.min()):.6f})")


def _open(final: Path, model_dir: Path, max_seq_length: int, threads: int, spin_wait: bool) -> OnnxMiniLM:
    try:
        meta = json.loads((final / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise OnnxExportError(f"cannot read {final / META_FILE}: {e}") from e
    model = OnnxMiniLM(final / ONNX_FILE, model_dir, max_seq_length, threads, spin_wait)
    _check(model, meta)
    return model


def _discard(path: Path) -> None:
    """Move a damaged export aside, then delete it (a reader holding it open keeps its inode)."""
    aside = path.with_name(f".bad-{path.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(path, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def ensure_export(model_dir: Path, cache_dir: Path) -> tuple[Path, bool]:
    """The export directory for this model (``<cache_dir>/minilm-<key hash>``) and whether this call made it."""
    key = export_key(model_dir, memo_dir=cache_dir)
    final = cache_dir / f"minilm-{key_hash(key)}"
    if (final / META_FILE).is_file() and (final / ONNX_FILE).is_file():
        return final, False
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with _FileLock(cache_dir / f"{final.name}.lock"):
            if (final / META_FILE).is_file() and (final / ONNX_FILE).is_file():
                return final, False  # another process exported it while we waited
            if final.exists():
                _discard(final)
            # exports only ever run under this lock, so these are from processes killed mid-export
            for stale in cache_dir.glob(f".tmp-{final.name}-*"):
                shutil.rmtree(stale, ignore_errors=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=cache_dir))
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; an export is not a secret
            try:
                _export(model_dir, tmp, key)
                os.rename(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except OnnxExportError:
        raise
    except Exception as e:  # noqa: BLE001 - export problems of any kind become one message
        raise OnnxExportError(f"could not export all-MiniLM-L6-v2 to ONNX in {cache_dir}: "
                              f"{type(e).__name__}: {e}") from e
    return final, True


def load_onnx_minilm(model_dir: str | Path, *, max_seq_length: int = 128, threads: int = 0,
                     cache_dir: str | Path | None = None, spin_wait: bool = False) -> OnnxMiniLM:
    """The ONNX model, exported on first use and cached on disk; one session per process and setting.
    A cached file that fails to load or to reproduce the probe vectors is discarded and exported again once;
    any remaining failure raises :class:`OnnxExportError`."""
    model_dir = Path(model_dir)
    cache = default_cache_dir(str(cache_dir) if cache_dir else None)
    max_seq_length = min(int(max_seq_length), MAX_POSITIONS)
    sess_key = (str(cache.resolve()), max_seq_length, int(threads), bool(spin_wait))
    with _LOCK:
        hit = _SESSIONS.get(sess_key)
        if hit is not None:
            return hit
        if sess_key in _FAILED:
            raise _FAILED[sess_key]
        try:
            final, made = ensure_export(model_dir, cache)
            try:
                model = _open(final, model_dir, max_seq_length, threads, spin_wait)
            except OnnxExportError as first:
                if made:
                    raise
                warnings.warn(f"the cached ONNX export {final} is damaged ({first}); exporting it again",
                              stacklevel=3)
                with _FileLock(cache / f"{final.name}.lock"):
                    _discard(final)
                final, made = ensure_export(model_dir, cache)
                model = _open(final, model_dir, max_seq_length, threads, spin_wait)
        except OnnxExportError as e:
            _FAILED[sess_key] = e
            raise
        model.export_dir, model.exported_now = final, made
        _SESSIONS[sess_key] = model
        return model


def clear_sessions() -> None:
    """Forget the per-process sessions (tests)."""
    with _LOCK:
        _SESSIONS.clear()
        _FAILED.clear()
