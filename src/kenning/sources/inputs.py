"""Find the bytes behind a path the user gave, and what kind of input they are.

Kinds (``ExportFile.kind``): ``chatgpt_export`` (a conversations.json, the export .zip, or a folder
holding conversations.json), ``claude_export`` (the same places, Claude.ai's shape: ``chat_messages``),
``transcript_json`` / ``transcript_jsonl`` (docs/transcript-format.md), ``locomo`` (a LoCoMo conversation
file), ``notes_folder`` (a folder of Markdown/Obsidian notes), ``mbox`` (a mailbox) and ``ics`` (a calendar). A file's kind is decided by its structure, never its
name alone (R2): the first bytes are sniffed for the keys each format must have.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator


class InputError(ValueError):
    """The path cannot be imported; the message says what to do."""


@dataclass(frozen=True)
class ExportFile:
    path: str                 # as the user gave it
    member: str | None        # the file inside a zip, if any
    size: int                 # bytes to read (uncompressed size for zip members)
    kind: str = "chatgpt_export"

    @property
    def display(self) -> str:
        return f"{self.path}!{self.member}" if self.member else self.path

    @contextmanager
    def open(self) -> Iterator[BinaryIO]:
        if self.member is None:
            with open(self.path, "rb") as f:
                yield f
        else:
            with zipfile.ZipFile(self.path) as z, z.open(self.member) as f:
                yield f


def _zip_member(path: Path) -> tuple[str, int]:
    try:
        with zipfile.ZipFile(path) as z:
            candidates = [i for i in z.infolist() if Path(i.filename).name == "conversations.json"]
    except zipfile.BadZipFile as e:
        raise InputError(f"{path} is not a readable zip file ({e})") from e
    if not candidates:
        raise InputError(f"{path} has no conversations.json inside; is it a ChatGPT or Claude.ai data export?")
    best = min(candidates, key=lambda i: (i.filename.count("/"), i.filename))
    return best.filename, best.file_size


CHATGPT_EXPORT = "chatgpt_export"
WIKI_WORKSPACE = "wiki_workspace"


def classify_input(path: str | Path, wiki_dir: str = "wiki", sidecar_suffix: str = ".beliefs.json") -> str:
    """What `kenning ingest PATH` is looking at, by its structure: a wiki workspace (a folder holding
    ``wiki/`` pages and/or ``*.beliefs.json`` sidecars, seed 002) or a ChatGPT export (everything else, so
    the export importer keeps reporting unreadable paths as before)."""
    from kenning.sources.wiki import is_wiki_workspace

    p = Path(path).expanduser()
    if p.is_dir() and is_wiki_workspace(p, wiki_dir, sidecar_suffix):
        return WIKI_WORKSPACE
    return CHATGPT_EXPORT


INPUT_KINDS = ("chatgpt_export", "claude_export", "transcript_json", "transcript_jsonl", "locomo", "notes_folder",
               "mbox", "ics")
NOTE_SUFFIXES = (".md", ".markdown")
_CLAUDE = re.compile(rb'"chat_messages"\s*:')
_MBOX_FROM = re.compile(rb"^From \S+")
SNIFF_BYTES = 64 * 1024
_KEY = r'"%s"\s*:'
_LOCOMO_KEYS = [re.compile((_KEY % k).encode()) for k in ("speaker_a", "speaker_b")]
_LOCOMO_SESSION = re.compile((_KEY % r"session_\d+").encode())
_TRANSCRIPT_KEYS = [re.compile((_KEY % k).encode()) for k in ("sessions",)]
_TRANSCRIPT_FORMAT = re.compile(rb'"format"\s*:\s*"kenning\.transcript/')
_JSONL_TYPE = re.compile(rb'^\s*\{.*"type"\s*:\s*"(transcript|session|turn)"')


def sniff_kind(head: bytes) -> str:
    """The input kind of a plain file from its first bytes (a prefix of at most SNIFF_BYTES)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:15].upper().startswith(b"BEGIN:VCALENDAR"):
        return "ics"
    if _MBOX_FROM.match(head):
        return "mbox"
    if text.startswith(b"[") and _CLAUDE.search(text) and b'"mapping"' not in text:
        return "claude_export"
    if text.startswith(b"{"):
        first_line = text.split(b"\n", 1)[0]
        if _JSONL_TYPE.match(first_line) and b"\n" in text.strip():
            return "transcript_jsonl"
        if all(k.search(text) for k in _LOCOMO_KEYS) and _LOCOMO_SESSION.search(text):
            return "locomo"
        if _TRANSCRIPT_FORMAT.search(text) or (all(k.search(text) for k in _TRANSCRIPT_KEYS)
                                              and b'"mapping"' not in text):
            return "transcript_json"
        if _JSONL_TYPE.match(first_line):
            return "transcript_jsonl"
    return "chatgpt_export"


def _head_kind(export: ExportFile) -> str:
    """ChatGPT or Claude: both call their file conversations.json; the records tell them apart."""
    with export.open() as f:
        head = f.read(SNIFF_BYTES)
    return "claude_export" if sniff_kind(head) == "claude_export" else "chatgpt_export"


def has_notes(p: Path) -> bool:
    return any(f.suffix.lower() in NOTE_SUFFIXES for f in p.rglob("*") if f.is_file())


def resolve_export(path: str | Path) -> ExportFile:
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    if p.is_dir():
        inner = p / "conversations.json"
        if not inner.is_file():
            if has_notes(p):
                return ExportFile(str(path), None, 0, "notes_folder")
            raise InputError(f"{path} is a folder without a conversations.json or Markdown notes (.md)")
        e = ExportFile(str(inner), None, inner.stat().st_size)
        return ExportFile(e.path, None, e.size, _head_kind(e))
    if zipfile.is_zipfile(p):
        member, size = _zip_member(p)
        e = ExportFile(str(path), member, size)
        return ExportFile(e.path, member, size, _head_kind(e))
    try:
        with open(p, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    return ExportFile(str(path), None, p.stat().st_size, sniff_kind(head))


class HashingReader:
    """A read-through wrapper that hashes and counts every byte read."""

    def __init__(self, f: BinaryIO):
        self._f = f
        self.sha256 = hashlib.sha256()
        self.bytes_read = 0

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self.sha256.update(data)
        self.bytes_read += len(data)
        return data

    def drain(self) -> None:
        """Hash whatever the parser did not need (e.g. after a fatal shape error)."""
        while self.read(1 << 20):
            pass
