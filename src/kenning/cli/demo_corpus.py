"""Issue 18 parts 6–7 in `kenning demo`: the conversation corpus on the bundled sample (`kenning threads`), a bundled
Claude.ai export and notes folder imported into the same vault, and the `kenning resume` card."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from kenning.cli.common import console, open_vault, out
from kenning.cli.demo_story import headline

SAMPLE_CLAUDE = "sample-claude-export.json"
SAMPLE_NOTES = "sample-notes"
AS_OF = "2024-12-31T00:00:00Z"


def _sample(name: str) -> Path:
    return Path(str(resources.files("kenning.samples").joinpath(name)))


def demo_corpus(db: Path | None, config: Path | None) -> None:
    from kenning.intake.corpus.resume import list_threads, resume_context
    from kenning.store import corpus as csql

    console.rule("[bold]Conversation corpus (issue 18)")
    with open_vault(db, config) as vault:
        top = list_threads(vault.conn, limit=3)
        out.print(f"$ kenning threads   ({top['count']} shown of "
                  f"{csql.thread_count(vault.conn)} threads)",
                  highlight=False)
        for t in top["threads"]:
            about = ", ".join(e["name"] for e in t["linked_entities"][:3]) or "—"
            out.print(f"  {(t['occurred_at'] or '')[:10]}  {t['title_hint']}  ({t['channel']}, {t['turn_count']} "
                      f"turns; about {about})", highlight=False, markup=False)
        res = vault.ingest([_sample(SAMPLE_CLAUDE), _sample(SAMPLE_NOTES)], as_of=AS_OF, llm="none")
        raw = next(r for r in res if r.stage == "1").counts
        th = next((r for r in res if r.stage == "threads"), None)
        out.print(f"$ kenning ingest {SAMPLE_CLAUDE} {SAMPLE_NOTES}/ → {raw.get('claude_units', 0)} Claude "
                  f"conversation(s), {raw.get('note_units', 0)} note(s) mined, "
                  f"{raw.get('note_skip_placeholder', 0)} placeholder note(s) kept but not mined; "
                  f"{th.counts.get('threads_new', 0) if th else 0} new thread(s), the rest unchanged",
                  highlight=False, markup=False)
        card = resume_context(vault.conn, vault.config)["card"]
    out.print("$ kenning resume", highlight=False)
    out.print(card, highlight=False, markup=False)


@headline
def corpus_headline(vault) -> str | None:
    """The story's line (issue 23 §4 headlines): how many threads, and the latest decision `kenning resume` would
    bring back."""
    from kenning.intake.corpus.resume import list_threads

    every = list_threads(vault.conn, limit=100000)["threads"]
    if not every:
        return None
    decided = next((t for t in every if t["key_decisions"]), None)
    text = f"{len(every)} conversations summarised as threads with their decisions and open items (`kenning threads`)"
    if decided:
        text += (f"; the latest decision, in “{decided['title_hint']}” ({(decided['occurred_at'] or '')[:10]}): "
                 f"“{decided['key_decisions'][-1]}” — `kenning resume` picks up where you left off")
    return text + "."
