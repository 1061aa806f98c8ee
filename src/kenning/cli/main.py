"""``kenning``: import what you have said and written; ask what you believe and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import orjson
import typer
from rich.table import Table

from kenning.cli.common import (ConfigOpt, DbOpt, JsonOpt, LlmOpt, console, fail, ingest_progress, llm_mode,
                                open_vault, out, print_json, showing, user_errors)

# main's own commands (init, ingest, status, rejects, runs, config, bench, demo). The `kenning` executable is
# cli/entry.py: its lazy group (cli/lazy.py) takes these through `register` when one of them runs; every other
# command module is listed by name in cli/commands.py (issue 24 §4, F1) — add new commands there, not here.
app = typer.Typer(
    name="kenning",
    help="Kenning turns your chats, notes and documents into a personal, bitemporal knowledge and belief graph.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)

config_app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")
bench_app = typer.Typer(help="Synthetic data and benchmarks.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


def register(target: typer.Typer) -> None:
    """Lend this module's commands to the lazy root (cli/lazy.py)."""
    target.registered_commands.extend(app.registered_commands)
    target.registered_groups.extend(app.registered_groups)


@app.command()
def init(db: DbOpt = None, config: ConfigOpt = None) -> None:
    """Create an empty vault (ingest also creates one when needed)."""
    with open_vault(db, config) as vault:
        console.print(f"vault ready at [bold]{vault.path}[/]")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="conversations.json files, ChatGPT or Claude.ai export .zip files "
                                                "or folders, transcript .json/.jsonl files, LoCoMo .json files, "
                                                "Markdown/Obsidian notes folders, .mbox mailboxes, .ics calendars, and "
                                                "wiki workspace folders (wiki/ pages + *.beliefs.json sidecars).",
                                                show_default=False)],
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the run clock at this UTC time "
                                                 "(deterministic runs).")] = None,
    stages: Annotated[Optional[str], typer.Option("--stages", help="Stages to run, e.g. '0,1' (default: all that "
                                                  "exist).")] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    workspace: Annotated[Optional[str], typer.Option("--workspace", "-w", help="Belief workspace for wiki folders "
                                                     "(default: personal).", show_default=False)] = None,
    llm: LlmOpt = None,
    self_name: Annotated[Optional[str], typer.Option("--self", help="Your name in transcripts (and as a mail "
                                                     "sender or event organizer): your turns get role 'user' (others "
                                                     "'unknown').")] = None,
    incognito: Annotated[bool, typer.Option("--incognito", help="Do not learn from these files: their "
                                            "conversations are kept raw only (or dropped, intake.incognito.keep) "
                                            "and never mined or shown in context.")] = False,
    include_forgotten: Annotated[bool, typer.Option("--include-forgotten", help="Import conversations you removed "
                                                    "with `kenning forget` again (they are skipped otherwise).")
                                 ] = False,
    follow_symlinks: Annotated[bool, typer.Option("--follow-symlinks", help="Let a wiki workspace cite raw files "
                                                  "through links that point outside it (refused otherwise).")
                               ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Every stage's counters and warnings, not just "
                                          "the summary.")] = False,
) -> None:
    """Import ChatGPT and Claude.ai exports, transcripts (JSON/JSONL), LoCoMo files, notes folders, mbox mail, .ics
    calendars and wiki workspaces. Re-importing the same input changes nothing; a newer one adds what is new.

    A wiki workspace is verified whole first (coverage, provenance links, supersession sanity, statement
    support); if any check fails the import is rejected with its reasons and nothing is committed."""
    from kenning.beliefs.judge import JudgeUnavailable, judge_for
    from kenning.cli.beliefs import _rejections
    from kenning.sources.inputs import WIKI_WORKSPACE, classify_input

    import time

    paths = preflight_inputs(paths, config)  # refuses bad paths before a vault exists (issue 23 part 3)
    started = time.monotonic()
    with open_vault(db, config) as vault, user_errors(), ingest_progress(not quiet and not json_out) as progress:
        if include_forgotten:  # issue 23 §1
            vault.config = vault.config.model_copy(update={"forget": vault.config.forget.model_copy(
                update={"include_forgotten": True})})
        mode = llm_mode(vault.config, llm)
        wcfg = vault.config.beliefs.wiki
        has_wiki = any(classify_input(p, wcfg.wiki_dir, wcfg.sidecar_suffix) == WIKI_WORKSPACE for p in paths)
        try:
            # The wiki verifier's judge follows an explicit --llm; otherwise beliefs.verifier.judge decides.
            judge = judge_for(mode if (has_wiki and llm is not None) else None, vault.config.beliefs.verifier.judge)
        except JudgeUnavailable as e:
            fail(str(e))
        results = _rejections(lambda: vault.ingest(paths, as_of=as_of, stages=stages, progress=progress,
                                                   workspace=workspace, judge=judge, self_name=self_name,
                                                   llm=llm, incognito=incognito,
                                                   follow_symlinks=follow_symlinks, defer_vectors=True))
        tables = vault.status()["tables"] if not (json_out or verbose) else {}
        from kenning.cli.vector_fill import after_ingest, print_after_ingest

        vectors = after_ingest(vault, config, as_of, stages)  # the vector lane fills afterwards (issue 24 §1)
    report = [{"stage": r.stage, "run_id": r.run_id, "counts": r.counts,
               "warnings": _warning_summary(r.events)} for r in results]
    raw = next((r for r in results if r.stage == "1"), None)
    if json_out:
        print_json({"runs": report, **({"vectors": vectors} if vectors else {})})
    elif verbose:
        for r in results:
            print_run_result(r)
        print_after_ingest(vectors)
    else:
        from kenning.cli.ingest_summary import print_summary

        print_summary(results, tables, time.monotonic() - started)
        print_after_ingest(vectors)
    if raw is not None and raw.counts.get("conversations_imported", 0) == 0 and (
            raw.counts.get("rejected", 0) or raw.counts.get("files_failed", 0)):
        fail("nothing could be imported (see the rejects above, or `kenning rejects`)", code=2)


