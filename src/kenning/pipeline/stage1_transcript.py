"""Stage 1 for transcripts: JSON / JSONL transcripts and LoCoMo files into the same raw tables as chats.

Each session is one record: its import key covers the session, the transcript header and ``--self``,
so re-importing an unchanged file changes nothing and an edited session is applied message by message
exactly as a newer ChatGPT export is (D12). Bad lines, sessions and turns are rejected alone (R4).
"""

from __future__ import annotations

from collections import Counter

import orjson

from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage1 import _FileImport, _skip_forgotten, import_config_hash
from kenning.sources.chatgpt import RecordError
from kenning.sources.inputs import ExportFile, HashingReader
from kenning.sources.jcs import jcs_hash, sha256_hex
from kenning.sources.locomo import read_locomo
from kenning.sources.transcript import (Transcript, build_session, participant_rows, read_json, read_jsonl,
                                        self_participant, session_import_bytes)
from kenning.store import raw as raw_sql


def transcript_config_hash(ctx: StageContext) -> str:
    return jcs_hash({"stage1": import_config_hash(ctx),
                     "transcripts": ctx.config.transcripts.model_dump(mode="json")})


class _Lines:
    """Iterate a binary file's lines while hashing every byte."""

    def __init__(self, reader: HashingReader):
        self.reader = reader

    def __iter__(self):
        buf = b""
        while True:
            chunk = self.reader.read(1 << 20)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            yield from lines
        if buf:
            yield buf


class TranscriptFileImport(_FileImport):
    def __init__(self, ctx: StageContext, export: ExportFile, counts: Counter, changes: list, self_name: str | None):
        super().__init__(ctx, export, counts, changes)
        self.self_name = self_name
        self.cfg_hash = transcript_config_hash(ctx)

    def record_label(self, index: int | None) -> str:
        if index is None:
            return "the whole file"
        if self.export.kind == "transcript_jsonl":
            return f"line {index + 1}"
        return f"session record {index}"

    def read(self, reader: HashingReader) -> Transcript:
        if self.export.kind == "transcript_jsonl":
            return read_jsonl(_Lines(reader))
        data = reader.read()
        if self.export.kind == "locomo":
            return read_locomo(data)
        return read_json(data)

    def run(self) -> None:
        ctx, export = self.ctx, self.export
        with export.open() as f:
            reader = HashingReader(f)
            try:
                transcript = self.read(reader)
            except RecordError as e:
                reader.drain()
                with export.open() as g:
                    head = g.read(4096)
                self.reject(None, None, e.pointer, "skipped", e.code, str(e), head)
                self.counts["files_failed"] += 1
                self.finish(reader.sha256.hexdigest(), reader.bytes_read)
                return
            reader.drain()
        for p in transcript.problems:
            raw = p.raw if isinstance(p.raw, (bytes, str)) or p.raw is None else orjson.dumps(p.raw, default=str)
            self.reject(p.record_index, None, p.pointer, p.action, p.code, p.message, raw)
        if self.self_name and transcript.participants and self_participant(transcript.participants, self.self_name) is None:
            names = ", ".join(p.name for p in transcript.participants)
            ctx.warn("SELF_NOT_A_PARTICIPANT", f"{export.display}: --self {self.self_name!r} is none of the "
                     f"participants ({names}); every turn keeps role 'unknown'", file=export.display)
        self.counts["transcripts"] += 1
        tz = ctx.config.transcripts.default_timezone
        for session in transcript.sessions:
            self.session(transcript, session, tz)
            ctx.progress(advance_bytes=reader.bytes_read, total_bytes=export.size, records=self.counts["records"],
                         file=export.display)
        self.finish(reader.sha256.hexdigest(), reader.bytes_read)

    def session(self, transcript: Transcript, session, tz: str) -> None:
        ctx, counts = self.ctx, self.counts
        counts["records"] += 1
        self.records += 1
        counts["sessions"] += 1
        data = session_import_bytes(transcript, session, self.self_name)
        import_key = sha256_hex(self.cfg_hash.encode() + data)
        known = raw_sql.conversation_id_by_import_key(ctx.conn, import_key)
        if known is not None:
            counts["conversations_unchanged"] += 1
            self.links.append((known, session.record_index))
            return
        built = build_session(transcript, session, ids=ctx.ids, run_id=ctx.run_id, import_key=import_key,
                              self_name=self.self_name, timezone=tz)
        cid = built.conversation["conversation_id"]
        if _skip_forgotten(ctx, cid, counts):
            return
        for code, message in built.repairs:
            self.reject(session.record_index, cid, None, "repaired", code, message, data)
        turn_index = {id(t.obj): t for t in session.turns}
        for action, items in (("skipped", built.node_rejects), ("repaired", built.node_repairs)):
            for pointer, code, message, raw in items:
                t = turn_index.get(id(raw))
                index = t.record_index if t is not None else session.record_index
                self.reject(index, cid, pointer, action, code, message, orjson.dumps(raw, default=str))
        for code, message, context in built.warnings:
            ctx.warn(code, f"{self.export.display}: session {session.session_id}: {message}", conversation=cid,
                     **context)
        if not built.messages:
            counts["sessions_empty"] += 1   # nothing to keep: its rejects say why (R4)
            return
        existing = raw_sql.get_conversation(ctx.conn, cid)
        stored = raw_sql.messages_of(ctx.conn, cid) if existing else {}
        self.store(existing, stored, built)
        raw_sql.replace_participants(ctx.conn, cid, participant_rows(
            transcript, cid, self.self_name, (m["author_name"] for m in built.messages)))
        counts["turns_imported"] += len(built.messages)
        self.links.append((cid, session.record_index))
