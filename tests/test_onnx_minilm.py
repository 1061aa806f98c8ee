"""The minilm backend's ONNX runtime (decisions M16–M19): the same vectors as torch, an export made once per
model and reused across processes, damaged or half-written cache files handled, torch forced or as the fallback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from kenning.config import load_config
from kenning.config.loader import ConfigError
from kenning.llm import onnx_minilm
from kenning.llm.embed import MiniLMEmbedder, get_embedder, minilm_model_path
from kenning.llm.errors import EmbeddingError
from tests.conftest import SRC

pytestmark = [pytest.mark.model, pytest.mark.slow]

SENTENCES = [
    "i am patient", "i am a patient person", "I never liked crowds.", "I love small dinners with old friends",
    "My sister moved to Lisbon in 2019 and I visit her every summer.", "I don't think I'm good at saying no.",
    "", "  ", "Ça me plaît beaucoup — je crois.", "我喜欢喝茶", "I'm SO tired of meetings!!!", "ok",
    # longer than max_seq_length (256 tokens): both runtimes truncate the same way
    " ".join(["I keep notes about everything I read, and sometimes I forget where I put them."] * 25),
]

# Loads the ONNX model in a fresh process and reports what happened (the way a second `kenning` process would).
_PROBE = """
import json, sys
from kenning.llm import onnx_minilm
from kenning.llm.embed import minilm_model_path
m = onnx_minilm.load_onnx_minilm(minilm_model_path(), threads=1, cache_dir=sys.argv[1])
v = m.encode(["i am patient"])[0]
print(json.dumps({"dir": str(m.export_dir), "made": m.exported_now, "torch": "torch" in sys.modules,
                  "vector": v.tobytes().hex()}))
"""


def _load_in_subprocess(cache: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", _PROBE, str(cache)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=900)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def first_use(tmp_path_factory):
    """Two processes start on an empty cache at the same time; returns (cache dir, their reports)."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    procs = [_load_in_subprocess(cache), _load_in_subprocess(cache)]
    return cache, [_result(p) for p in procs]


@pytest.fixture
def fresh_sessions():
    onnx_minilm.clear_sessions()
    yield
    onnx_minilm.clear_sessions()


def _cfg(cache: Path, **minilm) -> object:
    return load_config(overrides={"embeddings": {"minilm": {"onnx_cache_dir": str(cache), **minilm}}})


def test_concurrent_first_use_exports_once(first_use):
    cache, reports = first_use
    assert sorted(r["made"] for r in reports) == [False, True]       # one exported, the other waited and reused
    assert reports[0]["dir"] == reports[1]["dir"]
    assert reports[0]["vector"] == reports[1]["vector"]              # same bytes from both processes
    exports = [p for p in cache.iterdir() if p.is_dir()]
    assert [p.name for p in exports] == [Path(reports[0]["dir"]).name]  # no temporary directory left behind
    assert sorted(f.name for f in exports[0].iterdir()) == ["meta.json", "model.onnx"]
    meta = json.loads((exports[0] / "meta.json").read_text())
    assert meta["key"]["opset"] == onnx_minilm.OPSET and len(meta["key"]["weights_sha256"]) == 64


def test_the_export_is_reused_without_torch(first_use):
    cache, _ = first_use
    export = next(p for p in cache.iterdir() if p.is_dir())
    before = {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in export.iterdir()}
    r = _result(_load_in_subprocess(cache))
    assert r["made"] is False and r["dir"] == str(export)
    assert r["torch"] is False  # embedding from the cached export needs neither torch nor an export
    assert {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in export.iterdir()} == before