def preflight_inputs(paths: list[Path], config: Path | None) -> list[Path]:
    from kenning.config.loader import load_config
    from kenning.sources.preflight import check_inputs

    with user_errors():
        wcfg = load_config(config).beliefs.wiki
    check = check_inputs(paths, wcfg.wiki_dir, wcfg.sidecar_suffix)
    for note in check.notes:
        console.print(f"[yellow]note:[/] {note}")
    if check.refused:
        fail("nothing was imported and no vault was touched:\n  " + "\n  ".join(check.refused), code=2)
    if not check.paths:
        console.print("nothing to import.")
        raise typer.Exit(0)
    return check.paths


def _warning_summary(events: list[tuple]) -> dict[str, int]:
    summary: dict[str, int] = {}
    for e in events:
        if e[2] in ("WARN", "ERROR"):
            summary[e[3]] = summary.get(e[3], 0) + 1
    return dict(sorted(summary.items()))


def print_run_result(r) -> None:
    from kenning.pipeline.stages import stage_title

    title = stage_title(r.stage)
    counts = {k: v for k, v in r.counts.items() if not isinstance(v, (list, dict))}
    line = ", ".join(f"{k.replace('_', ' ')} {v:,}" if isinstance(v, int) else f"{k.replace('_', ' ')} {v}"
                     for k, v in counts.items() if v)
    console.print(f"[bold green]stage {r.stage}[/] {title}: {line or 'nothing to do'}")
    for change in r.counts.get("changed", []):
        console.print(f"  changed: {change['title'] or change['conversation_id']} "
                      f"(+{change['messages_new']} new, {change['messages_changed']} edited messages)")
    errors = [e for e in r.events if e[2] in ("ERROR",) or e[3].startswith(("REJECTED_", "REPAIRED_"))]
    for e in errors[:20]:
        console.print(f"  [yellow]{e[3]}[/] {e[4]}")
    if len(errors) > 20:
        console.print(f"  … and {len(errors) - 20} more (`kenning rejects`)")
    other = {k: v for k, v in _warning_summary(r.events).items() if not k.startswith(("REJECTED_", "REPAIRED_"))}
    if other:
        console.print("  warnings: " + ", ".join(f"{k} ×{v}" for k, v in other.items()))


@app.command()
def status(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Row counts per table and each stage's latest run."""
    with open_vault(db, config, readonly=True) as vault:
        st = vault.status()
    if json_out:
        for r in st["last_runs"]:
            r["counts"] = orjson.loads(r.pop("counts_json")) if r.get("counts_json") else None
        print_json(st)
        return
    t = Table(title=f"vault {st['db']}", show_edge=False)
    t.add_column("table")
    t.add_column("rows", justify="right")
    for name, n in st["tables"].items():
        t.add_row(name, f"{n:,}")
    out.print(t)
    r = Table(title="latest run of each stage", show_edge=False)
    for col in ("stage", "started", "status", "summary"):
        r.add_column(col)
    for run in st["last_runs"]:
        counts = orjson.loads(run["counts_json"]) if run["counts_json"] else {}
        summary = ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, int) and v)[:100]
        r.add_row(run["stage"], run["started_at_utc"], run["status"], run["error"] or summary)
    out.print(r)
    lane = st.get("vector_lane") or {}
    if lane.get("enabled"):
        from kenning.retrieve.vector_fill import lane_note

        out.print(lane_note(lane) or f"vector lane complete: {lane['embedded']:,} search documents have vectors",
                  highlight=False)


