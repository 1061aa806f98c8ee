"""Every ``kenning`` command by name: which module registers it and its one-line help (issue 24 §4; F1–F3).

``kenning --help`` is printed from this table alone and ``kenning CMD …`` imports only the modules that
register CMD (cli/lazy.py), so start-up no longer pays for importing all 25 command modules (and, through them,
the pipeline, pydantic models and mining rules). This module must stay import-free: the root help imports it.

A new command = one line here: ``"name": ("module:register_function", "First sentence of its help…")``.
``tests/test_lazy_cli.py`` fails, naming the command, when a module registers a command missing here, when a
line here names no real command, or when a one-line help drifts from the command's own help text.
"""

from __future__ import annotations

from typing import Any

# name → (registrars: "module:function" called with a scratch Typer app, space-separated when several modules
# add to one command; one-line help, = help_groups.summary of the command's help). Order: help_groups.PANELS.
COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("kenning.cli.main:register", "Import ChatGPT and Claude.ai exports…"),
    "demo": ("kenning.cli.main:register", "Import the bundled sample export and tell…"),
    "init": ("kenning.cli.main:register", "Create an empty vault (ingest also creates one when needed)."),
    "rejects": ("kenning.cli.main:register", "Records that could not be imported (or were repaired)…"),
    "wiki": ("kenning.cli.commands:register_wiki", "Write path for a wiki workspace: stage a new source…"),
    "mode": ("kenning.cli.intake:register", "Memory modes: make a conversation incognito — never learned…"),
    "forget": ("kenning.cli.forget:register", "Remove conversations and everything Kenning derived from…"),
    "search": ("kenning.cli.search:register", "Hybrid search over turns, entities and beliefs: BM25 +…"),
    "why": ("kenning.cli.commands:register_why", "Why do I believe this?"),
    "ask": ("kenning.cli.inspect:register", "Text-to-SQL: a model writes SQL from the schema card…"),
    "resume": ("kenning.cli.threads:register", 'Print the "[Prior Context — reference]" card of the most…'),
    "threads": ("kenning.cli.threads:register", "List conversation threads, most recent first: title, when…"),
    "facts": ("kenning.cli.facts:register", "Facts, preferences, plans and questions read from your…"),
    "entities": ("kenning.cli.entities:register", "Entities found in your conversations: name, type, aliases…"),
    "entity": ("kenning.cli.entities:register", "One entity: its names and every mention in context…"),
    "history": ("kenning.cli.temporal:register", "The succession of states for an entity or a predicate (Acme…"),
    "conflicts": ("kenning.cli.temporal:register", "Open contradictions: two cities on one date…"),
    "timeline": ("kenning.cli.temporal:register", "Month by month: what mattered (top people, places…"),
    "goals": ("kenning.cli.mining:register", "Goals you stated: status, time horizon, parent goal…"),
    "obligations": ("kenning.cli.mining:register", "Obligations with a deadline (in your timezone)…"),
    "procedures": ("kenning.cli.mining:register", "Procedures you wrote or accepted…"),
    "standing": ("kenning.cli.mining:register", "Standing procedures (“whenever …”): trigger, exclusions…"),
    "directives": ("kenning.cli.mining:register", "Memory directives: preferences, constraints…"),
    "digest": ("kenning.cli.inspect:register", "The weekly knowledge digest: new entities…"),
    "constellation": ("kenning.cli.inspect:register", "The scene around an entity: primary entities, goals…"),
    "lexicon": ("kenning.cli.entities:register", "Your personal lexicon: selected terms and the rejected…"),
    # graph: export lives in cli/temporal.py, rebuild and export-log in cli/knowledge.py
    "graph": ("kenning.cli.temporal:register kenning.cli.knowledge:register",
              "The materialized graph (stage 6): export it for Gephi…"),
    "ui": ("kenning.cli.ui:register", "Open the vault in your browser: home, search…"),
    "beliefs": ("kenning.cli.commands:register_beliefs", "The belief ledger: list, history, supersede, export, verify…"),
    "self": ("kenning.cli.selfbeliefs:register", "Beliefs about yourself: what you say you are, value, like…"),
    "serve": ("kenning.cli.commands:register_serve", "Serve the vault to other programs."),
    "context": ("kenning.cli.query:register", "The context packet for a request: entity lines within the…"),
    "brief": ("kenning.cli.query:register", "What Kenning knows about an entity in 200–300 tokens…"),
    "query": ("kenning.cli.query:register", "One typed graph query with its latency…"),
    "inspect": ("kenning.cli.inspect:register", "Inspect the knowledge store: why a node is there, how sure…"),
    "sql": ("kenning.cli.inspect:register", "Run read-only SQL against the vault: writes, ATTACH…"),
    "truth": ("kenning.cli.inspect:register", "A node's compiled truth: the read model with its four…"),
    "nodes": ("kenning.cli.knowledge:register", "List the DOC72 knowledge nodes: kind, name…"),
    "node": ("kenning.cli.knowledge:register", "One DOC72 knowledge node: show it, add one…"),
    "edge": ("kenning.cli.knowledge:register", "Edges between knowledge nodes (governed relation…"),
    "review": ("kenning.cli.review:register", "Review what the back-link pipeline found: candidate…"),
    "commits": ("kenning.cli.knowledge:register", "The knowledge store's history: every commit, newest first…"),
    "rollback": ("kenning.cli.knowledge:register", "Undo a commit with a compensating commit (history is never…"),
    "status": ("kenning.cli.main:register", "Row counts per table and each stage's latest run."),
    "health": ("kenning.cli.maintain:register", "Graph health: the knowledge debt score (0 = none…"),
    "maintain": ("kenning.cli.maintain:register", "Nightly upkeep in one resumable run: archive stale…"),
    "runs": ("kenning.cli.main:register", "Stage runs, newest first."),
    "queue": ("kenning.cli.intake:register", "The extraction queue: rows by status (queued, running…"),
    "mine": ("kenning.cli.intake:register", "Drain the extraction queue: recover crashed rows…"),
    "reindex": ("kenning.cli.commands:register_reindex", "Rebuild derived indexes: the search index (FTS5 + vectors)…"),
    "config": ("kenning.cli.main:register", "Show the effective configuration."),
    "embeddings": ("kenning.cli.commands:register_models", "The vault's vector index: status and embedding-model…"),
    "embed": ("kenning.cli.commands:register_models", "Embed TEXT… with the active backend: vectors…"),
    "calibrate": ("kenning.cli.commands:register_models", "Fit match / no_match / tension similarity thresholds per…"),
    "llm": ("kenning.cli.commands:register_models", "Check the configured LLM endpoint."),
    "bench": ("kenning.cli.main:register", "Synthetic data and benchmarks."),
    "eval": ("kenning.cli.eval:register", "Evaluations on public benchmarks."),
}

ROOT_HELP = "Kenning turns your chats, notes and documents into a personal, bitemporal knowledge and belief graph."


# Registrars for the sub-apps and commands that cli/main.py used to attach itself (their modules have no register).
def register_beliefs(app: Any) -> None:
    from kenning.cli.beliefs import beliefs_app

    app.add_typer(beliefs_app, name="beliefs")


def register_why(app: Any) -> None:
    from kenning.cli.beliefs import why_command

    app.command("why")(why_command)


def register_reindex(app: Any) -> None:
    from kenning.cli.beliefs import reindex_command

    app.command("reindex")(reindex_command)


def register_serve(app: Any) -> None:
    from kenning.cli.serve import serve_app

    app.add_typer(serve_app, name="serve")


def register_wiki(app: Any) -> None:
    from kenning.cli.wiki import wiki_app

    app.add_typer(wiki_app, name="wiki")


def register_models(app: Any) -> None:
    from kenning.cli import models

    app.add_typer(models.llm_app, name="llm")
    app.add_typer(models.embeddings_app, name="embeddings")
    app.command("embed")(models.embed)
    app.command("calibrate")(models.calibrate)
