"""`kenning maintain` (the nightly upkeep, seed 003 §42, §42A.5–6, §3.6) and `kenning health` (§41, §42A.6)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, LlmOpt, console, fail, llm_mode, open_vault, out, print_json

NowOpt = Annotated[Optional[str], typer.Option(
    "--now", "--as-of", help="Freeze the clock (ISO-8601): ages (14/30/90/180 days) are measured from it.")]


def _now(value: str | None) -> str:
    from kenning.cli.common import user_errors
    from kenning.pipeline.clock import Clock

    with user_errors():
        return Clock.from_option(value).now()


def maintain_command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what a run would change; change nothing.")] = False,
    now: NowOpt = None,
    llm: LlmOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Nightly upkeep in one resumable run: archive stale candidates (observed 14 d, suggested 30 d), queue
    near-duplicates and contradictions, fold duplicates (the model decides; without one only exact-alias
    duplicates fold), find co-occurrence patterns and procedure motifs for review, decay promoted edges, compact
    old traces, then VACUUM when due. Interrupted? Run it again: it resumes where it stopped, with the same
    result. A second run on an unchanged vault changes nothing (the receipt's counts are 0)."""
    from kenning.upkeep.maintain.dag import MaintainError, maintain

    at = _now(now)
    with open_vault(db, config) as v:
        mode = "none" if dry_run else llm_mode(v.config, llm)
        explicit = llm is not None
        try:
            if as_json:
                receipt = maintain(v.conn, v.config, now=at, dry_run=dry_run, llm_mode=mode, llm_explicit=explicit)
            else:
                with console.status("maintain") as status:
                    receipt = maintain(v.conn, v.config, now=at, dry_run=dry_run, llm_mode=mode,
                                       llm_explicit=explicit, progress=lambda s: status.update(f"maintain: {s}…"))
        except MaintainError as e:
            fail(f"{e}\nThe step's changes were rolled back; the last finished run's results stay in place. "
                 "Run `kenning maintain` again to resume (details: `kenning runs --failed`).")
    if as_json:
        print_json(receipt)
        return
    _print_receipt(receipt)


def _print_receipt(r: dict[str, Any]) -> None:
    from kenning.upkeep.maintain.dag import CHANGE_FIELDS

    head = "dry run (nothing changed)" if r["dry_run"] else f"generation {r['generation']}" + (
        " (resumed)" if r.get("resumed") else "")
    out.print(f"[bold]maintain[/] {head} at {r['now']}: {r['changes']} change(s)")
    t = Table("what", "count")
    for f in CHANGE_FIELDS:
        if r[f]:
            t.add_row(f.removesuffix("_count").replace("_", " "), str(r[f]))
    if r["changes"]:
        out.print(t)
    v = r.get("vacuum") or {}
    verb = "would run" if v.get("would_run") else ("ran" if v.get("ran") else "not due")
    out.print(f"VACUUM {verb}: {v.get('reason', '')}")


def health_command(
    now: NowOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Graph health: the knowledge debt score (0 = none, 100 = all), graph density (nodes, edges, degrees,
    isolated nodes, hubs, weak and generic edges, top hubs), the review queues and the last maintain run's
    hygiene receipt. Read-only."""
    from kenning.upkeep.maintain.health import health

    at = _now(now)
    with open_vault(db, config, readonly=True) as v:
        h = health(v.conn, v.config, now=at)
    if as_json:
        print_json(h)
        return
    _print_health(h)


def _print_health(h: dict[str, Any]) -> None:
    g, d = h["graph_density"], h["knowledge_debt"]
    out.print(f"[bold]knowledge debt[/] {h['knowledge_debt_score']:.1f}/100  "
              + "  ".join(f"{k} {v:.2f}" for k, v in d["components"].items()))
    out.print(f"graph: {g['total_nodes']} nodes, {g['total_edges']} edges, degree mean {g['mean_degree']:.2f} / "
              f"median {g['median_degree']:g}, {g['isolated_node_count']} isolated, {g['hub_count']} hubs")
    if g["top_hubs"]:
        out.print("top hubs: " + ", ".join(f"{x['name']} ({x['degree']})" for x in g["top_hubs"][:5]))
    if h["review_queues"]:
        out.print("review queues: " + ", ".join(f"{k} {v}" for k, v in h["review_queues"].items()))
    last = h["last_maintain"]
    if last:
        hr = h["hygiene_receipt"]
        out.print(f"last maintain: generation {last['generation']} at {last['now']} ({last['changes']} changes; "
                  f"hygiene: {hr['demoted_edge_count']} edges demoted, {hr['archived_candidate_node_count']} "
                  f"candidates archived, {hr['reviewed_bundle_count']} bundles back to candidate)")
    else:
        out.print("last maintain: never (run `kenning maintain`)")


def register(app: typer.Typer) -> None:
    app.command("maintain")(maintain_command)
    app.command("health")(health_command)
