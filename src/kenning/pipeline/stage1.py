"""Stage 1 — raw import (seed 001 §1): every conversation kept exactly, with stable IDs, in one transaction."""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import orjson

from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage0 import check_namespace
from kenning.sources.chatgpt import Built, RecordError, build_conversation, parse_record
from kenning.sources.inputs import ExportFile, HashingReader, InputError, resolve_export
from kenning.sources.jcs import canonicalize, jcs_hash, sha256_hex
from kenning.sources.jsonpointer import MISSING, resolve, resolve_first
from kenning.sources.json_stream import Element, NotJsonArray, RecordStream, StreamProblem
from kenning.store import forget as forget_sql
from kenning.store import raw as raw_sql
from kenning.store.raw import MESSAGE_COLUMNS

MAX_REPORTED_CHANGES = 20


def import_config_hash(ctx: StageContext) -> str:
    """What stage 1's output depends on besides the bytes: part of every record's import key."""
    c = ctx.config
    return jcs_hash({"ids": c.ids.model_dump(mode="json"), "export_mapping": c.export_mapping.model_dump(mode="json"),
                     "text_structure": c.text_structure.model_dump(mode="json"), "time": c.time.model_dump(mode="json")})


def _skip_forgotten(ctx: StageContext, conversation_id: str, counts: Counter) -> bool:
    """Issue 23 §1: a conversation `kenning forget` removed stays out of a re-import unless
    ``forget.include_forgotten`` (`kenning ingest --include-forgotten`), which also lifts the mark (decision P4)."""
    if not forget_sql.is_forgotten(ctx.conn, conversation_id):
        return False
    if ctx.config.forget.include_forgotten:
        forget_sql.unforget(ctx.conn, conversation_id)
        counts["conversations_unforgotten"] += 1
        return False
    counts["conversations_forgotten_skipped"] += 1
    return True


