"""Stage 1 for a Markdown/Obsidian notes folder (issue 18 part 7; seed 003 §20B.2). Each note file is read on its own
(one ``sources`` row per file, like an export), kept as a note version with its content hash, and assessed with the
session-close rules (``sources.notes.assess``). Only versions the rules send to extraction update the note's
conversation (one message, the note's text), so later stages mine exactly those; every version stays in
``note_versions`` losslessly. Re-importing an unchanged folder changes nothing."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage1 import _skip_forgotten
from kenning.pipeline.stage1_units import UnitFileImport
from kenning.sources.inputs import ExportFile, HashingReader
from kenning.sources.jcs import canonicalize, jcs_hash
from kenning.sources.notes import EXTRACT, assess, note_date, note_files, note_title
from kenning.sources.timestamps import format_utc, normalize_to_utc
from kenning.sources.units import Unit, UnitTurn
from kenning.store import corpus as sql
from kenning.store import raw as raw_sql


class NoteImport(UnitFileImport):
    def __init__(self, ctx: StageContext, export: ExportFile, counts: Counter, changes: list, rel: str):
        super().__init__(ctx, export, counts, changes, read=None, label="note")  # type: ignore[arg-type]
        self.rel = rel
        self.cfg_hash = jcs_hash({"units": self.cfg_hash, "notes": ctx.config.corpus.notes.model_dump(mode="json")})

    def record_label(self, index: int | None) -> str:
        return f"note {self.rel}"

    def run(self) -> None:
        ctx, cfg = self.ctx, self.ctx.config.corpus.notes
        with self.export.open() as f:
            reader = HashingReader(f)
            data = reader.read()
        sha = reader.sha256.hexdigest()
        self.counts["notes"] += 1
        known = raw_sql.get_source(ctx.conn, ctx.ids.make("source", sha))
        seen = known is not None and known["stats"].get("import_config_hash") == self.cfg_hash \
            and known["stats"].get("note") == self.rel
        if len(data) > cfg.max_note_bytes:
            if seen:   # rejected before, same bytes: said once (R4), the file is only marked as seen again
                return raw_sql.touch_source(ctx.conn, known["source_id"], ctx.run_id)
            self.reject(0, None, None, "skipped", "NOTE_TOO_LARGE", f"the note is {len(data)} bytes, over "
                        f"corpus.notes.max_note_bytes ({cfg.max_note_bytes})", data[:4096])
            return self.finish(sha, len(data))
        try:
            content = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            if seen:
                return raw_sql.touch_source(ctx.conn, known["source_id"], ctx.run_id)
            self.reject(0, None, None, "skipped", "NOT_UTF8", f"the note is not UTF-8 text ({e.reason} at byte "
                        f"{e.start}); save it as UTF-8 and import again", data[:4096])
            return self.finish(sha, len(data))
        note_id = ctx.ids.make("note", self.rel)
        if _skip_forgotten(ctx, note_id, self.counts):
            # a forgotten note stays forgotten, its versions too — a placeholder has nothing else (H6)
            return self.finish(sha, len(data))
        pointer = sql.note_pointer(ctx.conn, note_id)
        prior = sql.note_version(ctx.conn, pointer["last_knowledge_assessed_version_id"]) if pointer else None
        if prior is not None and prior["content_sha256"] == sha:
            self.counts["notes_unchanged"] += 1
            cid = ctx.ids.make("note", self.rel)
            mined = sql.conversation(ctx.conn, cid) is not None
            self.counts["conversations_unchanged"] += int(mined)
            if seen:
                return raw_sql.touch_source(ctx.conn, known["source_id"], ctx.run_id)
            if mined:
                self.links.append((cid, 0))
            return self.finish(sha, len(data))
        now = ctx.clock.now()
        decision, added = assess(content=content, prior=prior["content"] if prior else None,
                                 baseline_in_flight=bool(pointer and pointer["extraction_baseline_version_id"]),
                                 last_extracted_at=pointer["last_extracted_at"] if pointer else None, now=now, cfg=cfg)
        version_id = ctx.ids.make("note_version", note_id, sha, prior["version_id"] if prior else "")
        sql.insert_note_version(ctx.conn, {
            "version_id": version_id, "note_id": note_id, "path": self.rel, "content_sha256": sha,
            "char_count": len(content), "content": content, "prior_version_id": prior["version_id"] if prior else None,
            "added_bytes": added, "decision": decision, "observed_at": now, "run_id": ctx.run_id})
        self.counts[f"note_{decision}"] += 1
        self.counts["note_versions_new"] += 1
        if decision == "defer":
            return self.finish(sha, len(data))
        last_extracted = pointer["last_extracted_at"] if pointer else None
        if decision in EXTRACT:
            self.unit(self.note_unit(content))
            last_extracted = now
        sql.upsert_note_pointer(ctx.conn, {
            "note_id": note_id, "last_knowledge_assessed_version_id": version_id, "pending_extraction_id": None,
            # Extraction runs in the later stages of this same ingest, so no baseline stays in flight (I61).
            "extraction_baseline_version_id": None, "last_extracted_at": last_extracted, "updated_at": now})
        self.finish(sha, len(data))

    def finish(self, sha: str, size: int) -> None:
        super().finish(sha, size)
        src = raw_sql.get_source(self.ctx.conn, self.ctx.ids.make("source", sha))
        stats = {**src["stats"], "note": self.rel}
        raw_sql.upsert_source(self.ctx.conn, {**src, "run_id": self.ctx.run_id, "stats_json": canonicalize(stats)})

    def note_unit(self, content: str) -> Unit:
        when = normalize_to_utc(note_date(content)) if note_date(content) else None
        if when is None:
            mtime = Path(self.export.path).stat().st_mtime
            when = format_utc(dt.datetime.fromtimestamp(int(mtime), dt.timezone.utc))
        raw = {"path": self.rel, "text": content}
        turn = UnitTurn("body", self.ctx.inputs.get("self_name"), "user", content, when, raw)
        return Unit(0, ("note", self.rel), self.rel, note_title(self.rel, content), "note", raw, [turn],
                    created_at=when, updated_at=when)


def import_notes(ctx: StageContext, export: ExportFile, counts: Counter, changes: list) -> None:
    cfg = ctx.config.corpus.notes
    root = Path(export.path).expanduser()
    files = note_files(root, cfg.extensions, cfg.ignore_dirs)
    total = sum(p.stat().st_size for p in files)
    done = 0
    counts["notes_folders"] += 1
    for p in files:
        rel = p.relative_to(root).as_posix()
        size = p.stat().st_size
        NoteImport(ctx, ExportFile(str(p), None, size, "note"), counts, changes, rel).run()
        done += size
        ctx.progress(advance_bytes=done, total_bytes=total, records=counts["notes"], file=str(root))


__all__ = ["NoteImport", "import_notes"]
