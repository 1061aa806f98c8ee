"""The timeline (``kenning timeline``): the temporal profile of one person, as data, a PNG or an HTML page.

The picture has two parts that share one story. Above, a real time axis with one lane per kind of life state
(where you live, where you work, ...): a bar per state from when it started to when it ended, labelled with its
value; a conflict is hatched, an ended state stops at a bar. Below, the months that mattered, evenly spaced, each
a column of chips (the month's top people, places, interests, plans — coloured by category, sized by salience)
with its changes ("Berlin → Paris") underneath; a thin line ties each column to its month on the time axis.
"""

from __future__ import annotations

import base64
import datetime as dt
import html as htmlmod
import io
from pathlib import Path
from typing import Any

import orjson

from kenning.sources.timestamps import parse_utc

CATEGORY_COLORS = {
    "place": "#4C78A8", "people": "#F58518", "work": "#54A24B", "interest": "#B279A2", "trait": "#2A9D8F",
    "project": "#9C6ADE", "plan": "#E45756", "desire": "#E9B949", "problem": "#9D755D", "task": "#6B6B6B",
    "unclassified": "#BDBDBD",
}
STATE_COLORS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#EECA3B", "#9D755D",
                "#FF9DA6", "#79706E"]
MAX_COLUMNS = 10
CHIPS_PER_COLUMN = 5


def load_timeline(conn, entity: str | None, config: Any = None) -> dict[str, Any]:
    """{name, entity_id, windows: [...], states: [...]} for SELF (entity None) or a named entity. Windows come from
    the stored profile when stage 6 made one for this entity, else are computed now (read-only: tiers 1–2 with the
    vault's ``config``, never the model)."""
    from kenning.detect.lookup import find_entities
    from kenning.detect.entities import self_entity_id
    from kenning.sources.ids import IdFactory
    from kenning.store.connection import rows

    if entity is None:
        eid = self_entity_id(IdFactory())
        name = "You"
    else:
        found = find_entities(conn, entity)
        if not found:
            raise LookupError(f"no entity called {entity!r} (try `kenning entities`)")
        eid, name = found[0]["entity_id"], found[0]["canonical_name"]
    windows = []
    for n in rows(conn, "SELECT metadata_json, label FROM graph_nodes WHERE node_type='TemporalWindow'"):
        meta = orjson.loads(n["metadata_json"])
        if meta["entity_id"] == eid:
            windows.append({**meta, "label": n["label"]})
    if not windows:
        windows = _compute_windows(conn, eid, config)
    windows.sort(key=lambda w: w["bounds"][0])
    states = rows(conn, """
        SELECT a.assertion_id, p.canonical_label_norm AS predicate, p.category, a.polarity,
               COALESCE(o.canonical_name, json_extract(a.object_value, '$')) AS object, t.status, t.valid_from_utc,
               t.valid_to_utc, t.valid_time_type, json_extract(t.raw_temporalize_json, '$.has_explicit_valid_time')
               AS explicit, a.surface_text
        FROM assertions a JOIN assertion_temporalized t USING(assertion_id)
        JOIN predicates p USING(predicate_id) LEFT JOIN entities o ON o.entity_id = a.object_entity_id
        WHERE a.subject_entity_id = ? AND a.polarity = 'positive' AND t.valid_from_utc IS NOT NULL
          AND t.status IN ('active', 'superseded', 'negated', 'conflicted')
          AND NOT (t.status = 'superseded' AND t.valid_to_utc IS NULL)
        ORDER BY t.valid_from_utc, a.assertion_id""", (eid,))
    states = [s for s in states if s["explicit"] or s["status"] in ("superseded", "negated")]
    for s in states:
        s["object"] = str(s["object"]) if s["object"] is not None else s["predicate"]
    return {"name": name, "entity_id": eid, "windows": windows, "states": states}


def _compute_windows(conn, eid: str, config: Any = None) -> list[dict]:
    from kenning.config import load_config
    from kenning.graph.build import GraphBuilder, build_core
    from kenning.graph.profile import build_profiles
    from kenning.sources.ids import IdFactory
    from kenning.store import graph as gsql

    cfg = config if config is not None else load_config()
    g = GraphBuilder(IdFactory(cfg.ids.id_namespace))
    data = gsql.load_inputs(conn)
    build_core(g, data, cfg.graph.model_copy(update={"include_message_nodes": False, "include_lexicon_nodes": False}))
    build_profiles(g, data, cfg.graph.profile.model_copy(update={"focal_entities": [eid]}), config=cfg)
    out = []
    for n in g.nodes.values():
        if n[1] == "TemporalWindow":
            out.append({**orjson.loads(n[4]), "label": n[3]})
    return out


