"""`kenning threads` and `kenning resume`: the conversation corpus (seed 003 §25; issue 18 part 6). Both open the
vault read-only; the `threads` ingest stage writes what they show."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json


def threads_command(
    entity: Annotated[Optional[str], typer.Option("--entity", "-e", help="Only threads linked to this entity "
                                                  "(node id, name or alias).", show_default=False)] = None,
    query: Annotated[Optional[str], typer.Option("--query", "-q", help="Rank threads by these words (search over "
                                                 "titles, summaries, decisions and open items).",
                                                 show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many threads.")] = 20,
    vectors: Annotated[Optional[bool], typer.Option("--vectors/--no-vectors", help="With --query: also rank by the "
                                                    "summaries' vectors (default corpus.resume.search_vectors).",
                                                    show_default=False)] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List conversation threads, most recent first: title, when, turns, linked entities, decisions, open items.
    Each conversation gets one thread summary when it is ingested (stage `threads`)."""
    from kenning.intake.corpus.resume import CorpusError, list_threads, search_conversation_history

    with open_vault(db, config, readonly=True) as v:
        try:
            res = (search_conversation_history(v.conn, v.config, query, entity, limit, vectors) if query
                   else list_threads(v.conn, entity, limit, v.config))
        except CorpusError as e:
            fail(str(e), code=2)
    if as_json:
        print_json(res)
        return
    if not res["threads"]:
        if query:   # the vault may hold threads; none matched the words (I175)
            out.print(f"no thread matches {query!r}" + (f" among those linked to {entity}" if entity else "")
                      + " (the search reads titles, summaries, decisions and open items)")
        else:
            out.print("no threads" + (f" linked to {entity}" if entity else "") + " (ingest conversations first)")
        return
    t = Table("when", "thread", "channel", "turns", "about", "decided", "open")
    for th in res["threads"]:
        t.add_row((th["occurred_at"] or "")[:10], th["title_hint"], th["channel"] or "", str(th["turn_count"]),
                  ", ".join(e["name"] for e in th["linked_entities"][:3]), str(len(th["key_decisions"])),
                  str(len(th["unresolved_items"])))
    out.print(t)


def resume_command(
    entity: Annotated[Optional[str], typer.Argument(help="Resume the latest thread about this entity (node id, "
                                                    "name or alias); default: the latest thread.",
                                                    show_default=False)] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the "[Prior Context — reference]" card of the most recent thread (about ENTITY): where things stood,
    what was decided, what is open."""
    from kenning.intake.corpus.resume import CorpusError, resume_context

    with open_vault(db, config, readonly=True) as v:
        try:
            res = resume_context(v.conn, v.config, entity)
        except CorpusError as e:
            fail(str(e), code=2)
    if as_json:
        print_json(res)
        return
    out.print(res["card"], markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("threads")(threads_command)
    app.command("resume")(resume_command)