@app.command()
def rejects(
    reject_id: Annotated[Optional[str], typer.Argument(help="Show one reject whole (id or prefix).")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    limit: Annotated[int, typer.Option(help="How many to list.")] = 100,
) -> None:
    """Records that could not be imported (or were repaired), with the reason and the raw text kept."""
    from kenning.store import raw as raw_sql

    with open_vault(db, config, readonly=True) as vault:
        if reject_id:
            found = raw_sql.get_reject(vault.conn, reject_id)
            if found is None:
                fail(f"no single reject matches {reject_id!r}")
            if json_out:
                print_json(found)
            else:
                for k, v in found.items():
                    out.print(f"[bold]{k}[/]: {v}")
            return
        items = vault.rejects(limit)
        total = vault.status()["tables"].get("rejects") if len(items) >= limit else None
    if json_out:
        print_json(items)
        return
    t = Table(show_edge=False)
    for col in ("id", "action", "reason", "file", "record", "message"):
        t.add_column(col)
    for it in items:
        t.add_row(it["reject_id"][:8], it["action"], it["reason_code"], it["source_path"],
                  str(it["record_index"]), it["message"][:80])
    out.print(t if items else "no rejects")
    if items and len(items) >= limit:
        out.print(showing(len(items), total, "--limit N"), highlight=False, markup=False)


@app.command()
def runs(
    failed: Annotated[bool, typer.Option("--failed", help="Only failed runs, with their error.")] = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Stage runs, newest first."""
    from kenning.store import runs as runs_sql

    with open_vault(db, config, readonly=True) as vault:
        items = runs_sql.last_runs(vault.conn, 50)
    if failed:
        items = [r for r in items if r["status"] == "failed"]
    if json_out:
        print_json(items)
        return
    t = Table(show_edge=False)
    for col in ("run", "stage", "started", "status", "error / counts"):
        t.add_column(col)
    for r in items:
        t.add_row(r["run_id"][:8], r["stage"], r["started_at_utc"], r["status"], (r["error"] or r["counts_json"] or "")[:120])
    out.print(t)


@config_app.command("show")
def config_show(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Print the effective configuration (defaults.yaml merged with your overrides)."""
    import yaml

    from kenning.config import config_hash, load_config

    with user_errors():
        cfg = load_config(config, db)
    data = cfg.model_dump(mode="json")
    if json_out:
        print_json({"config": data, "config_hash": config_hash(cfg)})
    else:
        out.print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), end="", markup=False, highlight=False)
        out.print(f"# config_hash: {config_hash(cfg)}", markup=False, highlight=False)


@bench_app.command("synth")
def bench_synth(
    out_path: Annotated[Path, typer.Argument(metavar="OUT", help="Output .json or .zip path.")],
    conversations: Annotated[int, typer.Option("--conversations", "-n", help="How many conversations.")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed ⇒ same bytes).")] = 1,
    mining: Annotated[int, typer.Option("--mining", help="Also add N conversations with planted goals, obligations, "
                                        "procedures, rules and directives (ground truth in the manifest).")] = 0,
    mining_bank: Annotated[str, typer.Option("--mining-bank", help="Phrasings of the planted conversations: "
                                             "'tuning' (the rules were tuned on it) or 'heldout' (never tuned on).")
                           ] = "tuning",
) -> None:
    """Write a realistic synthetic ChatGPT export (and its ground-truth manifest)."""
    from kenning.bench.synth import write_export

    stats = write_export(out_path, conversations, seed, mining_conversations=mining, mining_bank=mining_bank)
    console.print(f"wrote {out_path}: {stats}")


@app.command()
def demo(db: DbOpt = None, config: ConfigOpt = None,
         verbose: Annotated[bool, typer.Option("--verbose", "-v", help="The full tour: every capability with its "
                                               "tables, not the short story.")] = False) -> None:
    """Import the bundled sample export and tell, in a screen and a half, what Kenning made of it."""
    if verbose:
        from kenning.cli.demo import run_demo

        run_demo(db, config)
    else:
        from kenning.cli.demo_story import run_story

        run_story(db, config)


def main() -> None:
    """The old entry point (kept for installed `kenning` scripts made before cli/entry.py)."""
    from kenning.cli.entry import main as entry_main

    entry_main()


if __name__ == "__main__":
    main()
