"""Issue 18 in the demo: what the miners make of a few bundled chats (sample-mining-chats.json, imported into a
vault of its own beside the demo's so the main sample's counts stay as they are): goals with a sub-goal,
obligations with their .ics export, a procedure with its literals scrubbed, a standing procedure, a directive, and
a suggestion the user turned down (recorded, not learned)."""

from __future__ import annotations

from pathlib import Path

from kenning.cli.common import console, open_vault, out

MINING_SAMPLE = "sample-mining-chats.json"
AS_OF = "2024-03-01T00:00:00Z"


def demo_mining(db: Path | None, config: Path | None) -> None:
    from kenning.cli.demo import sample_path
    from kenning.intake.mining import views
    from kenning.store import mining as msql

    where = Path(db).parent if db else Path(".")
    mdb = where / ((Path(db).stem if db else "kenning") + "-mining.db")
    with open_vault(mdb, config) as vault:
        vault.ingest([sample_path(MINING_SAMPLE)], as_of=AS_OF)
        found = {cls: views.items(vault.conn, cls, AS_OF) for cls in views.CLASSES}
        rejected = msql.rejected_options(vault.conn)
    console.rule("[bold]Goals, obligations, procedures and rules from your chats (issue 18)")
    console.print(f"$ kenning ingest {MINING_SAMPLE} --db {mdb.name}; kenning goals", highlight=False, markup=False)
    by_id = {g["id"]: g["name"] for g in found["goals"]}
    for g in found["goals"]:
        parent = f" — part of “{by_id[g['parent_goal_id']]}”" if g.get("parent_goal_id") in by_id else ""
        out.print(f"  goal: {g['name']} ({g['status']}){parent}", markup=False, highlight=False, soft_wrap=True)
    ics = where / "obligations.ics"
    ics.write_bytes(views.obligations_ics(found["obligations"], AS_OF))
    console.print(f"$ kenning obligations --as-of {AS_OF[:10]} --ics {ics.name}", highlight=False, markup=False)
    for o in found["obligations"]:
        out.print(f"  obligation: {o['name']} — due {o['deadline']} ({o['type']}, {o['status']})", markup=False,
                  highlight=False, soft_wrap=True)
    out.print(f"  wrote {len(found['obligations'])} calendar events to {ics.name}", markup=False, highlight=False,
              soft_wrap=True)
    for p in found["procedures"][:2]:
        how = "accepted from the assistant" if any(e["entry_type"] == "user_acceptance" for e in p["evidence"]) \
            else "your own steps"
        out.print(f"  procedure: {p['name']} ({p['lifecycle_substate']}, {how}): {' → '.join(p['steps'])}",
                  markup=False, highlight=False, soft_wrap=True)
    for s in found["standing"][:1]:
        out.print(f"  standing: when {s['trigger']} → {s['action']}"
                  + (f" (unless {', '.join(s['exclusions'])})" if s["exclusions"] else "")
                  + f" — {s['lifecycle_substate']}, {s['safety_class']}", markup=False, highlight=False,
                  soft_wrap=True)
    for d in found["directives"][:2]:
        out.print(f"  directive: {d['name']} ({d['memory_type']})", markup=False, highlight=False, soft_wrap=True)
    for r in rejected[:1]:
        out.print(f"  turned down, not learned: “{r['quote'][:80]}”", markup=False, highlight=False, soft_wrap=True)
