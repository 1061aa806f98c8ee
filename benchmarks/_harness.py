"""Shared benchmark plumbing: run work in a fresh process and read its wall time, CPU time and peak RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
MEASURE = ROOT / "benchmarks" / "_measure.py"


@dataclass
class Measure:
    wall: float
    cpu: float
    peak_rss_mb: float


def _run(args: list[str], env: dict | None) -> Measure:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", **(env or {})}
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tf:
        result_file = tf.name
    try:
        proc = subprocess.run([sys.executable, str(MEASURE), result_file, *args], env=full_env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{args} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        data = json.loads(Path(result_file).read_text())
    finally:
        os.unlink(result_file)
    return Measure(data["wall"], data["cpu"], data["peak_rss_mb"])


def measure_module(module: str, *args: str, env: dict | None = None) -> Measure:
    return _run(["-m", module, *args], env)


def measure_code(code: str, *args: str, env: dict | None = None) -> Measure:
    return _run(["-c", code, *args], env)


def best(fn, repeat: int = 3) -> Measure:
    runs = [fn() for _ in range(repeat)]
    return Measure(min(r.wall for r in runs), min(r.cpu for r in runs), max(r.peak_rss_mb for r in runs))