class _FileImport:
    def __init__(self, ctx: StageContext, export: ExportFile, counts: Counter, changes: list):
        self.ctx, self.export, self.counts, self.changes = ctx, export, counts, changes
        self.cfg_hash = import_config_hash(ctx)
        self.rejects: list[dict] = []
        self.links: list[tuple[str, int]] = []
        self.records = 0

    # -- rejects and warnings -------------------------------------------------------------
    def reject(self, index: int | None, ref: str | None, pointer: str | None, action: str, code: str,
               message: str, raw: bytes | str | None) -> None:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="backslashreplace")
        self.rejects.append({"record_index": index, "record_ref": ref, "pointer": pointer, "action": action,
                             "reason_code": code, "message": message, "raw_text": raw})
        where = f"{self.export.display}: {self.record_label(index)}" + (f" (conversation {ref})" if ref else "")
        if pointer:
            where += f" at {pointer}"
        self.ctx.warn(f"{'REJECTED' if action == 'skipped' else 'REPAIRED'}_{code}", f"{where}: {message}",
                      file=self.export.display, record_index=index, conversation=ref, pointer=pointer)
        self.counts["rejected" if action == "skipped" else "repaired"] += 1

    def record_label(self, index: int | None) -> str:
        return "the whole file" if index is None else f"record {index}"

    def problem(self, p: StreamProblem) -> None:
        if p.code in ("TRUNCATED_RECORD", "DAMAGED_RECORD", "MALFORMED_JSON", "WRONG_SHAPE"):
            self.reject(p.index, None, None, "skipped", p.code, p.message, p.data)
        elif p.code == "EMPTY_FILE":
            self.reject(None, None, None, "skipped", p.code, f"{self.export.display} is empty", b"")
            self.counts["files_failed"] += 1
        else:
            self.ctx.warn(p.code, f"{self.export.display}: {p.message}", file=self.export.display)

    # -- one record -------------------------------------------------------------------------
    def record(self, index: int, data: bytes, stream: RecordStream | None = None, item: Element | None = None) -> None:
        ctx, counts = self.ctx, self.counts
        counts["records"] += 1
        self.records += 1
        import_key = sha256_hex(self.cfg_hash.encode() + data)
        known = raw_sql.conversation_id_by_import_key(ctx.conn, import_key)
        if known is not None:
            counts["conversations_unchanged"] += 1
            self.links.append((known, index))
            return
        ref = None
        limits = ctx.config.import_limits
        try:
            if len(data) > limits.max_record_bytes:
                raise RecordError("RECORD_TOO_LARGE", f"{len(data):,} bytes, more than import_limits.max_record_bytes "
                                  f"({limits.max_record_bytes:,}); raise the limit to import it")
            element = item if item is not None else Element(index, 0, data)
            if not element.nests_within(limits.max_nesting_depth):  # the scanner's bound usually says so
                depth = element.nesting()
                raise RecordError("TOO_DEEP", f"arrays/objects nest {depth:,} deep, more than "
                                  f"import_limits.max_nesting_depth ({limits.max_nesting_depth})")
            obj, repairs = parse_record(data)
            cid_hint = resolve_first(obj, ctx.config.export_mapping.conversation_id_path) if isinstance(obj, dict) else None
            ref = cid_hint if isinstance(cid_hint, str) and cid_hint else None
            existing = raw_sql.get_conversation(ctx.conn, ref) if ref else None
            stored = raw_sql.messages_of(ctx.conn, ref) if existing else {}
            retained = {m["export_message_id"]: orjson.loads(m["raw_message_json"]) for m in stored.values()}
            built = build_conversation(obj, ctx.config, ctx.ids, ctx.run_id, import_key, retained)
        except RecordError as e:
            if stream is not None and item is not None and (e.code == "MALFORMED_JSON" or (
                    e.code == "WRONG_SHAPE" and e.pointer is None and data[:1] == b"[")):
                # Unreadable bytes (or an array where a conversation belongs: a damaged separator
                # can swallow the conversations after it) may mean the scanner lost track of where
                # records end: the stream resynchronises and reports this element (or the whole
                # damaged range) itself.
                counts["records"] -= 1
                self.records -= 1
                stream.damaged(item, e.code, str(e))
                return
            self.reject(index, ref, e.pointer, "skipped", e.code, str(e), data)
            return
        cid = built.conversation["conversation_id"]
        if _skip_forgotten(ctx, cid, self.counts):
            return
        for code, message in repairs + built.repairs:
            self.reject(index, cid, None, "repaired", code, message, data)
        for pointer, code, message, raw in built.node_rejects:
            self.reject(index, cid, pointer, "skipped", code, message, orjson.dumps(raw, default=str))
        for code, message, context in built.warnings:
            ctx.warn(code, f"{self.export.display}: conversation {cid}: {message}", conversation=cid, **context)
        if existing is None and ref is None:
            existing = raw_sql.get_conversation(ctx.conn, cid)
            stored = raw_sql.messages_of(ctx.conn, cid) if existing else {}
        self.store(existing, stored, built)
        self.links.append((cid, index))

    def store(self, existing: dict | None, stored: dict[str, dict], built: Built) -> None:
        """Insert a new conversation, or apply a changed one message by message (D12)."""
        ctx, counts = self.ctx, self.counts
        if existing is None:
            raw_sql.insert_conversation(ctx.conn, built.conversation, built.messages, built.parts)
            counts["conversations_new"] += 1
            counts["messages_new"] += len(built.messages)
            counts["parts_new"] += len(built.parts)
        else:
            self.apply_changes(existing, stored, built)
        counts["chars"] += sum(len(m["text_raw"] or "") for m in built.messages)
        counts["chars"] += sum(len(p["text_content"] or "") for p in built.parts)

    def apply_changes(self, existing: dict, stored: dict[str, dict], built: Built) -> None:
        ctx, counts, run_id = self.ctx, self.counts, self.ctx.run_id
        conv = built.conversation
        stale = bool(existing["updated_at_utc"] and conv["updated_at_utc"]
                     and conv["updated_at_utc"] < existing["updated_at_utc"])
        if stale:
            # An older export than the one stored: it may add messages we never saw, but it never
            # rolls newer versions back (docs/decisions.md D12).
            known = set(stored)
            fresh = [m for m in built.messages if m["message_id"] not in known]
            fresh_ids = {m["message_id"] for m in fresh}
            if fresh:
                raw_sql.insert_messages(ctx.conn, fresh, [p for p in built.parts if p["message_id"] in fresh_ids])
                counts["messages_new"] += len(fresh)
            counts["conversations_stale"] += 1
            return
        conv_changed = raw_sql.changed_columns(existing, conv, raw_sql.CONVERSATION_COLUMNS)
        conv_changed = [c for c in conv_changed if c != "import_key"]
        if existing["raw_sha256"] != conv["raw_sha256"]:
            self._archive("conversations", conv["conversation_id"], existing["raw_conversation_json"])
        parts_by_msg: dict[str, list[dict]] = {}
        for p in built.parts:
            parts_by_msg.setdefault(p["message_id"], []).append(p)
        new_rows, new_parts, changed, rethreaded = [], [], 0, 0
        for m in built.messages:
            old = stored.get(m["message_id"])
            if old is None:
                new_rows.append(m)
                new_parts.extend(parts_by_msg.get(m["message_id"], []))
                continue
            cols = raw_sql.changed_columns(old, m, MESSAGE_COLUMNS)
            if not cols:
                continue
            if "raw_message_json" in cols:
                self._archive("messages", m["message_id"], old["raw_message_json"])
            raw_sql.update_message(ctx.conn, m, cols, run_id)
            if set(cols) - {"tree_path", "order_index", "created_at_utc", "timestamp_quality", "is_current_branch"}:
                raw_sql.replace_parts(ctx.conn, m, parts_by_msg.get(m["message_id"], []))
                changed += 1
            else:
                rethreaded += 1
        raw_sql.insert_messages(ctx.conn, new_rows, new_parts)
        if conv_changed or new_rows or changed:
            raw_sql.update_conversation(ctx.conn, conv, run_id)
            counts["conversations_changed"] += 1
            if len(self.changes) < MAX_REPORTED_CHANGES:
                self.changes.append({"conversation_id": conv["conversation_id"], "title": conv["title"],
                                     "messages_new": len(new_rows), "messages_changed": changed})
        else:
            raw_sql.set_import_key(ctx.conn, conv["conversation_id"], conv["import_key"])
            counts["conversations_unchanged"] += 1
        counts["messages_new"] += len(new_rows)
        counts["parts_new"] += len(new_parts)
        counts["messages_changed"] += changed
        counts["messages_rethreaded"] += rethreaded
        counts["messages_retained_missing"] += built.retained

    def _archive(self, table: str, row_id: str, raw_json: str) -> None:
        archive_id = self.ctx.ids.make("archive", table, row_id, sha256_hex(raw_json))
        raw_sql.archive_raw(self.ctx.conn, archive_id, table, row_id, self.ctx.run_id, raw_json)
        self.counts["raw_versions_archived"] += 1

    # -- the whole file ---------------------------------------------------------------------------
    def already_imported(self) -> bool:
        """The exact same bytes were imported before under the same import config: nothing to do."""
        if not raw_sql.any_source_of_size(self.ctx.conn, self.export.size):
            return False  # no file of this size was imported: skip hashing the whole file twice (J8)
        with self.export.open() as f:
            reader = HashingReader(f)
            reader.drain()
        sha = reader.sha256.hexdigest()
        known = raw_sql.get_source(self.ctx.conn, self.ctx.ids.make("source", sha))
        if known is None or (known["stats"] or {}).get("import_config_hash") != self.cfg_hash:
            return False
        if self.ctx.config.forget.include_forgotten and forget_sql.any_forgotten(self.ctx.conn):
            return False  # issue 23 §1: the file holds forgotten conversations the person asked back
        records = int(known["stats"].get("records", 0))
        self.counts["files_unchanged"] += 1
        self.counts["records"] += records
        self.counts["conversations_unchanged"] += int(known["stats"].get("conversations", records))
        raw_sql.touch_source(self.ctx.conn, known["source_id"], self.ctx.run_id)
        return True

    def run(self) -> None:
        ctx, export = self.ctx, self.export
        if self.already_imported():
            return
        with export.open() as f:
            reader = HashingReader(f)
            try:
                mapping = ctx.config.export_mapping
                stream = RecordStream(reader, lambda o: isinstance(o, dict)
                                      and resolve(o, mapping.messages_path) is not MISSING)
                for item in stream:
                    if isinstance(item, StreamProblem):
                        if item.code in ("DAMAGED_RECORD", "MALFORMED_JSON", "WRONG_SHAPE"):
                            self.counts["records"] += 1
                            self.records += 1
                        self.problem(item)
                    else:
                        self.record(item.index, item.data, stream, item)
                    ctx.progress(advance_bytes=reader.bytes_read, total_bytes=export.size,
                                 records=self.counts["records"], file=export.display)
            except NotJsonArray as e:
                head = reader_head(export)
                self.reject(None, None, None, "skipped", "NOT_AN_EXPORT", str(e), head)
                self.counts["files_failed"] += 1
            reader.drain()
        self.finish(reader.sha256.hexdigest(), reader.bytes_read)

    def finish(self, sha: str, size: int) -> None:
        """The source row, its conversations, and the rejects of this file."""
        ctx, export = self.ctx, self.export
        source_id = ctx.ids.make("source", sha)
        raw_sql.upsert_source(ctx.conn, {
            "source_id": source_id, "kind": export.kind, "path": export.display, "sha256": sha,
            "size_bytes": size, "run_id": ctx.run_id,
            "stats_json": canonicalize({"records": self.records, "conversations": len(self.links),
                                        "import_config_hash": self.cfg_hash}),
        })
        raw_sql.link_source_conversations(ctx.conn, [(source_id, cid, i) for cid, i in self.links])
        for r in self.rejects:
            r.update(run_id=ctx.run_id, source_path=export.display, source_sha256=sha,
                     reject_id=ctx.ids.reject(sha, r["record_index"], r["pointer"], r["reason_code"]))
            raw_sql.insert_reject(ctx.conn, r)


