"""``kenning goals|obligations|procedures|standing|directives`` — what the miners found (issue 18), each item with
its state and the quoted message it came from; ``kenning obligations --ics FILE`` exports an iCalendar file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json
from kenning.intake.mining import views
from kenning.knowledge import said
from kenning.pipeline.clock import Clock, ClockError

AsOf = Annotated[Optional[str], typer.Option("--as-of", help="Judge overdue at this time (ISO-8601); default now.")]
AllOpt = Annotated[bool, typer.Option("--all", help="Include evolved, archived and retracted items.")]
EvidenceOpt = Annotated[bool, typer.Option("--evidence", help="Show the quoted message span behind each item.")]

_HELP = {
    "goals": "Goals you stated (§29): status, time horizon, parent goal; evolved goals with --all.",
    "obligations": "Obligations with a deadline (in your timezone), type and status; overdue is computed now.",
    "procedures": "Procedures you wrote or accepted, as steps with literals scrubbed; captured → validated.",
    "standing": "Standing procedures (“whenever …”): trigger, exclusions, action, safety; candidate until confirmed.",
    "directives": "Memory directives: preferences, constraints, standing orders, vocabulary rules and when they apply.",
}


def _now(as_of: str | None) -> str:
    try:
        return Clock.from_option(as_of).now()
    except ClockError as e:
        fail(str(e))
        raise


def _detail(it: dict) -> str:
    k = it["kind"]
    if k == "goal":
        return it["status"] + (f", {it['time_horizon']}" if it.get("time_horizon") else "")
    if k == "obligation":
        return f"{it['status']}, due {it['deadline'][:16].replace('T', ' ')} ({it['type']})"
    if k == "procedure":
        return " → ".join(it["steps"])[:120]
    if k == "standing_procedure":
        return f"{it['safety_class']}" + (f"; unless {', '.join(it['exclusions'])}" if it["exclusions"] else "")
    return f"{it['memory_type']}; when {', '.join(it['applies_when'])}" + (
        f"; not when {', '.join(it['does_not_apply_when'])}" if it["does_not_apply_when"] else "")


def _show(cls: str, db, config, json_out: bool, as_of: str | None, include_all: bool, evidence: bool,
          ics: Path | None = None) -> None:
    now = _now(as_of)
    with open_vault(db, config, readonly=True) as vault:
        found = views.items(vault.conn, cls, now, include_inactive=include_all, config=vault.config)
    if ics is not None:
        try:
            ics.write_bytes(views.obligations_ics(found, now))
        except OSError as e:
            fail(f"cannot write {ics}: {e.strerror}")
    if json_out:
        print_json(found)
        return
    if ics is not None:
        out.print(f"wrote {len(found)} obligation(s) to {ics}")
    if not found:
        out.print(f"no {cls} yet (run `kenning ingest` on your conversations)")
        return
    t = Table(show_edge=False)
    # §5's confidence decays with a 90-day half-life from the last verification, so an aim stated two years ago
    # reads 0.00 "now"; the evidence's Beta mean and when it was last said sit beside it (H3).
    longest = max(len(it["name"][:70]) for it in found)
    t.add_column("name", min_width=min(longest, 20))
    t.add_column("details")
    t.add_column("now", justify="right", no_wrap=True)
    t.add_column("said", justify="right", no_wrap=True)
    t.add_column("last said", no_wrap=True, min_width=18)
    for it in found:
        # the lifecycle only where it says something (a suggestion awaiting the person, a retraction with --all)
        sub = it.get("lifecycle_substate")
        state = "" if it["lifecycle_state"] in ("managed", "confirmed") and sub in (None, "active") else \
            f"{sub if sub and sub != 'active' else it['lifecycle_state']}: "
        when = f"{it['last_said']} ({said.ago(it['days_since_said'], short=True)})" if it.get("last_said") else "—"
        t.add_row(it["name"][:70], state + _detail(it), f"{it['confidence']:.2f}", f"{it['beta_mean']:.2f}", when)
        if evidence:
            for e in it["evidence"]:
                if e.get("quote"):
                    t.add_row(f"  [dim]{e['entry_type']}: “{e['quote'][:90]}”[/dim]", "", "", "", "")
    out.print(t)
    out.print("[dim]now = confidence today (§5: halves every 90 days without a new confirmation); said = how "
              "strongly the evidence says it (Beta mean); last said = the latest quote's date[/dim]")


def register(app: typer.Typer) -> None:
    def make(cls: str):
        def cmd(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False, as_of: AsOf = None,
                include_all: AllOpt = False, evidence: EvidenceOpt = False) -> None:
            _show(cls, db, config, json_out, as_of, include_all, evidence)
        cmd.__doc__ = _HELP[cls]
        return cmd

    for cls in ("goals", "procedures", "standing", "directives"):
        app.command(cls)(make(cls))

    @app.command("obligations")
    def obligations_cmd(
        ics: Annotated[Optional[Path], typer.Option("--ics", help="Also write them to this iCalendar (.ics) file.")] = None,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False, as_of: AsOf = None,
        include_all: AllOpt = False, evidence: EvidenceOpt = False,
    ) -> None:
        """Obligations with a deadline (in your timezone), type and status; overdue is computed now. --ics FILE
        exports them as calendar events."""
        _show("obligations", db, config, json_out, as_of, include_all, evidence, ics)
