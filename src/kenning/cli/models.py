"""Model-layer commands: ``kenning llm ping``, ``kenning embed``, ``kenning embeddings status|migrate``,
``kenning calibrate``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, console, fail, open_vault, out, print_json, user_errors

llm_app = typer.Typer(help="Check the configured LLM endpoint.", no_args_is_help=True)
embeddings_app = typer.Typer(help="The vault's vector index: status and embedding-model migration.",
                             no_args_is_help=True)

BackendOpt = Annotated[
    Optional[str],
    typer.Option("--backend", "-b", metavar="minilm|hash|openai[:MODEL]",
                 help="Embedding backend (default: embeddings.backend in config).", show_default=False),
]


def _config(db: Path | None, config: Path | None):
    from kenning.config import load_config

    with user_errors():
        return load_config(config, db)


# -- kenning llm ping -----------------------------------------------------------------------------------------
@llm_app.command("ping")
def llm_ping(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """One tiny structured call to the configured endpoint: the model, the latency, and whether JSON mode works."""
    from kenning.llm.client import LLMClient

    cfg = _config(db, config)
    if not (cfg.llm.base_url and cfg.llm.model):
        fail("`kenning llm ping` needs an endpoint: set KENNING_LLM_BASE_URL and KENNING_LLM_MODEL (and "
             "KENNING_LLM_API_KEY if it wants one), or llm.base_url / llm.model in your config")
    with user_errors():
        client = LLMClient(cfg, mode="live")
        try:
            report = client.ping()
        finally:
            client.close()
    if json_out:
        print_json(report)
    else:
        out.print(f"endpoint: {report['endpoint']}")
        out.print(f"model: {report['model']}" + (f" (endpoint reports {report['reported_model']})"
                                                 if report.get("reported_model") else ""))
        out.print(f"latency: {report['latency_ms']:.0f} ms")
        for t in report["tries"]:
            mark = "[green]ok[/]" if t["json_ok"] else f"[yellow]no[/] ({t.get('problem')})"
            out.print(f"structured output via {t['response_format']}: {mark}")
        if report["json_mode"] is None:
            out.print("[bold red]no structured-output form worked[/]: Kenning will record every answer from this "
                      "model as malformed")
        elif report["json_mode"] != cfg.llm.response_format:
            out.print(f"[yellow]set llm.response_format: {report['json_mode']}[/] (configured: "
                      f"{cfg.llm.response_format})")
    if report["json_mode"] is None:
        raise typer.Exit(2)


# -- kenning embed --------------------------------------------------------------------------------------------
def embed(
    texts: Annotated[list[str], typer.Argument(help="Texts to embed.", show_default=False)],
    backend: BackendOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    show: Annotated[int, typer.Option("--show", help="Vector components to print per text.")] = 8,
) -> None:
    """Embed TEXT… with the active backend: vectors, and pairwise cosine similarities judged against the model's
    match / no_match thresholds."""
    import numpy as np

    from kenning.llm.embed import get_embedder
    from kenning.llm.thresholds import thresholds_for

    cfg = _config(db, config)
    with user_errors():
        emb = get_embedder(cfg, backend)
        t0 = time.perf_counter()
        vecs = emb.embed(texts)
        ms = (time.perf_counter() - t0) * 1000
        th = thresholds_for(cfg, emb.model_name, warn=False)
    runtime = getattr(emb, "active_runtime", None)  # minilm: onnx | torch (decisions M16)
    sims = vecs @ vecs.T
    pairs = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            s = float(sims[i, j])
            verdict = "match" if s >= th.match else "no_match" if s < th.no_match else "uncertain"
            pairs.append({"a": i, "b": j, "similarity": round(s, 6), "verdict": verdict})
    if json_out:
        print_json({"model_id": emb.model_id, "dimension": emb.dimension, "runtime": runtime,
                    "milliseconds": round(ms, 2),
                    "thresholds": th.model_dump(),
                    "texts": [{"text": t, "norm": round(float(np.linalg.norm(v)), 6), "vector": [float(x) for x in v]}
                              for t, v in zip(texts, vecs)],
                    "similarities": pairs})
        return
    out.print(f"[bold]{emb.model_id}[/] · {emb.dimension} dimensions{f' · {runtime}' if runtime else ''} · "
              f"{ms:.0f} ms · thresholds match "
              f"{th.match} / no_match {th.no_match}")
    for i, (t, v) in enumerate(zip(texts, vecs)):
        head = ", ".join(f"{x:+.3f}" for x in v[:show])
        out.print(f"[{i}] {t!r}  norm {np.linalg.norm(v):.3f}  [{head}{', …' if emb.dimension > show else ''}]",
                  markup=False, highlight=False)
    if pairs:
        tbl = Table(show_edge=False)
        for col in ("pair", "similarity", "verdict"):
            tbl.add_column(col)
        for p in pairs:
            tbl.add_row(f"{p['a']}–{p['b']}", f"{p['similarity']:.4f}", p["verdict"])
        out.print(tbl)


# -- kenning embeddings status | migrate ----------------------------------------------------------------------
@embeddings_app.command("status")
def embeddings_status(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """The active embedding model and table, items per space, a migration in progress, the cache."""
    from kenning.llm.index import VectorIndex

    with open_vault(db, config, readonly=True) as vault, user_errors():
        st = VectorIndex(vault.conn, vault.config).status()
    if json_out:
        print_json(st)
        return
    a = st["active"]
    if a is None:
        out.print(f"no vectors yet; the first will use {st['configured']['model_id']} "
                  f"({st['configured']['dimension']}-d)")
    else:
        out.print(f"active: [bold]{a['model_id']}[/] ({a['dimension']}-d, stored as {a['storage']}) in {a['table']}: "
                  f"{a['vectors']:,} vectors for {st['items']:,} items (since {a['activated_at_utc']})")
    for s in st["spaces"]:
        out.print(f"  space {s['space']}: {s['items']:,}")
    b = st["building"]
    if b is not None:
        out.print(f"migration in progress → {b['model_id']} ({b['dimension']}-d): {b['items_done']:,}/"
                  f"{b['items_total']:,} ({b['progress_pct']}%); resume with `kenning embeddings migrate "
                  f"{b['model_id']}`")
    if not st["matches_config"]:
        c = st["configured"]
        out.print(f"[yellow]config asks for {c['model_id']} ({c['dimension']}-d)[/]: run `kenning embeddings "
                  f"migrate {c['model_id']} --dimension {c['dimension']}`")
    for c in st["cache"]:
        out.print(f"  cache {c['model_id']} ({c['dimension']}-d): {c['vectors']:,} vectors")


@embeddings_app.command("migrate")
def embeddings_migrate(
    model: Annotated[Optional[str], typer.Argument(metavar="MODEL", help="Target: minilm, hash, openai[:MODEL] "
                                                   "(default: embeddings.backend).", show_default=False)] = None,
    dimension: Annotated[Optional[int], typer.Option("--dimension", help="Vector size (default: "
                                                     "embeddings.dimension).", show_default=False)] = None,
    batch_size: Annotated[Optional[int], typer.Option("--batch-size", help="Items per batch (default: "
                                                      "embeddings.vector_index.migration_batch_size).",
                                                      show_default=False)] = None,
    cancel: Annotated[bool, typer.Option("--cancel", help="Drop a migration in progress instead.")] = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Re-embed every indexed item with MODEL into a new table while queries keep using the current one, then
    swap atomically (DOC72 §3.7). Interrupted, it resumes where it stopped."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from kenning.llm.index import VectorIndex
    from kenning.retrieve.vector_fill import register_text_source

    with open_vault(db, config) as vault, user_errors():
        idx = VectorIndex(vault.conn, vault.config)
        register_text_source(vault.config)  # the search space keeps no text; the fill says where it comes from (X2)
        if cancel:
            dropped = idx.cancel_migration()
            result: dict[str, Any] = {"status": "cancelled" if dropped else "nothing_to_cancel"}
        elif quiet or json_out:
            result = idx.migrate(model, dimension=dimension, batch_size=batch_size)
        else:
            with Progress(TextColumn("[bold]re-embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                          console=console, transient=True) as bar:
                task = bar.add_task("migrate", total=None)
                result = idx.migrate(model, dimension=dimension, batch_size=batch_size,
                                     progress=lambda done, total: bar.update(task, completed=done, total=total))
    if json_out:
        print_json(result)
        return
    status = result["status"]
    if status == "swapped":
        prev = result["previous"]
        console.print(f"[green]swapped[/]: {result['items']:,} items now use {result['model_id']} "
                      f"({result['dimension']}-d)" + (f", was {prev['model_id']} ({prev['dimension']}-d)" if prev else ""))
    elif status == "already_active":
        console.print(f"{result['model_id']} ({result['dimension']}-d) is already the active model")
    elif status == "converted":
        console.print(f"{result['model_id']} ({result['dimension']}-d): {result['items']:,} vectors now stored as "
                      f"{result['storage']} (from the stored vectors; nothing re-embedded)")
    elif status == "created":
        console.print(f"no vectors yet: new items will use {result['model_id']} ({result['dimension']}-d)")
    else:
        console.print(status.replace("_", " "))


# -- kenning calibrate ----------------------------------------------------------------------------------------
def calibrate(
    backends: Annotated[Optional[list[str]], typer.Option("--backend", "-b", metavar="minilm|hash|openai[:MODEL]",
                                                          help="Backend(s) to calibrate (repeatable; default: hash "
                                                               "and minilm).", show_default=False)] = None,
    pairs: Annotated[Optional[Path], typer.Option("--pairs", help="A JSONL file of {id, label, a, b, split} "
                                                  "(default: the bundled 360 pairs).", show_default=False)] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the report as Markdown (for "
                                           "benchmarks/RESULTS.md).")] = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Fit match / no_match / tension similarity thresholds per embedding model on labelled first-person belief
    pairs (paraphrase / different / opposite), and report precision and recall at them."""
    from kenning.llm.calibrate import calibrate as run, render_markdown

    cfg = _config(db, config)
    with user_errors():
        try:
            report = run(cfg, backends or ["hash", "minilm"], pairs)
        except ValueError as e:
            fail(str(e))
    if json_out:
        print_json(report)
        return
    if markdown:
        import sys

        sys.stdout.write(render_markdown(report) + "\n")
        return
    for b in report["backends"]:
        th = b["thresholds"]
        out.print(f"[bold]{b['backend']}[/] ({b['model_id']}, {b['dimension']}-d): match {th['match']:.3f} · "
                  f"no_match {th['no_match']:.3f} · tension {th['tension']:.3f}")
        tbl = Table(show_edge=False)
        for col in ("thresholds", "split", "match P", "match R", "no_match P", "no_match R", "tension P",
                    "tension R", "opposites ≥ match"):
            tbl.add_column(col)
        rows = [("fitted", k, v) for k, v in b["at_fitted"].items() if v is not None]
        rows.append(("seed .90/.75/.88", "all", b["at_seed_values"]))
        f = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
        for name, split, m in rows:
            tbl.add_row(name, split, f(m["match"]["precision"]), f(m["match"]["recall"]),
                        f(m["no_match"]["precision"]), f(m["no_match"]["recall"]), f(m["tension"]["precision"]),
                        f(m["tension"]["recall"]), f(m["opposites_matched"]))
        out.print(tbl)
        if b["configured"] is not None and {k: round(v, 3) for k, v in b["configured"].items()} != th:
            out.print(f"  [yellow]config has {b['configured']}[/] for {b['model_name']}: set "
                      f"embeddings.thresholds.{b['model_name']} to adopt the fitted values")