def test_onnx_and_torch_give_the_same_vectors(first_use, fresh_sessions):
    cache, _ = first_use
    onnx = get_embedder(_cfg(cache, runtime="onnx"))
    torch_ = get_embedder(_cfg(cache, runtime="torch"))
    a, b = onnx.embed(SENTENCES), torch_.embed(SENTENCES)
    assert onnx.active_runtime == "onnx" and torch_.active_runtime == "torch"
    assert onnx.model_id == torch_.model_id == "minilm:all-MiniLM-L6-v2"  # same model, same cache and tables
    assert a.shape == b.shape == (len(SENTENCES), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    assert cos.min() >= 0.99999, cos
    # batching and order do not change a text's vector beyond float noise (length-sorted batches)
    single = onnx.embed([SENTENCES[4]])[0]
    assert float(single @ a[4]) >= 0.99999
    # the calibrated pair from the issue keeps its similarity
    assert abs(float(a[0] @ a[1]) - float(b[0] @ b[1])) < 1e-4


def test_same_text_same_bytes_across_instances(first_use, fresh_sessions):
    cache, _ = first_use
    v1 = get_embedder(_cfg(cache, runtime="onnx")).embed(SENTENCES)
    onnx_minilm.clear_sessions()  # a new session, as in another process
    v2 = get_embedder(_cfg(cache, runtime="onnx")).embed(SENTENCES)
    assert v1.tobytes() == v2.tobytes()


def test_a_damaged_cache_is_exported_again(first_use, tmp_path, fresh_sessions):
    cache, _ = first_use
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    export = next(p for p in mine.iterdir() if p.is_dir())
    onnx_file = export / "model.onnx"
    size = onnx_file.stat().st_size
    with open(onnx_file, "r+b") as f:  # a half-written file
        f.truncate(size // 2)
    leftover = mine / f".tmp-{export.name}-killed"  # an export a killed process never finished
    leftover.mkdir()
    (leftover / "model.onnx").write_bytes(b"\0" * 100)
    with pytest.warns(UserWarning, match="damaged"):
        m = onnx_minilm.load_onnx_minilm(minilm_model_path(), threads=1, cache_dir=mine)
    assert m.exported_now is True and m.export_dir == export and onnx_file.stat().st_size > size // 2
    assert not leftover.exists()
    assert float(m.encode(["i am patient"])[0] @ m.encode(["i am patient"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_wrong_weights_in_the_cache_are_caught_by_the_probes(first_use, tmp_path, fresh_sessions):
    """A file that loads but computes something else (here: the probe vectors it must reproduce are changed)
    is rejected and rebuilt, never used."""
    cache, _ = first_use
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    export = next(p for p in mine.iterdir() if p.is_dir())
    meta = json.loads((export / "meta.json").read_text())
    meta["probe_vectors"][0] = list(reversed(meta["probe_vectors"][0]))
    (export / "meta.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="probe vectors"):
        m = onnx_minilm.load_onnx_minilm(minilm_model_path(), threads=1, cache_dir=mine)
    assert m.exported_now is True
    assert json.loads((export / "meta.json").read_text())["probe_vectors"][0] != meta["probe_vectors"][0]


def test_export_failure_warns_and_falls_back_to_torch(tmp_path, fresh_sessions, minilm_embedder):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should go")
    emb = get_embedder(_cfg(blocker / "onnx", runtime="auto"))
    with pytest.warns(UserWarning, match="embedding with torch instead"):
        v = emb.embed(["i am patient"])
    assert emb.active_runtime == "torch" and "could not export" in emb.fallback_reason
    assert float(v[0] @ minilm_embedder.embed(["i am patient"])[0]) >= 0.99999
    # the failure is remembered for the process: a second embedder falls back at once, with the same warning
    again = get_embedder(_cfg(blocker / "onnx", runtime="onnx"))
    with pytest.warns(UserWarning):
        assert again.active_runtime == "torch"


def test_runtime_torch_is_honoured(tmp_path, fresh_sessions):
    emb = get_embedder(_cfg(tmp_path / "never-used", runtime="torch"))
    v = emb.embed(["i am patient", "i am a patient person"])
    assert emb.active_runtime == "torch" and emb.fallback_reason is None
    assert not (tmp_path / "never-used").exists()  # no export attempted
    assert float(v[0] @ v[1]) == pytest.approx(0.7658, abs=1e-3)


def test_auto_falls_back_when_onnxruntime_cannot_be_imported(tmp_path, monkeypatch, fresh_sessions):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    auto = get_embedder(_cfg(tmp_path / "c", runtime="auto"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing optional runtime is not worth a warning under auto
        v = auto.embed(["i am patient"])
    assert auto.active_runtime == "torch" and auto.fallback_reason == "onnxruntime is not installed"
    assert v.shape == (1, 384)
    forced = get_embedder(_cfg(tmp_path / "c", runtime="onnx"))
    with pytest.raises(EmbeddingError, match="runtime is onnx but onnxruntime is not installed"):
        forced.embed(["i am patient"])


def test_runtime_setting_is_validated():
    with pytest.raises(ConfigError, match="runtime"):
        load_config(overrides={"embeddings": {"minilm": {"runtime": "tensorrt"}}})
    with pytest.raises(EmbeddingError, match="unknown minilm runtime"):
        MiniLMEmbedder(runtime="tensorrt")
    d = load_config().embeddings.minilm
    assert (d.runtime, d.onnx_threads, d.onnx_cache_dir, d.onnx_spin_wait) == ("auto", 0, None, False)


def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("KENNING_ONNX_CACHE", str(tmp_path / "env"))
    assert onnx_minilm.default_cache_dir() == tmp_path / "env"
    assert onnx_minilm.default_cache_dir(str(tmp_path / "cfg")) == tmp_path / "cfg"  # config wins
    monkeypatch.delenv("KENNING_ONNX_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert onnx_minilm.default_cache_dir() == tmp_path / "xdg" / "kenning" / "onnx"


def test_calibration_is_the_same_on_both_runtimes(first_use, fresh_sessions):
    """The calibrated thresholds (embeddings.thresholds) stay valid: both runtimes fit the same values with the
    same precision and recall, and no pair's similarity moves by more than float noise."""
    from kenning.llm.calibrate import calibrate_backend, load_pairs

    cache, _ = first_use
    pairs = load_pairs()
    reports, sims = {}, {}
    for rt in ("onnx", "torch"):
        cfg = _cfg(cache, runtime=rt)
        reports[rt] = calibrate_backend(cfg, "minilm", pairs)
        emb = get_embedder(cfg)
        a, b = emb.embed([p.a for p in pairs]), emb.embed([p.b for p in pairs])
        assert emb.active_runtime == rt
        sims[rt] = (a * b).sum(axis=1)
    assert reports["onnx"]["thresholds"] == reports["torch"]["thresholds"] == \
        load_config().embeddings.thresholds["all-MiniLM-L6-v2"].model_dump()
    assert reports["onnx"]["at_fitted"] == reports["torch"]["at_fitted"]
    assert float(np.abs(sims["onnx"] - sims["torch"]).max()) < 1e-5


def test_embed_cli_reports_the_runtime(first_use, tmp_path, kenning_cli):
    cache, _ = first_use
    torch_cfg = tmp_path / "torch.yaml"
    torch_cfg.write_text("embeddings:\n  minilm:\n    runtime: torch\n", encoding="utf-8")
    env = {"HF_HUB_OFFLINE": "1", "KENNING_ONNX_CACHE": str(cache)}
    out = {}
    for name, extra in (("auto", []), ("torch", ["--config", str(torch_cfg)])):
        r = kenning_cli("embed", "i am patient", "i am a patient person", "--json", *extra, env=env)
        assert r.returncode == 0, r.stderr
        out[name] = json.loads(r.stdout)
    assert out["auto"]["runtime"] == "onnx" and out["torch"]["runtime"] == "torch"
    assert out["auto"]["model_id"] == out["torch"]["model_id"] == "minilm:all-MiniLM-L6-v2"
    assert out["auto"]["similarities"][0]["similarity"] == pytest.approx(
        out["torch"]["similarities"][0]["similarity"], abs=1e-5)
    assert not [p for p in cache.iterdir() if p.name.startswith(".tmp")]
