"""Stage 2A's work on one message: candidates from every detector, eligibility, winners, time mentions."""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from kenning.config import Config
from kenning.detect.candidates import Candidate, apply_eligibility, check_offsets, select_winners
from kenning.detect.detectors import ORDER, Detector, Hit, build_detectors, detector_versions
from kenning.detect.ner import NerBackend, NerResult, replayed_by_rerun, run_chunked, sha256_text
from kenning.detect.noise import NOISE_RULES_VERSION, NoiseRules
from kenning.detect.spans import Exclusions
from kenning.detect.textfold import first_digit
from kenning.detect.times import TimeCandidate, TimeDetector
from kenning.sources.jcs import canonicalize, jcs_hash



@dataclass
class MessageInput:
    message_id: str
    conversation_id: str
    role: str
    created_at_utc: str | None
    timestamp_quality: str
    text: str
    fences_json: str | None
    blockquotes_json: str | None
    citations_json: str | None


@dataclass
class MessageOutput:
    candidates: list[Candidate]
    winners: list[Candidate]
    times: list
    ner_io: tuple | None = None          # (input_sha256, chunks_json, output_json) of the first NER backend
    # [(backend, (input_sha256, chunks_json, output_json) or None)] of all; None: replayed by rerun, not logged (N10)
    ner_ios: list = field(default_factory=list)
    ner_retry: bool = False              # an LLM NER request failed: detect this message again next run (E28)
    warnings: list[tuple[str, str, dict]] = field(default_factory=list)


@dataclass(frozen=True)
class _TextScan:
    """What the detectors, the NER backend and the time patterns find in a text: a function of the text alone."""

    hits: list[tuple[Detector, Hit]]
    ner: list[tuple[NerBackend, NerResult, tuple]]  # per backend: (backend, result, (sha256, chunks, output))
    times: list[TimeCandidate] | None


# Exports repeat short messages word for word ("continue", a pasted prompt, a template answer): a bounded cache of
# recent scans, keyed by the text, skips the scanning for repeats (the NER backend is then called once per distinct
# text of a run). Long texts rarely repeat and would make the cache large, so they are not kept.
_SCAN_CACHE_TEXT_MAX = 2000
_SCAN_CACHE_SIZE = 4096


