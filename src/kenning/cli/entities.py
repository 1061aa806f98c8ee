"""``kenning entities``, ``kenning entity NAME``, ``kenning lexicon``: what stages 2A–3 made of the vault."""

from __future__ import annotations

from typing import Annotated, Optional

import orjson
import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, fail, open_vault, out, print_json, showing
from kenning.detect.keys import ENTITY_TYPES
from kenning.detect.lookup import find_entities
from kenning.store import entities as esql


def _entity_view(e: dict) -> dict:
    return {"entity_id": e["entity_id"], "canonical_name": e["canonical_name"], "entity_type": e["entity_type"],
            "entity_key": e["entity_key"], "aliases": orjson.loads(e["aliases_json"]),
            "mention_count": e["mention_count"], "conversation_count": e["conversation_count"],
            "salience": e["salience_score"], "first_seen_at_utc": e["first_seen_at_utc"],
            "last_seen_at_utc": e["last_seen_at_utc"]}


def _context(text: str, s: int | None, e: int | None, width: int = 60) -> str:
    if text is None or s is None or e is None:
        return ""
    left = text[max(0, s - width):s].replace("\n", " ")
    right = text[e:e + width].replace("\n", " ")
    return ("…" if s > width else "") + left + "[" + text[s:e] + "]" + right + ("…" if e + width < len(text) else "")


