"""Load the query encoder beside a one-shot search's other start-up work (issue 24 §4; decisions F11).

A CLI ``kenning search`` first imports the search modules and reads the vault's search metadata, then embeds the
question — and the first embedding loads all-MiniLM-L6-v2's ONNX session (~0.15 s of C++ that runs without the
GIL, plus importing onnxruntime). Started on a thread as soon as the config is known, the load overlaps that
work; the search's own embedder then finds the session ready (``onnx_minilm`` keeps one per process and setting,
behind a lock, so it is never loaded twice). Same session, same vectors: only the waiting changes.
"""

from __future__ import annotations

import threading
from typing import Any


def start_query_encoder(config: Any) -> threading.Thread | None:
    """A started thread loading the ONNX MiniLM session ``config`` selects, or None when there is nothing to load
    ahead (vector lane off, another backend, torch asked for). Failures are left for the search to report."""
    e = config.embeddings
    if not config.retrieval.vector.enabled or not str(e.backend).startswith("minilm"):
        return None
    if e.minilm.runtime == "torch" or e.minilm.device != "cpu":
        return None

    def load() -> None:
        try:
            from kenning.llm.embed import get_embedder

            embedder = get_embedder(config)
            if embedder.runtime in ("auto", "onnx"):
                from kenning.llm import onnx_minilm

                if onnx_minilm.onnxruntime_available():
                    embedder.active_runtime  # noqa: B018 - loads the session into onnx_minilm's per-process cache
        except Exception:  # noqa: BLE001 - the search's own embedder meets (and reports) the same problem
            pass

    t = threading.Thread(target=load, name="kenning-query-encoder", daemon=True)
    t.start()
    return t
