"""Server-drawn SVG for the pages: a valid-time timeline (one lane per predicate, one bar per state) and the
month-by-month profile chart. Drawn on the server so the page works without the script; the script only adds
hover details and click-to-focus. All text goes through Markup escaping."""

from __future__ import annotations

import datetime as dt
from typing import Any

from markupsafe import Markup

from kenning.sources.timestamps import parse_utc

COLORS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#EECA3B", "#9D755D"]
STATUS_OPACITY = {"active": 1.0, "superseded": 0.55, "negated": 0.35, "conflicted": 0.8, "retracted": 0.3}


def _t(ts: str | None) -> float | None:
    d = parse_utc(ts) if ts else None
    return d.timestamp() if d else None


def valid_time_svg(states: list[dict[str, Any]], *, now: str, width: int = 880) -> Markup:
    """One lane per predicate; a bar per state from valid_from to valid_to (open states run to ``now``)."""
    bars = [s for s in states if _t(s.get("valid_from_utc")) is not None]
    if not bars:
        return Markup("")
    end_now = _t(now) or max(_t(s["valid_from_utc"]) for s in bars)
    lo = min(_t(s["valid_from_utc"]) for s in bars)
    hi = max(max(_t(s.get("valid_to_utc")) or end_now, _t(s["valid_from_utc"])) for s in bars)
    hi = max(hi, lo + 86400 * 30)
    lanes: list[str] = []
    for s in bars:
        if s["predicate"] not in lanes:
            lanes.append(s["predicate"])
    left, lane_h, top = 150, 26, 22
    span = width - left - 10
    height = top + lane_h * len(lanes) + 8

    def x(t: float) -> float:
        return left + span * (t - lo) / (hi - lo)

    parts = [Markup('<svg class="vt" viewBox="0 0 %d %d" width="100%%" role="img" aria-label="valid-time timeline">')
             % (width, height)]
    for year in range(dt.datetime.fromtimestamp(lo, dt.timezone.utc).year + 1,
                      dt.datetime.fromtimestamp(hi, dt.timezone.utc).year + 1):
        tx = x(dt.datetime(year, 1, 1, tzinfo=dt.timezone.utc).timestamp())
        parts.append(Markup('<line x1="%.1f" x2="%.1f" y1="14" y2="%d" class="grid"/>'
                            '<text x="%.1f" y="11" class="axis">%d</text>') % (tx, tx, height, tx + 2, year))
    for i, lane in enumerate(lanes):
        y = top + i * lane_h
        parts.append(Markup('<text x="4" y="%d" class="lane">%s</text>') % (y + 16, lane.replace("_", " ")))
        for s in (b for b in bars if b["predicate"] == lane):
            x0 = x(_t(s["valid_from_utc"]))
            x1 = x(_t(s.get("valid_to_utc")) or end_now)
            w = max(3.0, x1 - x0)
            color = COLORS[i % len(COLORS)]
            tip = (f"{s.get('statement') or s['object']} — {s['status']}, {(s['valid_from_utc'] or '')[:10]} → "
                   f"{(s.get('valid_to_utc') or 'now')[:10]}")
            parts.append(Markup('<g class="bar" tabindex="0" data-tip="%s"><rect x="%.1f" y="%d" width="%.1f" '
                                'height="%d" rx="3" fill="%s" opacity="%.2f"/><text x="%.1f" y="%d" class="bar-label">'
                                '%s</text><title>%s</title></g>')
                         % (tip, x0, y + 3, w, lane_h - 6, color, STATUS_OPACITY.get(s["status"], 0.7), x0 + 4,
                            y + 17, str(s["object"])[:28], tip))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def months_svg(windows: list[dict[str, Any]], *, width: int = 880) -> Markup:
    """Claims per month as bars; each bar a link-like target carrying the month's index (the script shows its
    details below the chart; without the script the table under the chart has them)."""
    if not windows:
        return Markup("")
    n = len(windows)
    peak = max(w.get("assertion_count") or 0 for w in windows) or 1
    left, height, base = 30, 200, 140
    bw = max(4.0, (width - left - 10) / n)
    parts = [Markup('<svg class="months" viewBox="0 0 %d %d" width="100%%" role="img" aria-label="claims per month">')
             % (width, height)]
    for i, w in enumerate(windows):
        c = w.get("assertion_count") or 0
        h = (base - 10) * c / peak
        x0 = left + i * bw
        top = ", ".join(m["label"] for m in w.get("top_members", [])[:3])
        tip = f"{w['label']}: {c} claims" + (f" — {top}" if top else "")
        parts.append(Markup('<g class="month" tabindex="0" data-month="%d" data-tip="%s"><rect x="%.1f" y="%.1f" '
                            'width="%.1f" height="%.1f" rx="2"/><title>%s</title></g>')
                     % (i, tip, x0 + 1, base - h, bw - 2, max(h, 1), tip))
        if n <= 24 or i % max(1, n // 12) == 0:
            parts.append(Markup('<text x="%.1f" y="%d" class="axis" transform="rotate(45 %.1f %d)">%s</text>')
                         % (x0 + 2, base + 12, x0 + 2, base + 12, w["label"]))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)
