"""Which messages become ``Experience(type='self_definition')`` rows (issue 7 "Input"), and why.

Read: messages whose role is in ``detector.roles`` (chat ``user`` messages, transcript turns of the vault owner,
notes) in conversations whose ``source_kind`` is in ``detector.source_kinds``. Never read: parts marked as hidden
reasoning, model memory or reasoning recaps, and anything not written by the user. The user's own "about me"
profile (``user_editable_context``) is read — its ``user_profile`` section only — once per distinct text, since
ChatGPT repeats it in every conversation.

Selected when the deterministic rules (segmenter → rule atomizer → validator) find at least one first-person
self-statement in the text with code fences, blockquotes and citation markers blanked; the reason records each
statement found (its text and span). Every message read is recorded in ``experience_scans`` (selected or not, and
why), so a rerun reads only new or changed messages; a changed message retires its old experiences.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from kenning.selfbelief.atomizer import RuleAtomizer
from kenning.selfbelief.segmenter import BeliefSegmenter
from kenning.selfbelief.text import mask
from kenning.selfbelief.validator import BeliefAtomValidator
from kenning.sources.jcs import canonicalize, sha256_hex
from kenning.store import selfbeliefs as sql

import re

_PREFILTER = re.compile(r"\b(?:I|i|I'm|i'm|Im|I’m|I've|I’ve|I'd|me|my|myself)\b")


def _ranges(js: str | None) -> list[tuple[int, int]]:
    if not js:
        return []
    return [(int(r["char_start"]), int(r["char_end"])) for r in orjson.loads(js)]


class ExperienceDetector:
    def __init__(self, config):
        self.config = config
        self.cfg = config.self_beliefs.detector
        self.segmenter = BeliefSegmenter.from_config(config.self_beliefs.segmenter)
        self.atomizer = RuleAtomizer.from_config(config.self_beliefs)
        self.validator = BeliefAtomValidator(config.self_beliefs.validator)
        self.retired_nodes: set[str] = set()

    def statements(self, text: str) -> list[dict[str, Any]]:
        """The first-person self-statements the rules find (the reason an experience is selected)."""
        if not _PREFILTER.search(text):
            return []
        cands = self.segmenter.segment(text)
        found = []
        for a in self.validator.validate(self.atomizer.atomize(cands).atoms).valid:
            s, e = a.spans[0]
            found.append({"cue": "first_person_self_statement", "atom": a.atom_text, "text": text[s:e],
                          "start": s, "end": e})
        return found

    def windows(self, m: dict, metas: list[str]) -> tuple[list[tuple[int, int, str | None]], str | None]:
        """(start, end, context_kind) windows of ``m.text_raw`` to read, or ([], why not)."""
        text = m["text_raw"] or ""
        if not text.strip():
            return [], "empty"
        kinds, sections = set(), []
        for js in metas:
            md = orjson.loads(js)
            if isinstance(md, dict) and md.get("context_kind"):
                kinds.add(md["context_kind"])
                if md["context_kind"] == self.cfg.profile_context_kind:
                    sections += [s for s in md.get("sections") or [] if isinstance(s, dict)]
        if kinds & set(self.cfg.skip_context_kinds):
            return [], "skipped_context:" + ",".join(sorted(kinds & set(self.cfg.skip_context_kinds)))
        if self.cfg.profile_context_kind in kinds:
            win = [(int(s["char_start"]), int(s["char_end"]), self.cfg.profile_context_kind) for s in sections
                   if s.get("kind") in self.cfg.profile_sections]
            return win, None if win else "no_profile_section"
        return [(0, min(len(text), self.cfg.max_chars), None)], None

    def run(self, ctx) -> Counter:
        """Scan new and changed messages; insert experiences. Returns counts."""
        from kenning.pipeline.incognito import incognito_skip

        conn, cfg = ctx.conn, self.cfg
        counts: Counter = Counter()
        msgs = sql.unscanned_messages(conn, cfg.source_kinds, cfg.roles, cfg.version)
        skip = incognito_skip(ctx)
        if skip:  # §13.4 (I70): never scanned, so no scan row: a cleared mode scans them afresh
            counts["messages_incognito"] = sum(1 for m in msgs if m["conversation_id"] in skip)
            msgs = [m for m in msgs if m["conversation_id"] not in skip]
        if not msgs:
            return counts
        metas = sql.parts_metadata(conn, [m["message_id"] for m in msgs])
        now = ctx.clock.now()
        scans = []
        for m in msgs:
            counts["messages_scanned"] += 1
            if m["scanned_sha256"] is not None and m["scanned_sha256"] != m["raw_sha256"]:
                for old in sql.live_experiences_of_message(conn, m["message_id"]):
                    self.retired_nodes.update(sql.retire_experience(conn, old["experience_id"], now))
                    counts["experiences_retired"] += 1
            windows, why_not = self.windows(m, metas.get(m["message_id"], []))
            selected = False
            reasons = []
            text = m["text_raw"] or ""
            if len(text) > cfg.max_chars and windows and windows[0][2] is None:
                ctx.warn("SELF_TEXT_TRUNCATED", f"message {m['message_id']} is {len(text)} characters; the "
                         f"self-belief detector reads the first {cfg.max_chars}", message_id=m["message_id"])
            hidden = _ranges(m["code_fence_ranges_json"]) + _ranges(m["blockquote_ranges_json"]) + \
                _ranges(m["citation_ranges_json"])
            for start, end, kind in windows:
                window = mask(text[start:end], [(a - start, b - start) for a, b in hidden if b > start and a < end])
                found = self.statements(window)
                if not found:
                    reasons.append("no_self_statement")
                    continue
                sha = sha256_hex(text[start:end])
                eid = ctx.ids.make("experience", m["message_id"], start, end)
                if kind is not None and sql.profile_text_known(conn, kind, sha) and sql.get_experience(conn, eid) is None:
                    reasons.append("duplicate_profile")
                    counts["profiles_duplicate"] += 1
                    continue
                for f in found:
                    f["start"] += start
                    f["end"] += start
                new = sql.upsert_experience(conn, {
                    "experience_id": eid, "type": "self_definition", "message_id": m["message_id"],
                    "conversation_id": m["conversation_id"], "source_kind": m["source_kind"], "context_kind": kind,
                    "text_start": start, "text_end": end, "text_sha256": sha, "occurred_at": m["created_at_utc"],
                    "metadata_json": None, "selected_reason_json": canonicalize(found),
                    "detector_version": cfg.version, "current_version": None, "retired_at": None,
                    "created_at": now, "run_id": ctx.run_id})
                counts["experiences_new" if new else "experiences_restored"] += 1
                selected = True
                reasons.append("self_statement")
            scans.append({"message_id": m["message_id"], "raw_sha256": m["raw_sha256"], "detector_version": cfg.version,
                          "selected": int(selected), "reason": why_not or ",".join(sorted(set(reasons))) or "none",
                          "scanned_at": now, "run_id": ctx.run_id})
        sql.upsert_scans(conn, scans)
        counts["messages_selected"] = sum(s["selected"] for s in scans)
        return counts
