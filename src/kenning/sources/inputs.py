"""Find the bytes behind a path the user gave: a conversations.json, an export .zip, or a folder."""

from __future__ import annotations

import hashlib
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
        raise InputError(f"{path} has no conversations.json inside; is it a ChatGPT data export?")
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


def resolve_export(path: str | Path) -> ExportFile:
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    if p.is_dir():
        inner = p / "conversations.json"
        if not inner.is_file():
            raise InputError(f"{path} is a folder without a conversations.json")
        return ExportFile(str(inner), None, inner.stat().st_size)
    if zipfile.is_zipfile(p):
        member, size = _zip_member(p)
        return ExportFile(str(path), member, size)
    return ExportFile(str(path), None, p.stat().st_size)


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
