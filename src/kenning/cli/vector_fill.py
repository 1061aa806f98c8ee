"""The deferred vector lane on the command line (issue 24 §1): what `kenning ingest` does after an import that left
vectors to make, and `kenning reindex --vectors` (the fill, in the foreground with a progress bar and an ETA)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kenning.cli.common import console, ingest_progress


def after_ingest(vault: Any, config_path: Path | None, as_of: str | None, stages: str | None) -> dict[str, Any] | None:
    """When the import left search vectors to make: start the background fill (``vector_fill.mode: background``)
    or say how to make them. Returns what was done (for --json), or None when the vector lane is complete."""
    from kenning.retrieve import vector_fill

    if stages is not None and "index" not in [s.strip() for s in stages.split(",")]:
        return None  # a partial import: the index stage did not run
    state = vault.vector_lane()
    if state["complete"]:
        return None
    mode = vault.config.vector_fill.mode
    out: dict[str, Any] = {"missing": state["missing"], "total": state["total"], "mode": mode, "pid": None}
    if mode == "background" and not vault.conn.readonly("main"):
        running = state["filling_pid"]
        out["pid"] = running or vector_fill.spawn_background(vault.path, config_path, as_of)
        out["log"] = str(vector_fill.log_path(vault.path))
    return out


def print_after_ingest(info: dict[str, Any] | None) -> None:
    if not info:
        return
    what = f"{info['missing']:,} of {info['total']:,} search documents still need vectors"
    if info.get("pid"):
        console.print(f"vectors: {what}; making them in the background (pid {info['pid']}). Search works now; "
                      "`kenning status` shows progress, `kenning reindex --vectors` waits for it.", highlight=False)
    else:
        console.print(f"vectors: {what}; search works now without them — `kenning reindex --vectors` makes them.",
                      highlight=False)


def fill_foreground(vault: Any, *, as_of: str | None, quiet: bool) -> dict[str, Any]:
    """`kenning reindex --vectors`: wait for a background fill if one runs (its progress shown from the vault's
    counts), then fill whatever is left here."""
    from kenning.retrieve import vector_fill

    waited = None
    with ingest_progress(not quiet) as progress:
        while True:
            try:
                counts = vault.fill_vectors(as_of=as_of, progress=progress)
                break
            except vector_fill.FillBusy as busy:
                waited = busy.pid
                if progress is None and not quiet:
                    console.print(f"waiting for the background vector fill (pid {busy.pid})…", highlight=False)
                while vector_fill.running_fill(vault.path):
                    if progress is not None:
                        s = vault.vector_lane()
                        progress(records=s["embedded"], total=s["total"], file="embeddings (background)",
                                 unit="documents with vectors")
                    time.sleep(0.5)
    return {"counts": counts, "waited_for_pid": waited, "vector_lane": vault.vector_lane()}
