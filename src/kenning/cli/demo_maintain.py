"""Issue 20 in the demo: the graph's health and what a nightly `kenning maintain` would do, on the sample."""

from __future__ import annotations

from pathlib import Path

from kenning.cli.common import console, open_vault, out

AS_OF = "2024-12-31T00:00:00Z"


def demo_maintain(db: Path | None, config: Path | None) -> None:
    """`kenning health` in two lines and a `kenning maintain --dry-run` receipt (nothing is changed)."""
    from kenning.pipeline.clock import Clock
    from kenning.upkeep.maintain.dag import CHANGE_FIELDS, maintain
    from kenning.upkeep.maintain.health import health

    now = Clock.from_option(AS_OF).now()
    with open_vault(db, config) as vault:
        h = health(vault.conn, vault.config, now=now)
        receipt = maintain(vault.conn, vault.config, now=now, dry_run=True)
    g = h["graph_density"]
    console.rule("[bold]Upkeep (issue 20)")
    console.print("$ kenning health", highlight=False, markup=False)
    out.print(f"  knowledge debt {h['knowledge_debt_score']:.1f}/100; {g['total_nodes']} nodes, {g['total_edges']} "
              f"edges, mean degree {g['mean_degree']:.2f}, {g['isolated_node_count']} isolated", highlight=False)
    if g["top_hubs"]:
        out.print("  top hubs: " + ", ".join(f"{x['name']} ({x['degree']})" for x in g["top_hubs"][:3]),
                  highlight=False)
    console.print("$ kenning maintain --dry-run", highlight=False, markup=False)
    done = [f"{f.removesuffix('_count').replace('_', ' ')} {receipt[f]}" for f in CHANGE_FIELDS if receipt[f]]
    out.print(f"  would make {receipt['changes']} change(s): " + ("; ".join(done) if done else "nothing to do"),
              highlight=False, soft_wrap=True)
    v = receipt["vacuum"]
    out.print(f"  VACUUM {'would run' if v['would_run'] else 'not due'}: {v['reason']}", highlight=False)
