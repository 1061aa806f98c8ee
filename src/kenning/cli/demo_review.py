"""Issue 20 in the demo: what the back-link pipeline made of the sample (mentions, evidence bundles, promoted
edges), the top of the review queue, and one approval with the confidence it moved."""

from __future__ import annotations

from pathlib import Path

from kenning.cli.common import console, open_vault, out

AS_OF = "2024-06-01T00:00:00Z"


def demo_review(db: Path | None, config: Path | None) -> None:
    from kenning.store import knowledge as ksql
    from kenning.store import upkeep as usql

    with open_vault(db, config) as vault:
        bundles = usql.bundle_counts(vault.conn)
        if not bundles.get("total"):
            return
        mentions = usql.mention_counts(vault.conn)
        promoted = usql.promoted_edges(vault.conn)
        page = vault.review_queue(page_size=3)
        console.rule("[bold]Back-links and review (issue 20)")
        out.print(f"{mentions['mentions']} mention observations ({mentions['resolved']} resolved) → "
                  f"{bundles['total']} evidence bundles → {len(promoted)} promoted edge(s)", highlight=False)
        console.print("$ kenning review --page-size 3", highlight=False, markup=False)
        for i in page["items"]:
            out.print(f"  {i['primary_ref'][:12]}  {i['title']} — {i['description']}", markup=False,
                      highlight=False, soft_wrap=True)
        item = next((i for i in page["items"] if "approve" in i["available_actions"]), None)
        if item is None:
            return
        b = usql.get_bundle(vault.conn, item["primary_ref"])
        before = ksql.get_node(vault.conn, b["target_node_id"])
        res = vault.review("approve", item["primary_ref"], as_of=AS_OF)
        after = ksql.get_node(vault.conn, b["target_node_id"])
    console.print(f"$ kenning review approve {item['primary_ref'][:12]}", highlight=False, markup=False)
    out.print(f"  commit {res['commit_id'][:12]}: {after['canonical_name']} α {before['alpha']:.2f} → "
              f"{after['alpha']:.2f}, confidence {before['confidence']:.2f} → {after['confidence']:.2f}; the edge "
              f"is active (undo: kenning rollback {res['commit_id'][:12]})", markup=False, highlight=False,
              soft_wrap=True)
