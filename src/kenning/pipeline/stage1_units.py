"""Stage 1 for the issue-18 sources: Claude.ai exports, mbox mail and .ics calendars into the same raw tables as chats
(notes folders: ``stage1_notes``). Each reads its file streaming, one record at a time, and hands
:class:`~kenning.sources.units.Unit` values to :class:`UnitFileImport`, which mirrors the ChatGPT importer: an unchanged
file or unit changes nothing, a changed unit is applied message by message with the old raw archived (D12), and a bad
record is rejected alone with file, record, pointer and reason while the rest imports (R4)."""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Iterator

import orjson

from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage1 import _FileImport, import_config_hash
from kenning.sources.chatgpt import RecordError, parse_record
from kenning.sources.inputs import ExportFile, HashingReader
from kenning.sources.jcs import jcs_hash, sha256_hex
from kenning.sources.json_stream import NotJsonArray, RecordStream, StreamProblem
from kenning.sources.transcript import Problem
from kenning.sources.units import Unit, build_unit, import_bytes
from kenning.store import raw as raw_sql

Reader = Callable[[HashingReader, StageContext], Iterable["Unit | Problem"]]


def units_config_hash(ctx: StageContext, kind: str) -> str:
    c = ctx.config.corpus
    return jcs_hash({"stage1": import_config_hash(ctx), "kind": kind, "mail": c.mail.model_dump(mode="json"),
                     "calendar": c.calendar.model_dump(mode="json"), "self": ctx.inputs.get("self_name") or ""})


class UnitFileImport(_FileImport):
    label = "record"

    def __init__(self, ctx: StageContext, export: ExportFile, counts: Counter, changes: list, read: Reader,
                 label: str = "record"):
        super().__init__(ctx, export, counts, changes)
        self.read, self.label = read, label
        self.cfg_hash = units_config_hash(ctx, export.kind)

    def record_label(self, index: int | None) -> str:
        return "the whole file" if index is None else f"{self.label} {index}"

    def run(self) -> None:
        if self.already_imported():
            return
        with self.export.open() as f:
            reader = HashingReader(f)
            try:
                for item in self.read(reader, self.ctx):
                    if isinstance(item, Problem):
                        raw = item.raw if isinstance(item.raw, (bytes, str)) or item.raw is None \
                            else orjson.dumps(item.raw, default=str)
                        self.reject(item.record_index, None, item.pointer, item.action, item.code, item.message, raw)
                        if item.record_index is None and item.action == "skipped":
                            self.counts["files_failed"] += 1
                    else:
                        self.unit(item)
                    self.ctx.progress(advance_bytes=reader.bytes_read, total_bytes=self.export.size,
                                      records=self.counts["records"], file=self.export.display)
            except RecordError as e:
                with self.export.open() as g:
                    head = g.read(4096)
                self.reject(None, None, e.pointer, "skipped", e.code, str(e), head)
                self.counts["files_failed"] += 1
            reader.drain()
        self.finish(reader.sha256.hexdigest(), reader.bytes_read)

    def unit(self, u: Unit) -> str | None:
        """Store one unit; its conversation id, or None when nothing of it could be kept."""
        ctx, counts = self.ctx, self.counts
        counts["records"] += 1
        self.records += 1
        import_key = sha256_hex(self.cfg_hash.encode() + import_bytes(u))
        known = raw_sql.conversation_id_by_import_key(ctx.conn, import_key)
        if known is not None:
            counts["conversations_unchanged"] += 1
            self.links.append((known, u.record_index))
            return known
        built = build_unit(u, ids=ctx.ids, run_id=ctx.run_id, import_key=import_key)
        cid = built.conversation["conversation_id"]
        raw = orjson.dumps(u.raw, default=str)
        for code, message in built.repairs:
            self.reject(u.record_index, u.export_id, None, "repaired", code, message, raw)
        for pointer, code, message, node in built.node_rejects:
            self.reject(u.record_index, u.export_id, pointer, "skipped", code, message,
                        node if isinstance(node, (bytes, str)) else orjson.dumps(node, default=str))
        for code, message, context in built.warnings:
            ctx.warn(code, f"{self.export.display}: {self.label} {u.record_index}: {message}", conversation=cid,
                     **context)
        if not built.messages:
            counts["units_empty"] += 1   # nothing to keep: its rejects say why
            return None
        existing = raw_sql.get_conversation(ctx.conn, cid)
        stored = raw_sql.messages_of(ctx.conn, cid) if existing else {}
        self.store(existing, stored, built)
        self.links.append((cid, u.record_index))
        counts[f"{u.source_kind}_units"] += 1
        return cid


# -- readers -------------------------------------------------------------------------------------------------------

def read_claude(reader: HashingReader, ctx: StageContext) -> Iterator[Unit | Problem]:
    from kenning.sources.claude import claude_unit

    # The same resynchronisation as ChatGPT exports (P30): a damaged byte costs only the conversation it hits.
    stream = RecordStream(reader, lambda o: isinstance(o, dict) and "chat_messages" in o)
    try:
        for item in stream:
            if isinstance(item, StreamProblem):
                if item.code in ("TRUNCATED_RECORD", "EMPTY_FILE", "DAMAGED_RECORD", "MALFORMED_JSON"):
                    yield Problem(item.index, None, "skipped", item.code, item.message, item.data or b"")
                else:
                    ctx.warn(item.code, item.message)
                continue
            try:
                obj, repairs = parse_record(item.data)
                unit = claude_unit(item.index, obj)
            except RecordError as e:
                if e.code == "MALFORMED_JSON":
                    stream.damaged(item, e.code, str(e))
                    continue
                yield Problem(item.index, e.pointer, "skipped", e.code, str(e), item.data)
                continue
            unit.repairs.extend(repairs)
            yield unit
    except NotJsonArray as e:
        raise RecordError("NOT_AN_EXPORT", str(e)) from e


def read_mbox(reader: HashingReader, ctx: StageContext) -> Iterator[Unit | Problem]:
    from kenning.sources.mbox import mail_units

    yield from mail_units(reader, ctx.config.corpus.mail, ctx.inputs.get("self_name"))


def read_ics(reader: HashingReader, ctx: StageContext) -> Iterator[Unit | Problem]:
    from kenning.sources.ics import calendar_units

    yield from calendar_units(reader, ctx.config.corpus.calendar, ctx.config.corpus.mail.self_addresses,
                              ctx.inputs.get("self_name"))


READERS: dict[str, tuple[Reader, str]] = {
    "claude_export": (read_claude, "record"),
    "mbox": (read_mbox, "mail"),
    "ics": (read_ics, "event"),
}


def import_units(ctx: StageContext, export: ExportFile, counts: Counter, changes: list) -> None:
    read, label = READERS[export.kind]
    UnitFileImport(ctx, export, counts, changes, read, label).run()


__all__ = ["READERS", "UnitFileImport", "import_units"]
