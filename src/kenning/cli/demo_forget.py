"""The demo's forget section (issue 23 §1): one sample conversation forgotten in a copy of the demo vault."""

from __future__ import annotations

import tempfile
from pathlib import Path

import apsw

from kenning.cli.common import console, open_vault, out
from kenning.cli.demo_story import headline

TITLE = "Lisbon trip & hiking"
PHRASE = "cilantro"


def _hits(vault, phrase: str) -> int:
    return sum(1 for h in vault.search(phrase, k=10, now="2024-12-31").hits if phrase in (h["text"] or "").lower())


def demo_forget(db: Path | None, config: Path | None) -> None:
    """Preview and apply `kenning forget --conversation` on a copy (the demo vault itself is left whole)."""
    from kenning.api import Vault
    from kenning.cli.forget import summarize
    from kenning.forget import forget

    with open_vault(db, config, readonly=True) as vault:
        src = vault.path
    console.rule("[bold]Forget (issue 23)")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "forget-demo.db"
        source, dest = apsw.Connection(str(src), flags=apsw.SQLITE_OPEN_READONLY), apsw.Connection(str(copy))
        with dest.backup("main", source, "main") as b:
            b.step()
        source.close()
        dest.close()
        with Vault.open(copy, config_path=config) as v:
            before = _hits(v, PHRASE)
            preview = forget(v.conn, v.config, "conversation", TITLE)
            if not preview.conversations:
                return
            console.print(f'$ kenning forget --conversation "{TITLE}"   (on a copy of the demo vault)',
                          highlight=False, markup=False)
            layers = summarize(preview.removed)
            out.print(f"  preview: {len(preview.conversations)} conversation, {preview.messages} messages; rows "
                      + ", ".join(f"{k} {n}" for k, n in layers.items() if n), highlight=False, soft_wrap=True)
            k = preview.knowledge
            out.print(f"  knowledge nodes: {k.get('nodes_deleted', 0)} removed, {k.get('nodes_changed', 0)} keep "
                      "other evidence (confidence recomputed)", highlight=False, soft_wrap=True)
            done = forget(v.conn, v.config, "conversation", TITLE, apply=True)
            after = _hits(v, PHRASE)
        found = PHRASE.encode() in copy.read_bytes().lower()
    out.print(f"  applied with --yes: {sum(done.removed.values())} rows gone, file rewritten "
              f"(secure_delete + VACUUM): {'yes' if done.vacuumed else 'no'}", highlight=False, soft_wrap=True)
    out.print(f"  kenning search {PHRASE!r}: {before} hits quoting it before, {after} after; "
              f"in the file's bytes: {'still there' if found else 'gone'}", highlight=False, soft_wrap=True)


@headline
def forget_headline(vault) -> str | None:
    """The story's line: what forgetting one sample conversation would remove (a preview: nothing changes)."""
    preview = vault.forget("conversation", TITLE)
    if not preview.conversations:
        return None
    rows = sum(preview.removed.values())
    return (f'Forget: kenning forget --conversation "{TITLE}" would remove it, its {preview.messages} messages and '
            f"{rows - preview.messages - 1} rows made from them in every layer (a preview; --yes applies and "
            "rewrites the file so the text is gone from its bytes)")
