"""``graph_events.jsonl`` (DOC72 §3.1, §28): every committed mutation, appended after the commit, in commit order.

SQLite is authoritative; the log is an export. Export is idempotent and resumable: the last line names the last
exported commit's ``seq``, and each call appends the commits after it — so a failed export (disk full, a read-only
folder) loses nothing and the next write, stage or ``kenning graph export-log`` catches up. ``rebuild`` replays the
log into an empty node store: the same content, deterministically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import apsw
import jsonpatch
import orjson

from kenning.config import Config
from kenning.knowledge import docs, patch as jpatch
from kenning.knowledge.errors import EventLogError
from kenning.privatefs import PRIVATE_FILE, private_dir
from kenning.store import knowledge as ksql
from kenning.store.connection import write_scope

FORMAT = "kenning.graph_events/1"


def log_path(conn: apsw.Connection, config: Config) -> Path | None:
    """Where the vault's log lives: ``knowledge.store.event_log`` (a path, ``off``), or ``auto`` = beside the
    vault as ``<vault stem>.graph_events.jsonl`` (decision K3). An in-memory vault has none."""
    setting = config.knowledge.store.event_log
    if setting == "off":
        return None
    if setting != "auto":
        return Path(setting).expanduser()
    name = conn.filename
    if not name or name == ":memory:":
        return None
    vault = Path(name)
    return vault.with_name(f"{vault.stem}.graph_events.jsonl")


def last_exported_seq(path: Path) -> int:
    """The seq of the log's last line (call after ``_truncate_torn_tail``: the file ends with a newline)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with path.open("rb") as f:
        pos, tail = f.seek(0, os.SEEK_END), b""
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            body = tail.rstrip(b"\n")
            i = body.rfind(b"\n")
            if i >= 0 or pos == 0:
                line = body[i + 1:]
                return int(orjson.loads(line)["seq"]) if line.strip() else 0
    return 0


def _truncate_torn_tail(path: Path) -> None:
    data_end = path.stat().st_size
    if data_end == 0:
        return
    with path.open("rb+") as f:
        f.seek(data_end - 1)
        if f.read(1) == b"\n":
            return
        # walk back to the previous newline and cut the torn line
        pos = data_end
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            chunk = f.read(step)
            i = chunk.rfind(b"\n")
            if i >= 0:
                f.truncate(pos + i + 1)
                return
        f.truncate(0)


def commit_record(conn: apsw.Connection, commit: dict[str, Any]) -> dict[str, Any]:
    """One log line: a commit row (as ``list_commits`` returns it), its mutations and its outcome events."""
    cid = commit["commit_id"]
    return {"format": FORMAT, "seq": commit["seq"],
            "commit": {k: commit[k] for k in ksql.COMMIT_COLS},
            "mutations": [{k: m[k] for k in ("ordinal", "type", "target_id", "patch", "reverse_patch")}
                          for m in ksql.get_mutations(conn, cid)],
            "outcome_events": [{k: e[k] for k in ksql.OUTCOME_COLS if k != "commit_id"}
                               for e in ksql.outcome_events(conn, commit_id=cid)]}


# path → (file size, last seq) after this process's last export: a file of that size needs no tail read.
_KNOWN: dict[str, tuple[int, int]] = {}


def export_pending(conn: apsw.Connection, config: Config, *, batch: int = 2000) -> int:
    """Append every commit not yet in the log; returns how many. Never raises for an I/O failure: it leaves the
    log behind (SQLite stays authoritative) and the next call retries."""
    path = log_path(conn, config)
    if path is None:
        return 0
    try:
        return export_to(conn, path, batch)
    except OSError:
        return 0


def export_to(conn: apsw.Connection, path: Path, batch: int = 2000) -> int:
    """Append the commits after the log's last line; raises OSError when the file cannot be written."""
    size = path.stat().st_size if path.exists() else -1
    known = _KNOWN.get(str(path))
    if known is not None and known[0] == size:
        done = known[1]
    else:
        if size > 0:
            _truncate_torn_tail(path)
        done = last_exported_seq(path)
    newest = ksql.max_commit_seq(conn)
    if newest <= done:
        return 0
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
    written = 0
    with os.fdopen(fd, "ab") as f:
        while True:
            commits = ksql.list_commits(conn, after_seq=done, limit=batch)
            if not commits:
                break
            for c in commits:
                f.write(ksql.to_json(commit_record(conn, c)).encode() + b"\n")
                done = c["seq"]
                written += 1
        f.flush()  # no fsync: the log is an export; a line lost to a power cut is re-exported from SQLite
    _KNOWN[str(path)] = (path.stat().st_size, done)
    return written


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        raise EventLogError(f"no event log at {path}")
    with path.open("rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                if not line.endswith(b"\n"):
                    return  # a torn last line: the commit it began is in SQLite, not yet fully exported
                raise EventLogError(f"{path}, line {n}: not JSON ({e})") from e
            if rec.get("format") != FORMAT:
                raise EventLogError(f"{path}, line {n}: unknown format {rec.get('format')!r}")
            yield rec


def rebuild(conn: apsw.Connection, path: Path) -> dict[str, int]:
    """Empty the node store and replay the log, commit by commit, in one transaction."""
    counts = {"commits": 0, "mutations": 0, "outcome_events": 0}
    with write_scope(conn):
        ksql.wipe(conn)
        expected_seq = 0
        for rec in read_log(path):
            if rec["seq"] <= expected_seq:
                raise EventLogError(f"{path}: seq {rec['seq']} is out of order (after {expected_seq})")
            expected_seq = rec["seq"]
            for m in rec["mutations"]:
                before = docs.load(conn, m["target_id"])
                after = _apply_patch(before, m["patch"], path, rec["seq"])
                docs.save(conn, m["target_id"], before, after)
            c = rec["commit"]
            ksql.insert_commit(conn, {**c, "seq": rec["seq"]},
                               [{"commit_id": c["commit_id"], **m} for m in rec["mutations"]])
            for e in rec["outcome_events"]:
                ksql.insert_outcome_event(conn, {**e, "commit_id": c["commit_id"]})
            counts["commits"] += 1
            counts["mutations"] += len(rec["mutations"])
            counts["outcome_events"] += len(rec["outcome_events"])
    return counts


def _apply_patch(doc: dict[str, Any], patch: list[dict[str, Any]], path: Path, seq: int) -> dict[str, Any]:
    try:
        return jpatch.apply(doc, patch)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
        raise EventLogError(f"{path}: commit seq {seq} does not apply to the state before it ({e})") from e