class MessageDetector:
    """Everything stage 2A runs on a message, configured once per run."""

    def __init__(self, config: Config, ner: NerBackend | None, extra_ner: tuple[NerBackend, ...] = ()):
        ed = config.pipeline.entity_detection
        dc = config.entities.detectors
        self.config = config
        self.detectors = build_detectors(optional_enabled=dc.optional_enabled,
                                         phone_default_region=dc.phone_default_region,
                                         domain_tld_allowlist_enabled=ed.domain_tld_allowlist_enabled)
        self.noise = NoiseRules.from_config(dc)
        self.include_blockquotes = ed.ignore_markdown_blockquotes
        self.ner = ner if ed.enable_ner else None
        # Every NER backend that runs: the configured one, then extra ones (LLM NER, E27), each its own detector.
        self.extra_ner = tuple(extra_ner) if ed.enable_ner else ()
        self.ners = ((self.ner,) if self.ner is not None else ()) + self.extra_ner
        self.ner_max, self.ner_stride = ed.ner_max_chars, ed.ner_stride
        self.label_map = dict(config.entities.ner.label_map)
        self.label_allow = set(ed.ner_label_allowlist)
        self.emit_spanless = ed.emit_spanless_ner
        # Per backend that names its labels: those that can pass the label map and allowlist (N11).
        self._keep = {id(b): frozenset(lab for lab in b.labels if self.label_map.get(lab, lab) in self.label_allow)
                      for b in self.ners if replayed_by_rerun(b) and getattr(b, "labels", None)}
        self.times = TimeDetector(config) if config.entities.time_mentions.enabled else None
        self.tz = config.time.anchor_timezone
        self._scans: OrderedDict[str, _TextScan] = OrderedDict()

    def versions(self) -> dict[str, Any]:
        v: dict[str, Any] = {"detectors": detector_versions(self.detectors), "noise_rules": NOISE_RULES_VERSION,
                             "detector_order": {k: ORDER[k] for k in sorted(ORDER)}}
        if self.ner:
            v["ner"] = {"name": self.ner.name, "version": self.ner.version, "config": self.ner.config()}
        if self.extra_ner:
            v["ner_extra"] = [{"name": b.name, "version": b.version, "config": b.config()} for b in self.extra_ner]
        if self.times:
            v["time_patterns"] = self.times.version
        return v

    def fingerprint(self) -> str:
        """What every message's 2A output depends on besides the message itself."""
        c = self.config
        # entities.ner.llm matters only when the LLM backend runs, and then its config() is in versions()
        return jcs_hash({"versions": self.versions(), "entity_detection": c.pipeline.entity_detection.model_dump(mode="json"),
                         "entities": {k: getattr(c.entities, k).model_dump(mode="json", exclude={"llm"} if k == "ner"
                                                                           else None)
                                      for k in ("detectors", "ner", "time_mentions")},
                         "time": c.time.model_dump(mode="json"), "ids": c.ids.model_dump(mode="json")})

    @staticmethod
    def input_hash(m: MessageInput, fingerprint: str) -> bytes:
        """16 bytes of the sha256 over the message's id and everything its detections depend on (N12): the id is in
        it because the state is keyed by the message's rowid, which must never make another message's state match."""
        # The parts, each followed by a NUL, hashed as one string: the same bytes as one update per part.
        return hashlib.sha256("\x00".join((
            fingerprint, m.message_id, m.conversation_id, m.role, m.created_at_utc or "", m.timestamp_quality,
            m.fences_json or "", m.blockquotes_json or "", m.citations_json or "", m.text, "")
        ).encode("utf-8", "surrogatepass")).digest()[:16]

    def exclusions(self, m: MessageInput) -> Exclusions:
        return Exclusions.build(m.fences_json, m.blockquotes_json, m.citations_json,
                                include_blockquotes=self.include_blockquotes)

    # ------------------------------------------------------------------------------------------------------
    def scan(self, text: str) -> _TextScan:
        found = self._scans.get(text)
        if found is not None:
            self._scans.move_to_end(text)
            return found
        has_digit = first_digit(text) >= 0  # most texts have none; several detectors need one
        hits = [(det, hit) for det in self.detectors if not (det.needs_digit and not has_digit) and det.prefilter(text)
                for hit in det.find(text)]
        ner = []
        if self.ners and text.strip():
            for backend in self.ners:
                rerun = replayed_by_rerun(backend)
                result = run_chunked(backend, text, self.ner_max, self.ner_stride, self._keep.get(id(backend)),
                                     log=not rerun)
                if rerun:
                    ner.append((backend, result, None))
                    continue
                # one chunk is the whole text, whose hash run_chunked has just computed
                whole = result.chunks[0]["input_sha256"] if len(result.chunks) == 1 else sha256_text(text)
                ner.append((backend, result, (whole, canonicalize([[c["offset"], c["length"]] for c in result.chunks]),
                                              canonicalize(result.chunks))))
        found = _TextScan(hits, ner, self.times.candidates(text) if self.times is not None else None)
        if len(text) <= _SCAN_CACHE_TEXT_MAX:
            self._scans[text] = found
            if len(self._scans) > _SCAN_CACHE_SIZE:
                self._scans.popitem(last=False)
        return found

    def run(self, m: MessageInput, ids, stats: Counter) -> MessageOutput:
        text = m.text
        scan = self.scan(text)
        cands: list[Candidate] = []
        for det, hit in scan.hits:
            raw = {"details": hit.details} if hit.details else {}
            cands.append(Candidate(m.message_id, det.name, det.version, det.order, det.hint, hit.start, hit.end,
                                   text[hit.start:hit.end], hit.confidence, raw))
        out = MessageOutput(cands, [], [])
        for backend, result, io in scan.ner:
            if out.ner_io is None and io is not None:
                out.ner_io = io
            out.ner_ios.append((backend, io))
            if result.failed:
                out.ner_retry = True
            self._ner(m, backend, result, cands, stats)
        # one candidate per (detector, span, hint, surface): a detector reporting a span twice keeps its best
        unique: dict[tuple, Candidate] = {}
        for c in cands:
            key = (c.detector, c.start, c.end, c.hint, c.shash)
            prev = unique.get(key)
            if prev is None or c.confidence > prev.confidence:
                unique[key] = c
        cands = list(unique.values())
        for c in cands:
            if c.start is None:
                out.warnings.append(("OFFSET_UNRELIABLE", f"{c.detector} gave no offsets for {c.surface!r}",
                                     {"message_id": m.message_id, "detector": c.detector, "reason": "spanless"}))
            elif not check_offsets(c, text):
                out.warnings.append(("OFFSET_UNRELIABLE", f"{c.detector} span does not match the text",
                                     {"message_id": m.message_id, "detector": c.detector, "reason": "mismatch"}))
            c.assign_id(ids)
        excl = self.exclusions(m)
        apply_eligibility(cands, text, excl, self.noise)
        out.winners = select_winners(cands)
        out.candidates = cands
        if cands:  # (no key before the first candidate, as the per-candidate count had it)
            stats["candidates"] += len(cands)
        for c in cands:
            if c.reason:
                stats[f"suppressed_{c.reason}"] += 1
        stats["mentions_emitted"] += len(out.winners)
        if self.times is not None:
            tstats: dict = {}
            out.times = self.times.detect(text, excl, m.created_at_utc, m.timestamp_quality, tstats, scan.times)
            for k, v in tstats.items():
                stats[k] += v
        return out

    def _ner(self, m: MessageInput, backend: NerBackend, result: NerResult, cands: list[Candidate],
             stats: Counter) -> None:
        detector = f"NER:{backend.name}"
        best: dict[tuple, Candidate] = {}
        if result.spans or result.dropped:  # (a key only once there is a span: the counts list the keys they hold)
            stats["ner_spans_raw"] += len(result.spans) + result.dropped
        label_map, label_allow = self.label_map, self.label_allow
        filtered = result.dropped  # spans the backend left out because their label cannot pass (N11)
        for sp in result.spans:
            hint = label_map.get(sp.label, sp.label)
            if hint not in label_allow:
                filtered += 1
                continue
            raw: dict[str, Any] = {"label": sp.label}
            if sp.extra:
                raw["ner"] = sp.extra
            surface = sp.text if sp.start is None else (
                sp.text if not (0 <= sp.start < sp.end <= len(m.text)) else m.text[sp.start:sp.end])
            if sp.start is not None and surface != sp.text:
                surface = sp.text  # keep what the model said; check_offsets records the mismatch
            if sp.start is None or sp.end is None:
                raw["spanless"] = True
                if self.emit_spanless:
                    raw["spanless_emitted"] = True  # §2A.6.1 emit_spanless_ner: a mention without offsets
            c = Candidate(m.message_id, detector, backend.version, ORDER["NER"], hint, sp.start, sp.end,
                          surface, max(0.0, min(1.0, float(sp.confidence))), raw)
            key = (c.start, c.end, c.hint, c.shash)  # §2A.5.4 dedupe within the message, highest confidence kept
            prev = best.get(key)
            if prev is None or c.confidence > prev.confidence:
                best[key] = c
        if filtered:  # counted once per message (the key appears only once a span was filtered, as before)
            stats["ner_spans_label_filtered"] += filtered
        cands.extend(best.values())
