"""The intake funnel in the demo (issue 18 parts 1–3): what the funnel decided for the sample and why, the
extraction queue, and one conversation made incognito leaving nothing derived behind."""

from __future__ import annotations

from pathlib import Path

from kenning.cli.common import console, open_vault, out, user_errors

DEMO_INCOGNITO_TITLE = "Train vs flight to Ljubljana"


def demo_intake(db: Path | None, config: Path | None) -> None:
    from kenning.cli.intake import queue_state
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import SIDE_STAGES
    from kenning.store import intake as isql

    console.rule("[bold]Intake funnel (issue 18)")
    with open_vault(db, config) as vault, user_errors():
        st = queue_state(vault.conn, vault.config, limit=0)
        total = sum(st["decisions"].values())
        out.print(f"$ kenning queue — {total} observations assessed (rules only, no model):", markup=False)
        for key, n in sorted(st["decisions"].items(), key=lambda kv: -kv[1])[:6]:
            decision, reasons = key.split(":", 1)
            out.print(f"  {decision:<8} {n:>4}  {reasons}", markup=False, highlight=False)
        out.print("  queue: " + ", ".join(f"{s} {n}" for s, n in sorted(st["by_status"].items())), markup=False)
        conv = next((c for c, _e, t in isql.conversation_titles(vault.conn) if t == DEMO_INCOGNITO_TITLE), None)
        if conv is None:
            return
        msgs = isql.message_ids_of(vault.conn, [conv])
        cited = sorted({r["node_id"] for r in isql.provenance_by_message(vault.conn, sorted(msgs)) if r["is_active"]})
        res = run_stage(vault.conn, SIDE_STAGES["intake-mode"], vault.config, Clock(None),
                        inputs={"set": [("conversation", conv)]})
        left = len(isql.provenance_by_message(vault.conn, sorted(msgs), active_only=True))
    c = res.counts
    out.print(f"$ kenning mode incognito <“{DEMO_INCOGNITO_TITLE}”>: {c.get('nodes_retracted', 0)} node(s) "
              f"learned only from it retracted, its evidence withdrawn from {c.get('provenance_withdrawn', 0)} "
              f"more; {c.get('derived_rows_removed', 0)} derived row(s) removed (mentions, claims, threads, "
              f"search); {left} trace(s) of it left on active nodes (it was cited by {len(cited)}); never mined or "
              f"shown in context again", markup=False, highlight=False)


def _register_headline() -> None:
    from kenning.cli.demo_story import headline

    @headline
    def intake_funnel(vault) -> str | None:
        """One line for the short demo: what the funnel decided on the sample."""
        from kenning.cli.intake import queue_state

        st = queue_state(vault.conn, vault.config, limit=0)
        if not st["decisions"]:
            return None
        total = sum(st["decisions"].values())
        queued = sum(n for k, n in st["decisions"].items() if not k.startswith("skip:"))
        critical = sum(n for k, n in st["decisions"].items() if "critical_lane" in k)
        return (f"Intake funnel: {total} turns and conversations assessed with rules, {queued} mined "
                f"({critical} on the critical lane), {total - queued} skipped, each with its reason "
                f"(`kenning queue`; `kenning mode incognito` to never learn from a conversation)")


_register_headline()
