"""``kenning facts``: what stage 4 read in the vault — who claimed what about whom, with the exact words.

Filters: ``--about`` (an entity by name, alias, key or id prefix; "me" is you), ``--predicate`` (labels or
categories, comma-separated), ``--role``. Stage 5 adds ``--valid-at`` / ``--believed-at`` through ``fact_filters``.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json, showing

SELF_WORDS = {"me", "i", "self", "myself", "you"}


def _object_text(f: dict) -> Any:
    if f["object_entity_id"]:
        return f["object_name"]
    if f["object_value_type"]:
        v = orjson.loads(f["object_value"])
        if isinstance(v, dict) and set(v) == {"kind", "value"}:
            return f"{v['kind']}: {v['value']}"
        return v
    return None


def fact_view(f: dict) -> dict[str, Any]:
    retracted = [r.split(":", 1) for r in (f["retracted_by"] or "").split(",") if r]
    q = None
    if f["temporal_qualifier_type"]:
        q = {"type": f["temporal_qualifier_type"], "surface": f["qualifier_surface"], "valid_from_utc":
             f["qualifier_from"], "valid_to_utc": f["qualifier_to"]}
    return {
        "assertion_id": f["assertion_id"], "subject": f["subject_name"], "subject_entity_id": f["subject_entity_id"],
        "predicate": f["predicate"], "predicate_category": f["predicate_category"], "object": _object_text(f),
        "object_entity_id": f["object_entity_id"], "object_type": f["object_type"] or f["object_value_type"],
        "modality": f["modality"], "polarity": f["polarity"], "aspect": f["aspect"],
        "asserted_role": f["asserted_role"],
        "speaker": f["author_name"], "quote": f["surface_text"], "char_start": f["char_start"],
        "char_end": f["char_end"], "message_date": f["created_at_utc"], "timestamp_quality": f["timestamp_quality"],
        "conversation_title": f["conversation_title"], "conversation_id": f["conversation_id"],
        "on_current_branch": bool(f["is_current_branch"]),
        "message_id": f["message_id"], "confidence": f["confidence_final"],
        "confidence_extraction": f["confidence_extraction"], "confidence_grounding": f["confidence_grounding"],
        "extraction_method": f["extraction_method"], "extraction_model": f["extraction_model"],
        "corroborated": bool(f["has_user_corroboration"]), "temporal_qualifier": q,
        "superseded_by": f["superseded_by_assertion_id"], "supersession_type": f["supersession_type"],
        "retracted_by": [{"retraction_type": t, "retraction_id": i} for t, i in retracted],
    }


def statement(v: dict) -> str:
    pred = v["predicate"].replace("_", " ")
    obj = v["object"]
    neg = "NOT " if v["polarity"] == "negative" else ""
    text = f"{v['subject']} {neg}{pred}" + (f" {obj}" if obj is not None else "")
    if v["temporal_qualifier"]:
        text += f" ({v['temporal_qualifier']['type']} {v['temporal_qualifier']['surface']})"
    if v["modality"] in ("question", "intention"):
        text += f" [{v['modality']}]"
    if v.get("aspect") in ("past", "transition"):
        text += " [past]" if v["aspect"] == "past" else " [change]"
    return text


def status_text(t: dict | None) -> str:
    if not t:
        return ""
    span = ""
    if t["valid_from_utc"]:
        span = f" {t['valid_from_utc'][:10]}→{(t['valid_to_utc'] or '')[:10]}"
    elif t["valid_until_hint_utc"]:
        span = f" until {t['valid_until_hint_utc'][:10]}"
    return t["status"] + span


def fact_filters(conn, about: str | None, predicate: str | None) -> tuple[list[str] | None, list[str] | None, list]:
    """(subject ids, predicate labels/categories, other matches) from the user's words."""
    from kenning.cli.entities import find_entities
    from kenning.detect.entities import self_entity_id
    from kenning.extract.registry import normalize_label
    from kenning.sources.ids import IdFactory

    subject_ids = None
    others: list = []
    if about:
        if about.strip().lower() in SELF_WORDS:
            subject_ids = [self_entity_id(IdFactory())]
        else:
            found = find_entities(conn, about)
            if not found:
                fail(f"no entity called {about!r} (try `kenning entities`)")
            subject_ids = [found[0]["entity_id"]]
            others = found[1:]
    preds = None
    if predicate:
        preds = [normalize_label(p)[1] for p in predicate.split(",") if p.strip()]
    return subject_ids, preds, others


