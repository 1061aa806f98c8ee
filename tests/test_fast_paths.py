"""Faster equivalents the stages use must give exactly what the originals give."""

from __future__ import annotations

import datetime as dt
import random

from kenning.detect.times import parse_stored_utc
from kenning.sources.timestamps import format_utc, parse_utc


def test_parse_stored_utc_equals_parse_utc():
    rng = random.Random(1)
    start = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)
    span_ms = int((dt.datetime(9999, 12, 31, tzinfo=dt.timezone.utc) - start) / dt.timedelta(milliseconds=1))
    samples = [format_utc(start + dt.timedelta(milliseconds=rng.randrange(span_ms))) for _ in range(20000)]
    samples += ["2024-02-29T23:59:59.999Z", "1970-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z"]
    for s in samples:
        a, b = parse_utc(s), parse_stored_utc(s)
        assert a == b and a.utcoffset() == b.utcoffset() and a.microsecond == b.microsecond, s


def test_jcs_number_keeps_the_jcs_text():
    from kenning.detect.entities import _jcs_number
    from kenning.sources.jcs import canonicalize

    for x in (0.0, -0.0, 1.0, 0.5, 0.123456789, 1e-7, 3.0, 0.999999999):
        assert canonicalize({"v": _jcs_number(x)}) == canonicalize({"v": x}), x


def test_repeated_texts_give_what_a_fresh_detector_gives():
    """MessageDetector caches each short text's scan; a repeat must come out as if scanned afresh."""
    from collections import Counter

    from kenning.config import load_config
    from kenning.detect.mentions import MessageDetector, MessageInput
    from kenning.detect.ner import RulesNerBackend
    from kenning.sources.ids import IdFactory

    texts = ["Yesterday my sister Anna mailed anna@example.com about Project Phoenix, 3 days ago.",
             "```\nhttps://inside.example.com\n```\nLast week Dr. Smith moved to Lisbon; call +1 (415) 555-2671."]
    fences = [None, '[{"char_end":31,"char_start":0}]']
    msgs = [MessageInput(f"m{i}", "c", role, anchor, quality, texts[i % 2], fences[i % 2], None, None)
            for i, (role, anchor, quality) in enumerate([
                ("user", "2024-06-12T10:00:00.000Z", "original"), ("assistant", "2024-06-12T10:00:00.000Z", "original"),
                ("user", "2023-01-02T00:00:00.000Z", "original"), ("assistant", None, "missing"),
                ("user", "2024-06-13T10:00:00.000Z", "imputed_prior")])]
    cfg, ids = load_config(), IdFactory()

    def outputs(det: MessageDetector, m: MessageInput) -> tuple:
        out = det.run(m, ids, Counter())
        return ([c.row() for c in out.candidates], [c.mention_row(ids) for c in out.winners],
                [(t.start, t.surface, t.pattern_id, t.confidence, t.resolution, t.overlapped) for t in out.times],
                out.ner_io, out.warnings)

    shared = MessageDetector(cfg, RulesNerBackend())
    for m in msgs:
        assert outputs(shared, m) == outputs(MessageDetector(cfg, RulesNerBackend()), m)
    assert len(shared._scans) == 2
