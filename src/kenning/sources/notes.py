"""Markdown / Obsidian notes (issue 18 part 7; seed 003 §20B.2): each note is a conversation-like unit; each import of a
changed note is a new note version (content hash), assessed with the session-close rules before anything is mined.

``assess`` is ``onNoteSessionClose`` in the seed's order (decisions I60–I63):
1. an extraction baseline still in flight → ``defer``;
2. no assessed version yet: fewer than ``placeholder_chars`` characters → ``skip_placeholder``, else
   ``deep_first_write``;
3. added bytes (lines added by the diff, UTF-8) below ``micro_edit_bytes`` → ``skip_micro_edit``;
4. a user-flagged note (``focus: true`` / ``kenning: learn`` in front matter, or a ``#focus`` tag) →
   ``deep_user_flagged``;
5. scoring — the funnel's ``scoreImportance`` is issue 18 part 1; until it is wired in, semantic-diff signals
   (dates, deadlines) or ≥ ``double_extract_bytes`` added → ``deep``, else ``shallow`` (I62);
6. an extraction already done in this session (the last one within ``session_timeout_minutes``) and fewer than
   ``double_extract_bytes`` added → ``skip_double_extract``;
7. deep/shallow → the note's messages are updated (mined by the later stages of the same run); skips only advance
   the assessment pointer.
Pure functions; the SQL is in ``store/corpus.py``."""

from __future__ import annotations

import datetime as dt
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

EXTRACT = ("deep_first_write", "deep_user_flagged", "deep", "shallow")
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_FLAG = re.compile(r"^\s*(focus\s*:\s*(true|yes)|kenning\s*:\s*learn)\s*$", re.I | re.M)
_FOCUS_TAG = re.compile(r"(?<![\w/])#focus\b", re.I)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                   r"[a-z]*\.? \d{1,2})\b", re.I)
_DEADLINE = re.compile(r"\b(due|deadline|by (monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow)|"
                       r"before|until|renew)\b", re.I)
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)
_DATE_KEY = re.compile(r"^\s*(date|created)\s*:\s*(.+?)\s*$", re.I | re.M)


@dataclass(frozen=True)
class Delta:
    added: str
    removed: str

    @property
    def added_bytes(self) -> int:
        return len(self.added.encode("utf-8"))


def diff(prior: str, current: str) -> Delta:
    added, removed = [], []
    for line in difflib.unified_diff(prior.splitlines(), current.splitlines(), lineterm="", n=0):
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    return Delta("\n".join(added), "\n".join(removed))


def user_flagged(content: str) -> bool:
    m = _FRONT.match(content)
    return bool((m and _FLAG.search(m.group(1))) or _FOCUS_TAG.search(content))


def semantic_signals(delta: Delta) -> dict[str, bool]:
    """The deterministic part of §20B.2 SemanticDiffSignals (polarity / conclusion shifts need a model)."""
    return {"changed_dates": bool(_DATE.search(delta.added) or _DATE.search(delta.removed)),
            "deadline_shift_detected": bool(_DEADLINE.search(delta.added))}


def _ts(v: str | None) -> dt.datetime | None:
    if not v:
        return None
    try:
        return dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None


def assess(*, content: str, prior: str | None, baseline_in_flight: bool, last_extracted_at: str | None, now: str,
           cfg) -> tuple[str, int | None]:
    """(decision, added bytes) for a new version of a note (§20B.2 onNoteSessionClose)."""
    if baseline_in_flight:
        return "defer", None
    if prior is None:
        return ("skip_placeholder" if len(content) < cfg.placeholder_chars else "deep_first_write"), None
    delta = diff(prior, content)
    added = delta.added_bytes
    if added < cfg.micro_edit_bytes:
        return "skip_micro_edit", added
    if user_flagged(content):
        return "deep_user_flagged", added
    signals = semantic_signals(delta)
    decision = "deep" if (any(signals.values()) or added >= cfg.double_extract_bytes) else "shallow"
    last, at = _ts(last_extracted_at), _ts(now)
    in_session = last is not None and at is not None and \
        dt.timedelta(0) <= at - last <= dt.timedelta(minutes=cfg.session_timeout_minutes)
    if in_session and added < cfg.double_extract_bytes:
        return "skip_double_extract", added
    return decision, added


def note_title(rel_path: str, content: str) -> str:
    body = content[_FRONT.match(content).end():] if _FRONT.match(content) else content
    m = _HEADING.search(body)
    return m.group(1).strip() if m else Path(rel_path).stem


def note_date(content: str) -> str | None:
    m = _FRONT.match(content)
    if m:
        d = _DATE_KEY.search(m.group(1))
        if d:
            return d.group(2).strip().strip("'\"")
    return None


def note_files(root: Path, extensions: list[str], ignore_dirs: list[str]) -> list[Path]:
    """Every note under ``root`` in a stable order, skipping tool folders (.obsidian, .trash, …)."""
    exts = {e.lower() for e in extensions}
    ignore = set(ignore_dirs)
    out = []
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if any(part in ignore for part in rel.parts[:-1]) or not p.is_file() or p.suffix.lower() not in exts:
            continue
        out.append(p)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


__all__ = ["EXTRACT", "Delta", "assess", "diff", "note_date", "note_files", "note_title", "semantic_signals",
           "user_flagged"]