def parse_when(value: str | None, flag: str) -> str | None:
    """A user's date or time ("2023-05-01", "2023-05-01T12:00Z") as a stored UTC timestamp; a bare date is its
    start of day (UTC)."""
    from kenning.sources.timestamps import normalize_to_utc

    if value is None:
        return None
    ts = normalize_to_utc(value.strip())
    if ts is None:
        fail(f"{flag} {value!r} is not a date; use YYYY-MM-DD or ISO-8601 like 2023-05-01T12:00:00Z")
    return ts


def _valid_at(t: dict, when: str) -> bool:
    """[valid_from, valid_to) holds ``when`` (NULL end = open, seed §0 interval semantics)."""
    return bool(t["valid_from_utc"]) and t["valid_from_utc"] <= when and (t["valid_to_utc"] is None
                                                                          or when < t["valid_to_utc"])


def bitemporal_filter(conn, views: list[dict], valid_at: str | None, believed_at: str | None) -> list[dict]:
    """Stage 5's view of each fact (status, valid time, transaction time); with ``believed_at`` the version Kenning
    held then (facts it did not know yet, or no longer believed, drop out); with ``valid_at`` only facts whose valid
    interval holds that time — never a retracted claim, nor one a correction replaced."""
    from kenning.store import temporal as tsql

    if not tsql.has_stage5(conn):
        if valid_at or believed_at:
            fail("--valid-at/--believed-at need stage 5 (run `kenning ingest` again to compute it)")
        return views
    if not views:
        return views
    ids = [v["assertion_id"] for v in views]
    cur = tsql.temporal_of(conn, ids)
    held = tsql.versions_at(conn, ids, believed_at) if believed_at else None
    out = []
    for v in views:
        t = cur.get(v["assertion_id"])
        if t is None:
            continue
        src = t
        if held is not None:
            src = held.get(v["assertion_id"])
            if src is None or src["status"] == "retracted":
                continue
        v["temporal"] = {"status": src["status"], "valid_time_type": src["valid_time_type"],
                         "valid_from_utc": src["valid_from_utc"], "valid_to_utc": src["valid_to_utc"],
                         "valid_until_hint_utc": src["valid_until_hint_utc"],
                         "asserted_at_utc": t["asserted_at_utc"], "superseded_at_utc": t["superseded_at_utc"],
                         "believed_from_utc": src.get("tx_from_utc"), "believed_until_utc": src.get("tx_to_utc")}
        if valid_at:
            if src["status"] == "retracted" or (src["status"] == "superseded" and src["valid_to_utc"] is None):
                continue
            if not _valid_at(src, valid_at):
                continue
        out.append(v)
    return out


FIRST_PAGE = 500  # rows read before the bitemporal filter; each next page is twice the last


def held_facts(conn, page, limit: int, valid_at: str | None, believed_at: str | None,
               first_page: int = FIRST_PAGE) -> list[dict]:
    """The first ``limit`` facts, in order, that pass the bitemporal filter: read page by page (each twice the
    last), so a subject with a million claims is not read whole when the first pages hold enough (B45)."""
    out: list[dict] = []
    skip, size = 0, max(first_page, 2 * limit)
    while len(out) < limit:
        rows = page(size, skip)
        out += bitemporal_filter(conn, [fact_view(r) for r in rows], valid_at, believed_at)
        if len(rows) < size:
            break
        skip, size = skip + size, 2 * size
    return out[:limit]


WIDE = 120  # from this many columns every column is shown; below, secondary ones go (issue 23 part 4)