def reader_head(export: ExportFile, n: int = 2048) -> bytes:
    with export.open() as f:
        return f.read(n)


@contextmanager
def _rarer_young_collections() -> Iterator[None]:
    """Each record's parsed tree is thousands of containers that live until the record is stored: with the
    default threshold (700) the collector examines, promotes and re-examines them dozens of times a record.
    They die by reference counting, so a higher first threshold only saves that work (J6); it is restored after."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 50_000), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


class RawImport:
    name = "1"
    title = "raw import"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        with _rarer_young_collections():
            return self._run(ctx)

    def _run(self, ctx: StageContext) -> dict[str, Any]:
        check_namespace(ctx)
        paths = ctx.inputs.get("paths") or []
        counts: Counter = Counter()
        changes: list[dict] = []
        for path in paths:
            try:
                export = resolve_export(path)
            except InputError as e:
                ctx.event("ERROR", "INPUT_UNREADABLE", str(e), path=str(path))
                counts["files_failed"] += 1
                continue
            counts["files"] += 1
            if export.kind == "chatgpt_export":
                _FileImport(ctx, export, counts, changes).run()
            elif export.kind in ("claude_export", "mbox", "ics"):
                from kenning.pipeline.stage1_units import import_units   # issue 18 part 7 sources

                import_units(ctx, export, counts, changes)
            elif export.kind == "notes_folder":
                from kenning.pipeline.stage1_notes import import_notes

                import_notes(ctx, export, counts, changes)
            else:
                from kenning.pipeline.stage1_transcript import TranscriptFileImport

                TranscriptFileImport(ctx, export, counts, changes, ctx.inputs.get("self_name")).run()
        imported = counts["conversations_new"] + counts["conversations_changed"] + counts["conversations_unchanged"]
        out: dict[str, Any] = {k: counts[k] for k in sorted(counts)}
        out["conversations_imported"] = imported
        out["avg_messages_per_new_conversation"] = (
            round(counts["messages_new"] / counts["conversations_new"], 2) if counts["conversations_new"] else 0
        )
        if changes:
            out["changed"] = changes
        return out