# -- drawing ----------------------------------------------------------------------------------------------------

def _month_name(iso: str) -> str:
    d = parse_utc(iso)
    return d.strftime("%b %Y")


def _pick_columns(windows: list[dict]) -> list[dict]:
    """At most MAX_COLUMNS months: the busiest (and every month with a change), shown in time order."""
    if len(windows) <= MAX_COLUMNS:
        return windows
    must = [w for w in windows if w.get("changes")]
    rest = sorted((w for w in windows if not w.get("changes")), key=lambda w: (-w["assertion_count"], w["bounds"][0]))
    chosen = (must + rest)[:MAX_COLUMNS]
    return sorted(chosen, key=lambda w: w["bounds"][0])


def render_png(tl: dict[str, Any], path: Path) -> Path:
    import matplotlib

    from kenning.privatefs import make_private, private_dir

    matplotlib.use("Agg")
    fig = _figure(tl)
    path = Path(path)
    private_dir(path.parent)
    fig.savefig(path, dpi=110, facecolor=fig.get_facecolor())
    make_private(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def render_html(tl: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = _figure(tl)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, facecolor=fig.get_facecolor())
    plt.close(fig)
    img = base64.b64encode(buf.getvalue()).decode()
    esc = htmlmod.escape
    rows = []
    for w in tl["windows"]:
        top = "".join(f'<span class="chip" style="background:{CATEGORY_COLORS.get(m["category_key"], "#ccc")}" '
                      f'title="{esc(_chip_title(m), quote=True)}">{esc(str(m["label"]))}</span>'
                      for m in w["top_members"][:8])
        ch = "<br>".join(esc(_change_label(c)) for c in w.get("changes") or [])
        rows.append(f"<tr><td>{esc(_month_name(w['bounds'][0]))}</td><td>{w['assertion_count']}</td>"
                    f"<td>{top}</td><td>{ch}</td></tr>")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{esc(tl['name'])} — timeline</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;color:#222;background:#fafaf7}}img{{max-width:100%}}
table{{border-collapse:collapse;margin-top:1.5em}}td,th{{padding:.35em .7em;border-bottom:1px solid #e4e4e0;
vertical-align:top;text-align:left}}.chip{{display:inline-block;color:#fff;border-radius:.8em;padding:.1em .6em;
margin:.1em;font-size:.9em;max-width:22em;white-space:normal;vertical-align:top}}</style></head><body>
<h1>{esc(tl['name'])}: what mattered, month by month</h1>
<img alt="timeline" src="data:image/png;base64,{img}">
<table><tr><th>month</th><th>claims</th><th>what mattered</th><th>changes</th></tr>{''.join(rows)}</table>
</body></html>
"""
    from kenning.privatefs import write_private_text

    return write_private_text(Path(path), page)


def _chip_title(m: dict) -> str:
    """The HTML chip's tooltip: the whole label, its category, how it was classified and how often it came up."""
    tier = {0: "no rule matched", 1: "keyword rule", 2: "embedding similarity", 3: "model consensus"}.get(
        m.get("tier"), "")
    n = m.get("mentions")
    return (f"{m['label']} — {m['category_key']}" + (f" ({tier})" if tier else "")
            + (f", {n} mention{'s' if n != 1 else ''}" if n else "") + f", salience {m['salience']:.2f}")


def _change_label(c: dict) -> str:
    pred = c["predicate"].replace("_", " ")
    if c["kind"] == "superseded":
        return f"{pred}: {c['from']} → {c['to']}"
    return f"{pred}: {c['from']} ended"


def _chip_lines(label: str, fs: float, width_px: float, renderer, fig) -> tuple[list[str], float]:
    """A chip's label on one line, else wrapped on two at word boundaries, shrinking the font down to 7pt before
    anything is cut; only a label that still does not fit loses its end ("…")."""
    import textwrap

    from matplotlib.text import Text

    def wpx(text: str, size: float) -> float:
        t = Text(0, 0, text, fontsize=size, fontweight="bold", figure=fig)
        return t.get_window_extent(renderer).width

    size = fs
    while True:
        if wpx(label, size) <= width_px:
            return [label], size
        for n_chars in range(len(label) - 1, 3, -1):
            lines = textwrap.wrap(label, n_chars)
            if len(lines) > 2:
                break
            if all(wpx(ln, size) <= width_px for ln in lines):
                return lines, size
        if size <= 7:
            break
        size = max(7.0, size - 0.75)
    words, lines = label.split(), ["", ""]
    for k in range(2):                      # fill two lines word by word; the second ends with "…"
        while words and wpx((lines[k] + " " + words[0]).strip() + ("…" if k == 1 else ""), size) <= width_px:
            lines[k] = (lines[k] + " " + words.pop(0)).strip()
    if not lines[0]:                        # one very long word
        lines[0] = label
        while len(lines[0]) > 1 and wpx(lines[0] + "…", size) > width_px:
            lines[0] = lines[0][:-1]
        return [lines[0] + "…"], size
    return [lines[0], lines[1] + "…"] if lines[1] else [lines[0] + "…"], size


def _figure(tl: dict[str, Any]):
    import matplotlib.pyplot as plt
    from matplotlib import dates as mdates
    from matplotlib.patches import ConnectionPatch, FancyBboxPatch, Patch

    windows = _pick_columns(tl["windows"])
    states = tl["states"]
    lanes = []
    for s in states:
        if s["predicate"] not in lanes:
            lanes.append(s["predicate"])
    bg = "#FAFAF7"
    fig = plt.figure(figsize=(14, 8.2), facecolor=bg)
    gs = fig.add_gridspec(2, 1, height_ratios=[max(1.3, 0.42 * len(lanes) + 0.6), 2.3], hspace=0.3,
                          left=0.11, right=0.985, top=0.865, bottom=0.075)
    ax_t = fig.add_subplot(gs[0])
    ax_b = fig.add_subplot(gs[1])
    for ax in (ax_t, ax_b):
        ax.set_facecolor(bg)
        for sp in ("top", "right", "left"):
            ax.spines[sp].set_visible(False)
    n_claims = sum(w["assertion_count"] for w in tl["windows"])
    fig.text(0.11, 0.955, f"{tl['name']}: what mattered, month by month", ha="left", va="center", fontsize=19,
             fontweight="bold", color="#222")
    span = ""
    if tl["windows"]:
        span = f"{_month_name(tl['windows'][0]['bounds'][0])} – {_month_name(tl['windows'][-1]['bounds'][0])}"
    fig.text(0.11, 0.918, f"{span}  ·  {n_claims} dated claims in {len(tl['windows'])} months  ·  "
             f"{len(states)} life states", fontsize=10.5, color="#666", ha="left")

    # -- the life-state lanes on a real time axis --
    dates = [parse_utc(s["valid_from_utc"]) for s in states] + [parse_utc(w["bounds"][0]) for w in windows]
    ends = [parse_utc(s["valid_to_utc"]) for s in states if s["valid_to_utc"]] + \
        [parse_utc(w["bounds"][1]) for w in windows]
    if dates:
        lo = min(dates)
        hi = max(ends + dates)
    else:
        lo = hi = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    pad = max(dt.timedelta(days=45), (hi - lo) * 0.04)
    lo, hi = lo - pad, hi + pad
    colors: dict[str, str] = {}
    fig_w_in = fig.get_figwidth() * (0.985 - 0.11)
    days_per_inch = max((hi - lo).days, 1) / fig_w_in

    renderer = fig.canvas.get_renderer()

    def width_days(text: str, fs: float) -> float:
        """The drawn width of a bold label, in days on the time axis (measured, not guessed)."""
        t = ax_t.text(0, 0, text, fontsize=fs, fontweight="bold")
        wpx = t.get_window_extent(renderer).width
        t.remove()
        return wpx / fig.dpi * days_per_inch

    # bars first (per lane), then labels: inside the bar, else right of it, else left of it, else in the gap
    # above the lane (then below) — never over another bar or label
    bars = []       # (lane y, x0, x1, label, colour, conflicted, open_end, negated)
    for i, lane in enumerate(lanes):
        y = len(lanes) - 1 - i
        ax_t.axhline(y, color="#E6E6E0", lw=1, zorder=0)
        merged: dict[tuple, list] = {}
        for s in (s for s in states if s["predicate"] == lane):
            merged.setdefault((s["valid_from_utc"], s["valid_to_utc"], s["status"] == "conflicted"), []).append(s)
        for (vf, vt, conflicted), group in merged.items():
            s = group[0]
            names = sorted({g["object"] for g in group})
            c = "#D98880" if conflicted else colors.setdefault(s["object"], STATE_COLORS[len(colors) % len(STATE_COLORS)])
            start = parse_utc(vf)
            open_end = vt is None
            end = hi - pad * 0.3 if open_end else parse_utc(vt)
            if end <= start:
                end = start + dt.timedelta(days=20)
            x0, w = mdates.date2num(start), mdates.date2num(end) - mdates.date2num(start)
            w = max(w, days_per_inch * 0.06)
            box = FancyBboxPatch((x0, y - 0.3), w, 0.6, boxstyle="round,pad=0,rounding_size=6",
                                 mutation_aspect=0.02, facecolor=c, alpha=0.45 if conflicted else 0.9,
                                 edgecolor="#C0392B" if conflicted else "none", hatch="////" if conflicted else None,
                                 lw=1.0, zorder=2)
            ax_t.add_patch(box)
            label = " / ".join(names) + (" (disputed)" if conflicted else "")
            bars.append((y, x0, x0 + w, label, c, conflicted, open_end, s["status"] == "negated"))
            if open_end:
                ax_t.annotate("", xy=(mdates.date2num(hi), y), xytext=(mdates.date2num(end), y),
                              arrowprops=dict(arrowstyle="-|>", color=c, lw=1.5), zorder=1)
            elif s["status"] == "negated":
                ax_t.plot([x0 + w, x0 + w], [y - 0.36, y + 0.36], color="#333", lw=2.2, zorder=3,
                          solid_capstyle="butt")
    xmin, xmax = mdates.date2num(lo), mdates.date2num(hi)
    gap = days_per_inch * 0.06
    taken: dict[float, list[tuple[float, float]]] = {}   # row (a lane y, or y ± 0.5 between lanes) → used spans
    for y, a, b, *_ in bars:
        taken.setdefault(y, []).append((a, b))

    def free(row: float, a: float, b: float) -> bool:
        return xmin <= a and b <= xmax and all(b + gap <= u or v + gap <= a for u, v in taken.get(row, []))

    for y, x0, x1, label, c, conflicted, open_end, negated in sorted(bars, key=lambda b: (-b[0], b[1])):
        fs = 10
        tw = width_days(label, fs)
        color = "#922B21" if conflicted else "#333"
        if not conflicted and tw < (x1 - x0) * 0.92:
            ax_t.text((x0 + x1) / 2, y, label, va="center", ha="center", fontsize=fs, zorder=4, color="white",
                      fontweight="bold")
            continue
        placed = False
        for a, b in ((x1 + gap * 1.5, x1 + gap * 1.5 + tw), (x0 - gap * 1.5 - tw, x0 - gap * 1.5)):
            others = [(u, v) for u, v in taken.get(y, []) if (u, v) != (x0, x1)]
            if xmin <= a and b <= xmax and all(b + gap <= u or v + gap <= a for u, v in others):
                ax_t.text(a, y, label, va="center", ha="left", fontsize=fs, zorder=4, color=color,
                          fontweight="bold")
                taken[y].append((a, b))
                placed = True
                break
        if placed:
            continue
        fs = 8.5                      # in the gap between two lanes, starting where the bar starts
        tw = width_days(label, fs)
        for row in (y + 0.5, y - 0.5):
            a = min(max(x0, xmin), xmax - tw)
            if free(row, a, a + tw):
                ax_t.text(a, row, label, va="center", ha="left", fontsize=fs, zorder=4, color=color,
                          fontweight="bold", clip_on=False)
                taken.setdefault(row, []).append((a, a + tw))
                placed = True
                break
        if not placed:                # crowded everywhere: right of the bar, as before
            ax_t.text(x1 + gap, y, label, va="center", ha="left", fontsize=fs, zorder=4, color=color,
                      fontweight="bold", bbox=dict(boxstyle="round,pad=0.15", facecolor=bg, edgecolor="none"))
    ax_t.set_yticks(range(len(lanes)))
    ax_t.set_yticklabels([ln.replace("_", " ") for ln in reversed(lanes)], fontsize=11, color="#333")
    ax_t.tick_params(axis="y", length=0)
    ax_t.set_ylim(-0.7, max(len(lanes), 1) - 0.3)
    ax_t.set_xlim(mdates.date2num(lo), mdates.date2num(hi))
    ax_t.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=4, maxticks=10))
    ax_t.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax_t.xaxis.get_major_locator()))
    ax_t.tick_params(axis="x", colors="#555", labelsize=9.5)
    box_t, box_b = ax_t.get_position(), ax_b.get_position()
    for text, box in (("life states", box_t), ("months that mattered", box_b)):
        fig.text(0.012, (box.y0 + box.y1) / 2, text, rotation=90, ha="left", va="center", fontsize=12,
                 color="#999", fontweight="bold")
    if not lanes:
        ax_t.text(0.5, 0.5, "no dated life states yet", transform=ax_t.transAxes, ha="center", color="#999")
        ax_t.set_yticks([])

    # -- the months that mattered, evenly spaced --
    n = max(len(windows), 1)
    ax_b.set_xlim(-0.5, n - 0.5)
    ax_b.set_ylim(0, 1)
    ax_b.set_xticks([])
    ax_b.set_yticks([])
    ax_b.spines["bottom"].set_visible(False)
    max_sal = max([m["salience"] for w in windows for m in w["top_members"]] or [1])
    col_w = min(0.92, 9.0 / n)
    for i, w in enumerate(windows):
        ax_b.text(i, 0.985, _month_name(w["bounds"][0]), ha="center", va="top", fontsize=11.5, fontweight="bold",
                  color="#222")
        ax_b.text(i, 0.905, f"{w['assertion_count']} claim{'s' if w['assertion_count'] != 1 else ''}",
                  ha="center", va="top", fontsize=9, color="#888")
        y = 0.84
        col_px = (ax_b.transData.transform((col_w - 0.1, 0))[0] - ax_b.transData.transform((0, 0))[0])
        ax_h_in = ax_b.get_position().height * fig.get_figheight()
        n_changes = min(2, len(w.get("changes") or []))
        for m in w["top_members"][:CHIPS_PER_COLUMN]:
            rel = m["salience"] / max_sal
            fs = 7.5 + 2.5 * rel
            lines, fs = _chip_lines(str(m["label"]), fs, col_px, renderer, fig)
            h = 0.085 + 0.025 * rel + (len(lines) - 1) * fs * 1.15 / 72 / ax_h_in
            if y - h < 0.04 + 0.1 * n_changes:        # keep room for the month's changes
                break
            ax_b.add_patch(FancyBboxPatch((i - col_w / 2 + 0.03, y - h), col_w - 0.06, h - 0.012,
                                          boxstyle="round,pad=0,rounding_size=0.02",
                                          facecolor=CATEGORY_COLORS.get(m["category_key"], "#BDBDBD"),
                                          edgecolor="none", alpha=0.55 + 0.45 * rel, zorder=2))
            ax_b.text(i, y - h / 2 - 0.006, "\n".join(lines), ha="center", va="center", fontsize=fs,
                      color="white", fontweight="bold", zorder=3, linespacing=1.1)
            y -= h + 0.012
        for c in (w.get("changes") or [])[:2]:
            txt = (f"{c['from']} → {c['to']}" if c["kind"] == "superseded" else f"{c['from']} ended")
            ax_b.text(i, max(0.04, y - 0.05), "⟳ " + txt if c["kind"] == "superseded" else "■ " + txt,
                      ha="center", va="center", fontsize=9.5, color="#7A1F1F",
                      bbox=dict(boxstyle="round,pad=0.35", facecolor="#FBE9E7", edgecolor="#E6B0AA"), zorder=4)
            y -= 0.1
        mid = parse_utc(w["bounds"][0]) + (parse_utc(w["bounds"][1]) - parse_utc(w["bounds"][0])) / 2
        ax_t.plot([mdates.date2num(mid)], [-0.62], marker="^", color="#999", ms=6, zorder=3, clip_on=False)
        con = ConnectionPatch(xyA=(mdates.date2num(mid), -0.62), coordsA=ax_t.transData, xyB=(i, 1.0),
                              coordsB=ax_b.transData, color="#CFCFC8", lw=0.9, zorder=0)
        fig.add_artist(con)
    if not windows:
        ax_b.text(0.5, 0.5, "no months yet", transform=ax_b.transAxes, ha="center", color="#999")
    used = sorted({m["category_key"] for w in windows for m in w["top_members"][:CHIPS_PER_COLUMN]},
                  key=lambda k: list(CATEGORY_COLORS).index(k) if k in CATEGORY_COLORS else 99)
    handles = [Patch(facecolor=CATEGORY_COLORS.get(k, "#BDBDBD"), label=k) for k in used]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False, fontsize=10,
                   bbox_to_anchor=(0.55, 0.01))
    return fig
