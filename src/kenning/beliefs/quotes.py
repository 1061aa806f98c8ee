"""Verbatim quote anchors: the hash, and the deterministic check against the live source (seed 002, "the
deterministic hash check from 13_hostile_verifier.md"). No model is involved anywhere in here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERIFIED = "verified"        # the recorded span of the live source hashes to quote_hash
RELOCATED = "relocated"      # the exact quote is still in the live file, elsewhere (raw files only; W8)
DRIFTED = "drifted"          # the quote is no longer in the live source
SOURCE_MISSING = "source_missing"  # the file / message is gone or unreadable


def quote_hash(quote: str) -> str:
    """sha256 hex of the quote's UTF-8 bytes, exactly as written (no normalisation)."""
    return hashlib.sha256(quote.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verification:
    status: str
    char_start: int | None = None
    char_end: int | None = None
    detail: str | None = None

    @property
    def verified(self) -> bool:
        return self.status in (VERIFIED, RELOCATED)


def check_span(text: str, char_start: int, char_end: int, expected_hash: str, quote: str | None = None,
               allow_relocation: bool = False) -> Verification:
    """Re-hash ``text[char_start:char_end]``; optionally look for the quote elsewhere in the text."""
    if quote_hash(text[char_start:char_end]) == expected_hash:
        return Verification(VERIFIED, char_start, char_end)
    if allow_relocation and quote and quote_hash(quote) == expected_hash:
        at = text.find(quote)
        if at >= 0:
            return Verification(RELOCATED, at, at + len(quote), f"quote moved from {char_start} to {at}")
    return Verification(DRIFTED, char_start, char_end, "the quoted text is no longer in the source")


def decode_raw(data: bytes) -> str:
    """Raw files are read as UTF-8 bytes, without newline translation, so offsets mean the same every time."""
    return data.decode("utf-8", errors="replace")


def read_raw_text(path: Path) -> str:
    return decode_raw(path.read_bytes())


class LiveSources:
    """Reads each live source once per use: raw files under a workspace root, and messages' text_raw."""

    def __init__(self, roots: dict[str, str | None], message_text: Any):
        self.roots = roots                  # workspace slug -> root path on disk
        self._message_text = message_text   # callable(message_ids) -> {message_id: text_raw}
        self._files: dict[tuple[str, str], str | None] = {}
        self._messages: dict[str, str | None] = {}

    def file_text(self, workspace: str, raw_path: str) -> str | None:
        key = (workspace, raw_path)
        if key not in self._files:
            root = self.roots.get(workspace)
            text = None
            if root:
                try:
                    text = read_raw_text(Path(root) / raw_path)
                except OSError:
                    text = None
            self._files[key] = text
        return self._files[key]

    def forget_files(self) -> None:
        self._files.clear()

    def forget_messages(self) -> None:
        self._messages.clear()

    def prefetch_messages(self, message_ids: list[str]) -> None:
        wanted = [m for m in set(message_ids) if m not in self._messages]
        if wanted:
            found = self._message_text(wanted)
            for m in wanted:
                self._messages[m] = found.get(m)

    def verify(self, prov: dict) -> Verification:
        if prov["source_kind"] == "conversation":
            self.prefetch_messages([prov["message_id"]])
            text = self._messages.get(prov["message_id"])
            if text is None:
                return Verification(SOURCE_MISSING, detail=f"message {prov['message_id']} is not in the vault")
            # Conversation quotes are positional: text_raw[char_start:char_end] must hash to quote_hash (W8).
            return check_span(text, prov["char_start"], prov["char_end"], prov["quote_hash"])
        text = self.file_text(prov["workspace"], prov["raw_path"])
        if text is None:
            return Verification(SOURCE_MISSING, detail=f"{prov['raw_path']} cannot be read")
        return check_span(text, prov["char_start"], prov["char_end"], prov["quote_hash"], prov["quote"],
                          allow_relocation=True)
