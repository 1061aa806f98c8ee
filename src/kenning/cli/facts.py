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

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json

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
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """Facts, preferences, plans and questions read from your messages: each with its quote, date, conversation,
        confidence and how it was extracted."""
        from kenning.store import assertions as asql

        if role is not None and role not in ("user", "assistant"):
            fail("--role must be user or assistant")
        with open_vault(db, config, readonly=True) as vault:
            subject_ids, preds, others = fact_filters(vault.conn, about, predicate)
            rows = asql.facts(vault.conn, subject_ids=subject_ids, predicate_norms=preds, role=role,
                              include_questions=questions, limit=limit)
        views = [fact_view(r) for r in rows]
        if json_out:
            print_json(views)
            return
        if not views:
            out.print("no facts yet (run `kenning ingest`)" if not (about or predicate or role) else "no matching facts")
            return
        t = Table(show_edge=False)
        for col in ("date", "said by", "statement", "quote", "conf", "how", "conversation"):
            t.add_column(col, justify="right" if col == "conf" else "left")
        for v in views:
            date = (v["message_date"] or "?")[:10] + ("" if v["timestamp_quality"] == "original" else "*")
            flags = []
            if v["supersession_type"]:
                flags.append(f"{v['supersession_type']}ed")
            if v["retracted_by"]:
                flags.append("retracted" if any(r["retraction_type"] != "temporal_bound" for r in v["retracted_by"])
                             else "ended")
            if v["asserted_role"] == "assistant":
                flags.append("corroborated" if v["corroborated"] else "uncorroborated")
            how = v["extraction_method"] + (f" ({', '.join(flags)})" if flags else "")
            who = v["speaker"] or v["asserted_role"]
            t.add_row(*(escape(x) for x in (date, who, statement(v), f"“{(v['quote'] or '')[:70]}”",
                                             f"{v['confidence']:.2f}", how, (v["conversation_title"] or "")[:28])))
        out.print(t)
        for o in others:
            out.print(f"also called {about!r}: {o['canonical_name']} ({o['entity_type']}, {o['entity_id'][:8]})",
                      highlight=False, markup=False)