def register(app: typer.Typer) -> None:
    @app.command("entities")
    def entities_cmd(
        entity_type: Annotated[Optional[str], typer.Option("--type", help=f"Only this type ({', '.join(ENTITY_TYPES)}).")] = None,
        limit: Annotated[int, typer.Option("--limit", help="How many (most salient first).")] = 50,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """Entities found in your conversations: name, type, aliases, mention and conversation counts, salience."""
        if entity_type and entity_type.upper() not in ENTITY_TYPES:
            fail(f"unknown entity type {entity_type!r}; known: {', '.join(ENTITY_TYPES)}")
        with open_vault(db, config, readonly=True) as vault:
            items = [_entity_view(e) for e in esql.list_entities(vault.conn, entity_type.upper() if entity_type else None,
                                                                   limit)]
            total = (esql.count_entities(vault.conn, entity_type.upper() if entity_type else None)
                     if len(items) >= limit else None)
        if json_out:
            print_json(items)
            return
        if not items:
            out.print("no entities yet (run `kenning ingest`)")
            return
        t = Table(show_edge=False)
        for col in ("name", "type", "aliases", "mentions", "conversations", "salience"):
            t.add_column(col, justify="right" if col in ("mentions", "conversations", "salience") else "left")
        for it in items:
            aliases = ", ".join(a for a in it["aliases"] if a != it["canonical_name"])
            t.add_row(it["canonical_name"], it["entity_type"], aliases[:60], str(it["mention_count"]),
                      str(it["conversation_count"]), f"{it['salience'] or 0:.2f}")
        out.print(t)
        if len(items) >= limit:
            out.print(showing(len(items), total, "--limit N"), highlight=False, markup=False)

    @app.command("entity")
    def entity_cmd(
        name: Annotated[str, typer.Argument(help="Canonical name, alias, key or id prefix.")],
        limit: Annotated[int, typer.Option("--limit", help="How many mentions to show.")] = 50,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """One entity: its names and every mention in context, with dates."""
        with open_vault(db, config, readonly=True) as vault:
            found = find_entities(vault.conn, name)
            if not found:
                fail(f"no entity called {name!r} (try `kenning entities`)")
            ent = found[0]
            mentions = esql.mentions_of_entity(vault.conn, ent["entity_id"], limit)
            history = esql.history_of(vault.conn, ent["entity_id"])
        view = _entity_view(ent)
        view["mentions"] = [{"message_id": m["message_id"], "conversation_title": m["title"], "role": m["role"],
                             "created_at_utc": m["created_at_utc"], "timestamp_quality": m["timestamp_quality"],
                             "char_start": m["char_start"], "char_end": m["char_end"], "surface": m["surface_text"],
                             "detector": m["detector"], "confidence": m["confidence"],
                             "context": _context(m["text_raw"], m["char_start"], m["char_end"])} for m in mentions]
        view["name_history"] = [{"previous_name": h["previous_name"], "canonical_name": h["canonical_name"],
                                 "confidence": h["confidence"], "selected_at_utc": h["selected_at_utc"]} for h in history]
        view["other_matches"] = [{"entity_id": e["entity_id"], "canonical_name": e["canonical_name"],
                                  "entity_type": e["entity_type"]} for e in found[1:]]
        if json_out:
            print_json(view)
            return
        out.print(f"[bold]{view['canonical_name']}[/] ({view['entity_type']}, key {view['entity_key']!r}) — "
                  f"{view['mention_count']} mentions in {view['conversation_count']} conversations, "
                  f"salience {view['salience'] or 0:.2f}", highlight=False)
        if view["aliases"]:
            out.print("aliases: " + ", ".join(view["aliases"]), highlight=False, markup=False)
        for h in view["name_history"]:
            out.print(f"renamed {h['previous_name']!r} → {h['canonical_name']!r} (confidence {h['confidence']:.2f})",
                      highlight=False, markup=False)
        t = Table(show_edge=False)
        for col in ("date", "role", "conversation", "in context"):
            t.add_column(col)
        for m in view["mentions"]:
            date = (m["created_at_utc"] or "?")[:10] + ("" if m["timestamp_quality"] == "original" else "*")
            t.add_row(date, m["role"], (m["conversation_title"] or "")[:30], m["context"])
        out.print(t)
        for o in view["other_matches"]:
            out.print(f"also: {o['canonical_name']} ({o['entity_type']}, {o['entity_id'][:8]})", highlight=False,
                      markup=False)

    @app.command("lexicon")
    def lexicon_cmd(
        rejected: Annotated[int, typer.Option("--rejected", help="How many rejected candidates to list.")] = 30,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """Your personal lexicon: selected terms and the rejected candidates with the reason."""
        with open_vault(db, config, readonly=True) as vault:
            build = esql.latest_build(vault.conn)
            if build is None:
                if json_out:
                    print_json({"build": None, "terms": [], "rejected": []})
                else:
                    out.print("no lexicon yet (run `kenning ingest`)")
                return
            terms = esql.terms_of_build(vault.conn, build["build_id"])
            cands = {c["candidate_id"]: c for c in esql.term_candidates_of_build(vault.conn, build["build_id"],
                                                                                 selected=True)}
            rej = esql.term_candidates_of_build(vault.conn, build["build_id"], selected=False, limit=rejected)
            reasons = esql.rejection_counts(vault.conn, build["build_id"])
        data = {
            "build": {"build_id": build["build_id"], "build_version": build["build_version"],
                      "started_at_utc": build["started_at_utc"], "candidates_total": build["candidates_total"],
                      "terms_selected": build["terms_selected"], "rejection_reasons": reasons},
            "terms": [{"term": t["canonical_surface"], "term_key": t["term_key"], "aliases": orjson.loads(t["aliases_json"]),
                       "score": t["score"], "entity_type_hint": t["entity_type_hint"],
                       "user_weighted_count": cands[t["candidate_id"]]["user_weighted_count"],
                       "conversation_count": cands[t["candidate_id"]]["conversation_count"]} for t in terms],
            "rejected": [{"term": c["canonical_surface"], "term_key": c["term_key"], "reason": c["rejection_reason"],
                          "generator": c["generator"], "user_weighted_count": c["user_weighted_count"],
                          "conversation_count": c["conversation_count"], "code_likeness_ratio": c["code_likeness_ratio"],
                          "context_diversity": c["context_diversity"]} for c in rej],
        }
        if json_out:
            print_json(data)
            return
        b = data["build"]
        out.print(f"lexicon build {b['build_version']}: {b['terms_selected']} terms selected of "
                  f"{b['candidates_total']} candidates", highlight=False)
        t = Table(title="selected terms", show_edge=False)
        for col in ("term", "type", "score", "user-weighted", "conversations", "aliases"):
            t.add_column(col)
        for it in data["terms"]:
            t.add_row(it["term"], it["entity_type_hint"], f"{it['score']:.2f}", f"{it['user_weighted_count']:g}",
                      str(it["conversation_count"]), ", ".join(a for a in it["aliases"] if a != it["term"])[:40])
        out.print(t)
        r = Table(title="rejected candidates (" + ", ".join(f"{k} {v}" for k, v in reasons.items()) + ")",
                  show_edge=False)
        for col in ("term", "reason", "user-weighted", "conversations", "code ratio", "diversity"):
            r.add_column(col)
        for it in data["rejected"]:
            r.add_row(it["term"], it["reason"], f"{it['user_weighted_count']:g}", str(it["conversation_count"]),
                      f"{it['code_likeness_ratio']:.2f}", f"{it['context_diversity']:.2f}")
        out.print(r)
