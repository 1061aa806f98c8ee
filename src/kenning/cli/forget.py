"""``kenning forget`` (issue 23 §1): preview, then remove conversations and everything derived from them."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import apsw
import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, console, fail, open_vault, out, print_json, user_errors


BUSY = ("another Kenning process is writing to the vault (an import?): nothing was forgotten; run this again when "
        "it is done")


def forget_command(
    conversation: Annotated[Optional[str], typer.Option("--conversation", "-c", metavar="ID|TITLE",
                                                        help="One conversation: Kenning's id (or an 8+ character "
                                                             "prefix), the export's id, or its exact title.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", "-s", metavar="IMPORT",
                                                  help="Every conversation one import brought: the file's path or "
                                                       "name, or the source id (`kenning status`).")] = None,
    between: Annotated[Optional[tuple[str, str]], typer.Option("--between", metavar="DATE DATE",
                                                               help="Conversations begun between two dates "
                                                                    "(inclusive), e.g. --between 2023-01-01 "
                                                                    "2023-03-31.")] = None,
    matching: Annotated[Optional[str], typer.Option("--matching", "-m", metavar="PHRASE",
                                                    help="Every conversation where the phrase occurs "
                                                         "(case-insensitive): \"forget everything where I talk "
                                                         "about X\".")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking (the default is a preview and "
                                                          "a confirmation question).")] = False,
    no_vacuum: Annotated[bool, typer.Option("--no-vacuum", help="Skip rewriting the file afterwards (faster; the "
                                                                "text may stay in free pages until "
                                                                "`kenning forget --scrub`).")] = False,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (the forget log's time and the "
                                                 "knowledge commit's) for deterministic runs.")] = None,
    log: Annotated[bool, typer.Option("--log", help="List earlier forgets (when, what kind, counts).")] = False,
    scrub: Annotated[bool, typer.Option("--scrub", help="Only rewrite the vault file now (after --no-vacuum, or "
                                                        "when another process held the vault open).")] = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Remove conversations and everything Kenning derived from them — messages, mentions, entities left without
    evidence, facts and their history, self-beliefs, ledger beliefs, knowledge nodes and edges, search and vector
    indexes, caches, model-call logs and rejects — in one transaction, then rewrite the vault file so the text is
    gone from its bytes.

    Shows what would go first; applies with --yes or after you confirm. A later `kenning ingest` of the same
    export skips what you forgot unless you pass --include-forgotten. The forget log keeps when and how much,
    never the content."""
    from kenning.forget import ForgetError
    from kenning.store import forget as fsql

    if log:
        with open_vault(db, config, readonly=True) as vault:
            items = fsql.forget_log(vault.conn) if fsql.table_exists(vault.conn, "forget_log") else []
        if json_out:
            print_json(items)
        elif not items:
            out.print("nothing has been forgotten in this vault")
        else:
            t = Table(show_edge=False)
            for col in ("when", "selector", "conversations", "messages", "file rewritten"):
                t.add_column(col)
            for it in items:
                t.add_row(it["forgotten_at_utc"], it["selector"], str(it["conversations"]), str(it["messages"]),
                          "yes" if it["vacuumed"] else "no")
            out.print(t)
        return
    if scrub:
        from kenning.forget.apply import scrub as scrub_vault

        with open_vault(db, config) as vault, user_errors(), console.status("rewriting the vault file…"):
            done = scrub_vault(vault.conn)
        if not done:
            fail("another process has the vault open (a `kenning serve`?); close it and run `kenning forget --scrub`")
        console.print("[green]rewritten[/]: free pages and the WAL no longer hold forgotten text")
        return
    chosen = [(k, v) for k, v in (("conversation", conversation), ("source", source), ("between", between),
                                  ("matching", matching)) if v]
    if len(chosen) != 1:
        fail("say what to forget with exactly one of --conversation, --source, --between or --matching "
             "(`kenning forget --help`)")
    selector, value = chosen[0]
    with open_vault(db, config) as vault, user_errors():
        try:
            preview = vault.forget(selector, value, as_of=as_of)
        except ForgetError as e:
            fail(str(e))
        except apsw.BusyError:
            fail(BUSY)
        if not preview.conversations:
            if json_out:
                print_json(preview.as_dict())
            else:
                console.print(f"nothing to forget: no conversation matches --{selector}")
            return
        if not json_out:
            show_preview(preview)
        go = yes
        if not yes and not json_out and sys.stdin.isatty():
            go = typer.confirm(f"Forget these {len(preview.conversations)} conversation(s) and everything derived "
                               "from them? This cannot be undone", default=False)
        if not go:
            if json_out:
                print_json(preview.as_dict())
            else:
                console.print("preview only — nothing changed (pass --yes to apply)")
            return
        with console.status("forgetting…" if json_out or no_vacuum else "forgetting, then rewriting the vault "
                            "file…"):
            try:
                report = vault.forget(selector, value, apply=True, as_of=as_of,
                                      vacuum=False if no_vacuum else None)
            except apsw.BusyError:
                fail(BUSY)
    if json_out:
        print_json(report.as_dict())
        return
    console.print(f"[green]forgotten[/]: {len(report.conversations)} conversation(s), {report.messages} messages, "
                  f"{sum(report.removed.values())} rows in {len(report.removed)} tables"
                  + ("; the vault file was rewritten (secure_delete + VACUUM)" if report.vacuumed else
                     "; the file was not rewritten yet: run `kenning forget --scrub` (with no other Kenning "
                     "process using the vault) so free pages lose the text"))


