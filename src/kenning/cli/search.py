"""``kenning search`` (``kenning reindex`` lives with the other index rebuilds in cli/beliefs.py)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, console, fail, open_vault, out, print_json, user_errors


def dedupe_hits(hits: list[dict]) -> list[tuple[dict, int]]:
    """Hits that read the same (same speaker, same words — a message copied into several conversations or
    branches) shown once, best first, with how many there were (issue 23 part 4)."""
    seen: dict[tuple, int] = {}
    out: list[tuple[dict, int]] = []
    for h in hits:
        key = (h["kind"], h["speaker"], " ".join((h["text"] or "").split()).casefold())
        if key in seen:
            first, n = out[seen[key]]
            out[seen[key]] = (first, n + 1)
            continue
        seen[key] = len(out)
        out.append((h, 1))
    return out


def hits_table(hits: list[dict], width: int) -> Table:
    wide = width >= 120  # the lanes column (and each hit's turn id) only when there is room
    t = Table(show_edge=False, show_lines=False, pad_edge=False)
    for col in ("#", "score", "date", "speaker", "text") + (("lanes",) if wide else ()):
        t.add_column(col, overflow="fold", no_wrap=col in ("#", "score", "date"),
                     ratio=1 if col in ("text", "lanes") else None)
    for h, n in dedupe_hits(hits):
        text = h["text"] if len(h["text"]) <= 160 else h["text"][:157] + "…"
        if n > 1:
            text += f"  (×{n}: the same words in {n} places)"
        where = (h["date"] or "")[:10]
        who = h["speaker"] or (f"[{h['kind']}]" if h["kind"] != "message" else "")
        row = [str(h["rank"]), f"{h['score']:.3f}", where, who, text]
        if wide:
            lanes = " ".join(f"{name}#{v['rank']}" for name, v in h["lanes"].items())
            if h.get("turn_ref"):
                lanes += f"  ({h['turn_ref']})"
            row.append(lanes)
        t.add_row(*row)
    return t


def _print_incognito(raw: list[dict]) -> None:
    out.print(f"incognito (raw only, never learned from): {len(raw)} turn(s)" if raw else
              "incognito (raw only): no turn holds every word")
    for h in raw:
        text = h["text"] if len(h["text"]) <= 160 else h["text"][:157] + "…"
        out.print(f"  {(h['date'] or '')[:10]} {h['speaker']} in “{h['title'] or 'untitled'}”: {text}")


def register(app: typer.Typer) -> None:
    @app.command()
    def search(
        query: Annotated[str, typer.Argument(help="What you are looking for, in your own words.", show_default=False)],
        k: Annotated[Optional[int], typer.Option("--k", help="How many hits (default: retrieval.default_k).")] = None,
        as_of: Annotated[Optional[str], typer.Option("--as-of", help="Only what was said up to this date; relative "
                                                     "times in the query ('last summer') are read from it.")] = None,
        now: Annotated[Optional[str], typer.Option("--now", help="The date the question is asked (default: --as-of, "
                                                   "else today).")] = None,
        lane: Annotated[Optional[list[str]], typer.Option("--lane", help="Only these lanes (repeatable).")] = None,
        kind: Annotated[Optional[list[str]], typer.Option("--kind", help="Only hits of these kinds: message, entity, "
                                                          "belief (repeatable; default all).")] = None,
        incognito: Annotated[bool, typer.Option("--incognito", help="Also look in the raw text of incognito "
                                                "conversations (never indexed or learned from; a plain word scan, "
                                                "listed apart).")] = False,
        db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
    ) -> None:
        """Hybrid search over turns, entities and beliefs: BM25 + vectors + speaker + time + entity + belief
        lanes, fused with RRF; each hit shows its lanes and evidence. Incognito conversations are not searched
        unless you ask with --incognito."""
        from kenning.llm.prewarm import start_query_encoder

        raw: list[dict] = []
        with open_vault(db, config, readonly=True) as vault, user_errors():
            # the lanes that embed the question (F11)
            vectors = lane is None or any(x in ("vector", "speaker", "time", "entity") for x in lane)
            warm = start_query_encoder(vault.config) if vectors else None
            try:
                result = vault.search(query, k=k, as_of=as_of, now=now, lanes=lane, kinds=kind)
            except ValueError as e:
                fail(str(e))
            finally:
                if warm is not None:
                    warm.join()  # never leave the load running into interpreter shutdown
            if incognito:
                from kenning.intake.modes import search_incognito

                raw = search_incognito(vault.conn, vault.config, query, limit=k or vault.config.retrieval.default_k)
        if json_out:
            print_json({**result.as_dict(), **({"incognito_raw": raw} if incognito else {})})
            return
        if incognito:
            _print_incognito(raw)
        for n in result.notes:
            console.print(f"[yellow]note:[/] {n}")
        fired = ", ".join(f"{l['lane']} ({l['candidates']})" + (f" [{l['note']}]" if l.get("note") else "")
                          for l in result.lanes)
        console.print(f"lanes: {fired or 'none'}")
        if not result.hits:
            out.print("no hits")
            return
        out.print(hits_table(result.hits, out.width))
