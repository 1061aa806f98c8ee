"""The ONNX export key remembered by file stats (decisions F7): a one-shot search no longer hashes the weights."""

from __future__ import annotations

import os

from kenning.llm import onnx_minilm


def _model_dir(tmp_path, weights: bytes = b"w" * 4096):
    d = tmp_path / "model"
    d.mkdir(exist_ok=True)
    (d / "model.safetensors").write_bytes(weights)
    (d / "config.json").write_text('{"hidden_size": 384}')
    return d


def test_the_memo_gives_the_same_key_and_skips_hashing(tmp_path, monkeypatch):
    d, memo = _model_dir(tmp_path), tmp_path / "cache"
    plain = onnx_minilm.export_key(d)
    assert onnx_minilm.export_key(d, memo) == plain  # computed and remembered
    assert len(list(memo.glob("key-*.json"))) == 1
    hashed = []
    real = onnx_minilm._sha256_file
    monkeypatch.setattr(onnx_minilm, "_sha256_file", lambda p: hashed.append(p) or real(p))
    assert onnx_minilm.export_key(d, memo) == plain and hashed == []  # the memo answered


def test_changed_weights_are_hashed_again(tmp_path):
    d, memo = _model_dir(tmp_path), tmp_path / "cache"
    first = onnx_minilm.export_key(d, memo)
    w = d / "model.safetensors"
    w.write_bytes(b"v" * 4096)  # same size; a new mtime (forced below in case the clock is coarse)
    st = w.stat()
    os.utime(w, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    second = onnx_minilm.export_key(d, memo)
    assert second["weights_sha256"] != first["weights_sha256"]
    assert second == onnx_minilm.export_key(d)


def test_a_damaged_or_unwritable_memo_only_costs_the_hash(tmp_path):
    d, memo = _model_dir(tmp_path), tmp_path / "cache"
    key = onnx_minilm.export_key(d, memo)
    next(memo.glob("key-*.json")).write_text("{not json")
    assert onnx_minilm.export_key(d, memo) == key
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    assert onnx_minilm.export_key(d, blocked) == key  # cannot write there: computed, no error