def show_preview(report, limit: int = 10) -> None:
    """The conversations that would go and the rows per layer (never more than a screen)."""
    console.print(f"[bold]would forget[/] {len(report.conversations)} conversation(s), {report.messages} messages:")
    for c in report.conversations[:limit]:
        out.print(f"  {(c['created_at_utc'] or '?')[:10]}  {c['title'] or '(untitled)'}  "
                  f"({c['messages']} messages, {c['conversation_id'][:8]})", markup=False, highlight=False)
    if len(report.conversations) > limit:
        out.print(f"  … and {len(report.conversations) - limit} more")
    layers = summarize(report.removed)
    out.print("  rows: " + ", ".join(f"{k} {v}" for k, v in layers.items() if v), highlight=False)
    k = report.knowledge
    if k:
        out.print(f"  knowledge nodes: {k.get('nodes_deleted', 0)} removed, {k.get('nodes_changed', 0)} lose "
                  f"evidence (confidence recomputed); edges: {k.get('edges_deleted', 0)} removed", highlight=False)


LAYERS = {
    "raw": ("conversations", "messages", "message_parts", "raw_archive", "source_conversations",
            "transcript_participants", "rejects"),
    "entities": ("entities", "entity_mentions", "entity_mention_candidates", "time_mentions", "lexicon_terms",
                 "lexicon_term_candidates", "search_entity_names"),
    "facts": ("assertions", "assertion_temporalized", "assertion_tx_history", "retractions", "conflict_groups"),
    "self-beliefs": ("belief_nodes", "belief_occurrences", "experiences"),
    "ledger": ("wiki_beliefs", "wiki_claim_provenance", "belief_provenance"),
    "knowledge": ("nodes", "edges", "provenance_entries"),
    "graph": ("graph_nodes",),
    "search": ("search_docs",),
    "vectors": ("vector_items", "embedding_cache"),
    "notes": ("note_versions", "note_assessment_pointers"),
    # forget deletes the rows behind the seed-named views (Y2, Y20): the report names those tables
    "intake": ("intake_observation_rows", "intake_dispatch_decision_rows", "pending_extractions"),
}


def summarize(removed: dict[str, int]) -> dict[str, int]:
    return {layer: sum(removed.get(t, 0) for t in tables) for layer, tables in LAYERS.items()}


def register(app: typer.Typer) -> None:
    app.command("forget")(forget_command)
