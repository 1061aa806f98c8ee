"""Look at every input before anything is written (issue 23 part 3).

A path that does not exist, a folder with nothing to import, or a file of the wrong kind is refused
before a vault is created or any stage runs; the message names the path and what to do. An export
that holds nothing (``[]``) or a single conversation object instead of the list is imported, with a
note saying so, so a wrong file never passes for a successful import.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from pathlib import Path

from kenning.sources.inputs import WIKI_WORKSPACE, InputError, classify_input, resolve_export

_WS = b" \t\r\n"
HEAD_BYTES = 4096


@dataclass
class Preflight:
    paths: list[Path] = field(default_factory=list)      # what to import
    notes: list[str] = field(default_factory=list)       # worth saying, not an error
    refused: list[str] = field(default_factory=list)     # reasons to stop before anything is written


def _head(export) -> bytes:
    with export.open() as f:
        return f.read(HEAD_BYTES)


def _describe(head: bytes) -> str:
    text = head[:40].decode("utf-8", errors="replace").replace("\n", " ")
    return f"it starts with {text!r}" if text.strip() else "it holds only whitespace"


def check_inputs(paths: list[Path], wiki_dir: str = "wiki", sidecar_suffix: str = ".beliefs.json") -> Preflight:
    out = Preflight()
    for p in paths:
        if classify_input(p, wiki_dir, sidecar_suffix) == WIKI_WORKSPACE:
            out.paths.append(p)
            continue
        try:
            export = resolve_export(p)
            if export.kind == "notes_folder":  # a folder of Markdown notes: its own importer checks each note
                out.paths.append(p)
                continue
            head = _head(export)
        except InputError as e:
            out.refused.append(f"{e} (expected a ChatGPT or Claude export: conversations.json, the export .zip or "
                               "its folder; a transcript .json/.jsonl; a LoCoMo file; a notes folder; an mbox; an "
                               ".ics calendar; or a wiki workspace)")
            continue
        except OSError as e:
            out.refused.append(f"{p}: cannot read ({e.strerror or e})")
            continue
        body = head[3:] if head.startswith(codecs.BOM_UTF8) else head
        body = body.lstrip(_WS)
        if not body:
            out.refused.append(f"{export.display} is empty (0 conversations); was the export cut short?")
            continue
        first = body[:1]
        if export.kind == "chatgpt_export":
            if first not in (b"[", b"{") and body[1:].lstrip(_WS)[:1] != b"{":
                out.refused.append(f"{export.display} is not a ChatGPT export (expected a JSON array of "
                                   f"conversations; {_describe(body)}) nor any other input Kenning reads (Claude "
                                   "export, transcript, LoCoMo file, mbox, .ics calendar)")
                continue
            if first == b"[" and body[1:].lstrip(_WS)[:1] == b"]" and len(head) < HEAD_BYTES:
                out.notes.append(f"{export.display} is an empty list: the export holds no conversations, "
                                 "nothing to import from it")
                continue
            if first == b"{":
                out.notes.append(f"{export.display} holds a single conversation object, not the export's list "
                                 "of conversations; importing it as one conversation")
        out.paths.append(p)
    return out
