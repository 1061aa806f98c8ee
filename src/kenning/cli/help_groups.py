"""`kenning --help` grouped by task (issue 23 part 4), in one place.

Commands register themselves in many modules (and more keep arriving), so the grouping is applied
once, to the finished click group, just before it runs: each command gets its task panel and a
one-sentence summary, and the panels come in the order a person meets them. A command this table does
not know yet lands in "More" rather than disappearing or breaking the help.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typer only when grouping: `kenning --help` reads PANELS without it (cli/entry.py)
    import typer

# (panel title, commands in the order shown)
PANELS: list[tuple[str, list[str]]] = [
    ("Import: bring your conversations in", ["ingest", "demo", "init", "rejects", "wiki", "mode", "forget"]),
    ("Ask: questions about what you said", ["search", "why", "ask", "resume", "threads"]),
    ("Explore: people, places, facts and how they changed",
     ["facts", "entities", "entity", "history", "conflicts", "timeline", "goals", "obligations", "procedures",
      "standing", "directives", "digest", "constellation", "lexicon", "graph", "ui"]),
    ("Beliefs: the belief ledger", ["beliefs"]),
    ("Self: what you say about yourself", ["self"]),
    ("Agents: serve the vault to assistants and tools",
     ["serve", "context", "brief", "query", "inspect", "sql", "truth", "nodes", "node", "edge", "review", "commits",
      "rollback"]),
    ("Maintenance", ["status", "health", "maintain", "runs", "queue", "mine", "reindex", "config", "embeddings", "embed", "calibrate",
                     "llm", "bench", "eval"]),
]
DEFAULT_PANEL = "More"

_FIRST_SENTENCE = re.compile(r"^(.+?[.?!])(?=\s|$)", re.S)
_SPEC_REF = re.compile(r"\s*\((?:seed \d+ )?§[^)]*\)|\s*\(seed \d+\)")  # spec references: for developers
MAX = 60  # fits the 80-column help beside the command names


def panel_of(name: str) -> str:
    for title, names in PANELS:
        if name in names:
            return title
    return DEFAULT_PANEL


def summary(help_text: str | None) -> str:
    """The first sentence of a command's help, on one line (the full text stays in `CMD --help`)."""
    first = (help_text or "").strip().split("\n\n", 1)[0]
    first = _SPEC_REF.sub("", " ".join(first.split()))
    m = _FIRST_SENTENCE.match(first)
    text = m.group(1) if m else first
    if len(text) <= MAX:
        return text
    cut = text[:MAX]
    for mark in (";", ",", " "):
        if mark in cut[MAX // 2:]:
            return cut[:cut.rindex(mark)].rstrip(" ,;:—") + "…"
    return cut + "…"


def grouped(app: typer.Typer) -> Any:
    """The click group of ``app`` with task panels, one-line summaries and task order."""
    import typer

    group = typer.main.get_command(app)
    rank = {name: (p, i) for p, (_, names) in enumerate(PANELS) for i, name in enumerate(names)}
    items = list(group.commands.items())
    for name, cmd in items:
        cmd.rich_help_panel = panel_of(name)  # type: ignore[attr-defined]
        if not cmd.short_help:
            cmd.short_help = summary(cmd.help)
    items.sort(key=lambda kv: rank.get(kv[0], (len(PANELS), 0)))  # unknown commands last, as registered
    group.commands = dict(items)
    return group
