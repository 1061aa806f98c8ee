"""What `kenning ingest` prints when it is done (issue 23 part 4): a short summary by default; every stage's
internal counters with ``--verbose`` (and always in ``--json``)."""

from __future__ import annotations


from kenning.cli.common import console, out

# vault table → how a person calls what it holds (shown when non-zero)
HOLDS = [("conversations", "conversations"), ("messages", "messages"), ("entities", "people, places and things"),
         ("assertions", "facts"), ("wiki_beliefs", "beliefs"), ("belief_nodes", "beliefs about yourself"),
         ("conflict_groups", "open contradictions")]
MAX_PROBLEMS = 10


def print_summary(results: list, tables: dict[str, int], seconds: float) -> None:
    raw = next((r for r in results if r.stage == "1"), None)
    if raw is not None:
        c = raw.counts
        parts = [f"{c.get('conversations_new', 0):,} new conversations ({c.get('messages_new', 0):,} messages)"]
        for key, label in (("conversations_changed", "changed"), ("conversations_unchanged", "unchanged"),
                           ("rejected", "rejected"), ("repaired", "repaired")):
            if c.get(key):
                parts.append(f"{c[key]:,} {label}")
        out.print("imported " + ", ".join(parts) + f" in {seconds:,.1f} s", highlight=False)
    held = [f"{tables[t]:,} {label}" for t, label in HOLDS if tables.get(t)]
    if held:
        out.print("the vault now holds " + ", ".join(held), highlight=False)
    problems = [e for r in results for e in r.events
                if e[2] == "ERROR" or e[3].startswith(("REJECTED_", "REPAIRED_"))]
    for e in problems[:MAX_PROBLEMS]:
        console.print(f"  [yellow]{e[3]}[/] {e[4]}", highlight=False)
    if len(problems) > MAX_PROBLEMS:
        console.print(f"  … and {len(problems) - MAX_PROBLEMS:,} more (`kenning rejects`)")
    codes: dict[str, int] = {}
    for r in results:
        for e in r.events:
            if e[2] == "WARN" and not e[3].startswith(("REJECTED_", "REPAIRED_")):
                codes[e[3]] = codes.get(e[3], 0) + 1
    if codes:
        top = sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{k} ×{v:,}" for k, v in top[:5]) + (", …" if len(top) > 5 else "")
        console.print(f"warnings: {shown} (details: `kenning ingest --verbose`, `kenning runs`)", highlight=False)
    if raw is not None and (raw.counts.get("conversations_new") or raw.counts.get("conversations_changed")):
        out.print('next: kenning facts · kenning search "…" · kenning why "where do I live?" · kenning --help',
                  highlight=False, markup=False)