def facts_table(views: list[dict], width: int) -> Table:
    """Readable at 80 columns: statement and quote wrap; the secondary columns (how, status, conversation) only
    when the terminal is wide; who said it shrinks to "you" / "AI" / a name."""
    wide = width >= WIDE
    t = Table(show_edge=False, pad_edge=False, expand=False)
    t.add_column("date", no_wrap=True)
    t.add_column("by", no_wrap=not wide, max_width=None if wide else 8, overflow="ellipsis")
    t.add_column("statement", ratio=3, overflow="fold")
    t.add_column("quote", ratio=4, overflow="fold")
    t.add_column("conf", justify="right", no_wrap=True)
    if wide:
        for col in ("how", "status", "conversation"):
            t.add_column(col)
    for v in views:
        date = (v["message_date"] or "undated")[:10] + ("" if v["timestamp_quality"] == "original"
                                                          or not v["message_date"] else "*")
        flags = []
        if v["supersession_type"]:
            flags.append(f"{v['supersession_type']}ed")
        if v["retracted_by"]:
            flags.append("retracted" if any(r["retraction_type"] != "temporal_bound" for r in v["retracted_by"])
                         else "ended")
        if v["asserted_role"] == "assistant":
            flags.append("corroborated" if v["corroborated"] else "uncorroborated")
        who = v["speaker"] or {"user": "you", "assistant": "AI"}.get(v["asserted_role"], v["asserted_role"])
        row = [date, who, statement(v) + ("" if wide or not flags else f" ({', '.join(flags)})"),
               f"“{(v['quote'] or '')[:160 if not wide else 70]}”", f"{v['confidence']:.2f}"]
        if wide:
            row += [v["extraction_method"] + (f" ({', '.join(flags)})" if flags else ""),
                    status_text(v.get("temporal")), (v["conversation_title"] or "")[:28]]
        t.add_row(*(escape(x) for x in row))
    return t


def register(app: typer.Typer) -> None:
    @app.command("facts")
    def facts_cmd(
        about: Annotated[Optional[str], typer.Option("--about", help="Only facts about this entity (name, alias, key "
                                                     "or id prefix; 'me' for you).")] = None,
        predicate: Annotated[Optional[str], typer.Option("--predicate", help="Only these predicates or categories, "
                                                         "comma-separated (e.g. lives_in,family).")] = None,
        role: Annotated[Optional[str], typer.Option("--role", help="Only claims made by: user | assistant.")] = None,
        questions: Annotated[bool, typer.Option("--questions/--no-questions",
                                                help="Include questions (never facts).")] = True,
        limit: Annotated[int, typer.Option("--limit", help="How many (oldest first).")] = 200,
        valid_at: Annotated[Optional[str], typer.Option("--valid-at", help="Only facts true at this date (valid "
                                                        "time), e.g. 2023-05-01.")] = None,
        believed_at: Annotated[Optional[str], typer.Option("--believed-at", help="As Kenning believed them at this "
                                                           "date (transaction time): later messages unseen.")] = None,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """Facts, preferences, plans and questions read from your messages: each with its quote, date, conversation,
        confidence and how it was extracted. --valid-at and --believed-at ask the bitemporal questions: what was true
        then, and what Kenning had been told by then."""
        from kenning.store import assertions as asql

        if role is not None and role not in ("user", "assistant"):
            fail("--role must be user or assistant")
        with open_vault(db, config, readonly=True) as vault:
            subject_ids, preds, others = fact_filters(vault.conn, about, predicate)
            va, ba = parse_when(valid_at, "--valid-at"), parse_when(believed_at, "--believed-at")
            page = lambda size, skip: asql.facts(vault.conn, subject_ids=subject_ids, predicate_norms=preds,  # noqa: E731
                                                 role=role, include_questions=questions, limit=size, offset=skip)
            views = held_facts(vault.conn, page, limit, va, ba) if (va or ba) else \
                bitemporal_filter(vault.conn, [fact_view(r) for r in page(limit, 0)], None, None)
            total = None  # with --valid-at/--believed-at the total would mean filtering every row: not counted
            if len(views) >= limit and not (va or ba) and not json_out:
                total = asql.count_facts(vault.conn, subject_ids=subject_ids, predicate_norms=preds, role=role,
                                         include_questions=questions)
        if json_out:
            print_json(views)
            return
        if not views:
            out.print("no facts yet (run `kenning ingest`)" if not (about or predicate or role) else "no matching facts")
            return
        out.print(facts_table(views, out.width))
        if len(views) >= limit:
            out.print(showing(len(views), total, "--limit N"), highlight=False, markup=False)
        for o in others:
            out.print(f"also called {about!r}: {o['canonical_name']} ({o['entity_type']}, {o['entity_id'][:8]})",
                      highlight=False, markup=False)
