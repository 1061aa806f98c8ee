"""Stage "index": keep the search index (FTS5 + vectors + entity names) in step with the vault (issue 9).

Incremental and idempotent: a message is (re)indexed only when it is new or its ``last_changed_run_id``
moved, and re-written only when its indexed fields changed; an entity document only when its name, aliases or
lexicon terms changed. Vectors go through the model layer's vector index (space ``retrieval.vector.space``,
item id = ``search_docs.doc_rowid``; decisions R14/R15): its upsert embeds only texts it has not embedded yet
(through the embedding cache), so a model migration (`kenning embeddings migrate`) re-embeds search with
everything else. ``inputs["full"]`` (``kenning reindex``) clears everything first. Alongside the FTS table it keeps
the forward index (``search_doc_terms``, R51) and each token's document count (``search_term_docs``, R54).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import orjson

from kenning.detect.keys import norm_name
from kenning.llm.errors import EmbeddingError, LLMEndpointError
from kenning.pipeline.incognito import incognito_skip
from kenning.pipeline.runner import StageContext
from kenning.retrieve.docs import content_hash, doc_fields, entity_fields
from kenning.retrieve.when import event_time
from kenning.store import search as search_sql


def _owner_names(key: str | None, name: str, self_names: list[str]) -> list[str]:
    """Names the vault owner's entities go by in a query: the owner (``__SELF__``) by the ``--self`` participant's
    name and aliases; the owner's kin ("SELF's sister") as "my sister" and "<owner>'s sister" (R18)."""
    if key == "__SELF__":
        return list(self_names)
    if name.startswith("SELF's "):
        rest = name[len("SELF's "):]
        return [f"my {rest}", *[f"{n}'s {rest}" for n in self_names]]
    return []


class SearchIndex:
    name = "index"
    title = "search index"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        counts: Counter = Counter()
        changed: list[int] = []
        removed: list[int] = []
        legacy = search_sql.drop_legacy_vector_tables(ctx.conn)
        if legacy:
            counts["legacy_vector_tables_dropped"] = len(legacy)
        if ctx.inputs.get("full"):
            removed += search_sql.clear_index(ctx.conn)
            counts["cleared"] = 1
        orphans = search_sql.orphan_message_docs(ctx.conn)
        if orphans:
            search_sql.delete_docs(ctx.conn, orphans)
            removed += orphans
            counts["docs_removed"] += len(orphans)
        self.index_messages(ctx, counts, changed)
        self.fill_doc_terms(ctx, counts)
        self.index_entities(ctx, counts, changed, removed)
        if search_sql.term_docs_state(ctx.conn) == 0:  # documents indexed before migration 0064 (R54)
            counts["term_docs_counted"] = search_sql.term_docs_rebuild(ctx.conn)
        self.embed(ctx, counts, changed, removed)
        self.embed_nodes(ctx, counts)
        if changed or removed or counts.get("cleared") or counts.get("doc_terms_filled"):
            search_sql.bump_version(ctx.conn)
        counts["docs_total"] = search_sql.doc_count(ctx.conn)
        return {k: counts[k] for k in sorted(counts)}

    # -- messages (turns) ------------------------------------------------------------------------------------
    def index_messages(self, ctx: StageContext, counts: Counter, changed: list[int]) -> None:
        batch = ctx.config.retrieval.index.batch_size
        after = None
        # §13.4 (I70, I71): incognito turns are not indexed (so search shows none of them and nothing embeds them);
        # no document is made, so a cleared mode indexes them on the next run.
        skip = incognito_skip(ctx)
        while True:
            todo = search_sql.messages_to_index(ctx.conn, batch, after)
            if not todo:
                break
            after = (todo[-1]["conversation_id"], todo[-1]["order_index"])
            if skip:
                counts["turns_incognito"] += sum(1 for m in todo if m["conversation_id"] in skip)
                todo = [m for m in todo if m["conversation_id"] not in skip]
                if not todo:
                    continue
            extras = search_sql.attachment_texts(ctx.conn, [m["message_id"] for m in todo])
            prev: dict[tuple[str, int], str] = {}
            need = []
            for a, b in zip([None, *todo[:-1]], todo):
                if a is not None and a["conversation_id"] == b["conversation_id"] and \
                        a["order_index"] == b["order_index"] - 1:
                    if a["text_raw"]:
                        prev[(b["conversation_id"], b["order_index"])] = a["text_raw"]
                else:
                    need.append((b["conversation_id"], b["order_index"]))
            prev.update(search_sql.previous_texts(ctx.conn, need))
            fts_new, fts_old = [], []
            tms = search_sql.time_mentions_of(ctx.conn, [m["message_id"] for m in todo])
            for m in todo:
                speaker = m["author_name"] or m["role"]
                fields = doc_fields(speaker, m["text_raw"], extras.get(m["message_id"], []),
                                    prev.get((m["conversation_id"], m["order_index"])))
                h = content_hash(fields)
                event = event_time(m["text_raw"], dt.date.fromisoformat(m["created_at_utc"][:10])
                                   if m["created_at_utc"] else None, tms.get(m["message_id"]))
                doc = {"doc_kind": "message", "doc_id": m["message_id"], "conversation_id": m["conversation_id"],
                       "speaker": speaker, "role": m["role"], "occurred_at_utc": m["created_at_utc"],
                       "position": m["order_index"], "content_sha256": h,
                       "event_start": event.start.isoformat() if event else None,
                       "event_end": event.end.isoformat() if event else None,
                       "source_changed_run_id": m["last_changed_run_id"]}
                if m["doc_rowid"] is None:
                    if not (fields["body"] or fields["extra"]):
                        continue
                    rowid = search_sql.insert_doc(ctx.conn, doc)
                    counts["docs_new"] += 1
                elif m["content_sha256"] == h:
                    search_sql.update_doc(ctx.conn, m["doc_rowid"], doc)
                    counts["docs_unchanged"] += 1
                    continue
                else:
                    rowid = m["doc_rowid"]
                    search_sql.update_doc(ctx.conn, rowid, doc)
                    fts_old.append(rowid)
                    counts["docs_changed"] += 1
                    search_sql.invalidate_next(ctx.conn, m["conversation_id"], m["order_index"])
                changed.append(rowid)
                fts_new.append((rowid, fields["speaker"], fields["body"], fields["extra"], fields["context"]))
            search_sql.fts_delete(ctx.conn, fts_old)
            search_sql.fts_insert(ctx.conn, fts_new)
            ctx.progress(records=counts["docs_new"] + counts["docs_changed"], file="search index", unit="turns")

    # -- the forward index of documents indexed before it existed (migration 0063, R51) -------------------------
    def fill_doc_terms(self, ctx: StageContext, counts: Counter) -> None:
        """Forward-index rows for documents that have none: a turn's from its indexed fields (speaker, text,
        captions, the turn before — as index_messages builds them); an entity document is re-indexed by
        index_entities (its content hash is cleared)."""
        batch = ctx.config.retrieval.index.batch_size
        after = 0
        while True:
            todo = search_sql.doc_terms_missing_messages(ctx.conn, batch, after)
            if not todo:
                break
            after = todo[-1]["doc_rowid"]
            extras = search_sql.attachment_texts(ctx.conn, [m["message_id"] for m in todo])
            prev = search_sql.previous_texts(ctx.conn, [(m["conversation_id"], m["order_index"]) for m in todo])
            search_sql.doc_terms_insert(ctx.conn, [
                (m["doc_rowid"], *doc_fields(m["speaker"], m["text_raw"], extras.get(m["message_id"], []),
                                             prev.get((m["conversation_id"], m["order_index"]))).values())
                for m in todo])
            counts["doc_terms_filled"] += len(todo)
            ctx.progress(records=counts["doc_terms_filled"], file="search forward index", unit="turns")
        counts["doc_terms_entities_reindexed"] += search_sql.doc_terms_missing_entities_reset(ctx.conn)
        if not counts["doc_terms_entities_reindexed"]:
            del counts["doc_terms_entities_reindexed"]

    # -- entities: documents of their own, and the names the entity lane matches (R18) ------------------------
    def index_entities(self, ctx: StageContext, counts: Counter, changed: list[int], removed: list[int]) -> None:
        entities = search_sql.active_entities(ctx.conn)
        lexicon: dict[str, list[str]] = {}
        for entity_id, surface, aliases_json in search_sql.lexicon_names(ctx.conn):
            lexicon.setdefault(entity_id, []).extend([surface, *orjson.loads(aliases_json or "[]")])
        self_names = search_sql.self_participant_names(ctx.conn)
        existing = search_sql.docs_of_kind(ctx.conn, "entity")
        seen: set[str] = set()
        names_for: dict[str, list[tuple[str, str, str]]] = {}
        fts_new, fts_old = [], []
        for e in entities:
            eid = e["entity_id"]
            seen.add(eid)
            aliases = [a for a in orjson.loads(e["aliases_json"] or "[]") if isinstance(a, str)]
            terms = sorted(set(lexicon.get(eid, [])))
            aliases = aliases + _owner_names(e["entity_key"], e["canonical_name"], self_names)
            fields = entity_fields(e["canonical_name"], e["entity_type"], aliases, terms)
            h = content_hash(fields)
            old = existing.get(eid)
            if old is not None and old[1] == h:
                continue
            doc = {"doc_kind": "entity", "doc_id": eid, "conversation_id": None, "speaker": None, "role": None,
                   "occurred_at_utc": e["first_seen_at_utc"], "position": None, "content_sha256": h,
                   "event_start": None, "event_end": None, "source_changed_run_id": None}
            if old is None:
                rowid = search_sql.insert_doc(ctx.conn, doc)
                counts["entity_docs_new"] += 1
            else:
                rowid = old[0]
                search_sql.update_doc(ctx.conn, rowid, doc)
                fts_old.append(rowid)
                counts["entity_docs_changed"] += 1
            changed.append(rowid)
            fts_new.append((rowid, fields["speaker"], fields["body"], fields["extra"], fields["context"]))
            names = {(norm_name(e["canonical_name"]), eid, "canonical")}
            names |= {(norm_name(a), eid, "alias") for a in aliases if a.strip()}
            names |= {(norm_name(t), eid, "lexicon") for t in terms if t.strip()}
            names_for[eid] = sorted(n for n in names if n[0])
        gone = [rowid for eid, (rowid, _h) in existing.items() if eid not in seen]
        if gone:
            search_sql.delete_docs(ctx.conn, gone)
            search_sql.replace_entity_names(ctx.conn, [eid for eid in existing if eid not in seen], [])
            removed += gone
            counts["entity_docs_removed"] += len(gone)
        search_sql.fts_delete(ctx.conn, fts_old)
        search_sql.fts_insert(ctx.conn, fts_new)
        if names_for:
            search_sql.replace_entity_names(ctx.conn, list(names_for),
                                            [n for names in names_for.values() for n in names])

    # -- vectors: the model layer's vector index ------------------------------------------------------------
    def embed(self, ctx: StageContext, counts: Counter, changed: list[int], removed: list[int]) -> None:
        """Vectors of the changed and never-embedded documents — here, in the stage's transaction, unless the run
        asks to defer them (``inputs["defer_vectors"]``: `kenning ingest` / `kenning reindex`) and they are many
        (``vector_fill.inline_max``) and ``vector_fill.mode`` is not inline: then the stage only removes the old
        vectors of changed documents and leaves the rest to the fill (issue 24 §1, Q1/Q2/Q15)."""
        from kenning.llm.index import VectorIndex
        from kenning.retrieve import vector_fill
        from kenning.store import vector_fill as vf_sql

        vcfg, fcfg = ctx.config.retrieval.vector, ctx.config.vector_fill
        if not vcfg.enabled:
            return
        idx = VectorIndex(ctx.conn, ctx.config, clock=ctx.clock)
        if removed:
            counts["vectors_removed"] += idx.delete(vcfg.space, [str(r) for r in removed])
        try:
            idx.ensure_active()
        except (EmbeddingError, LLMEndpointError) as e:  # pragma: no cover - ensure_active loads no model
            ctx.warn("EMBEDDINGS_UNAVAILABLE", f"{e}; the vector lanes have no vectors")
            return
        vf_sql.prune_skips(ctx.conn)  # skip rows of removed or changed documents (Q7)
        todo = sorted(set(changed))
        stale = vf_sql.with_vectors(ctx.conn, vcfg.space, todo)  # changed documents still carrying a vector
        pending = vf_sql.pending_count(ctx.conn, vcfg.space)
        if fcfg.mode != "inline" and ctx.inputs.get("defer_vectors") and pending + len(stale) > fcfg.inline_max:
            if stale:  # their text changed: no vector beats a wrong one until the fill makes the new one
                counts["vectors_removed"] += idx.delete(vcfg.space, [str(r) for r in stale])
            counts["vectors_deferred"] = vf_sql.pending_count(ctx.conn, vcfg.space)
            return
        step = vcfg.batch_size
        done = 0
        # The changed turns are the known total; a backfill of never-embedded documents only learns its size
        # as it goes (the bar then counts without a total).
        total = len(todo) or None
        after = 0
        while True:
            if todo:
                docs = vf_sql.docs_for_fill(ctx.conn, todo[:step])
                todo = todo[step:]
            else:  # documents never embedded (vectors turned on later, a vault from before R15, a rebuild)
                docs = vf_sql.pending_docs(ctx.conn, vcfg.space, after, step)
                if not docs:
                    break
                after = docs[-1]["doc_rowid"]
            if not docs:
                continue
            try:
                vector_fill.embed_batch(ctx.conn, ctx.config, idx, docs, counts, own_transaction=False)
            except (EmbeddingError, LLMEndpointError) as e:
                ctx.warn("EMBEDDINGS_UNAVAILABLE", f"{e}; the vector lanes have no vectors until `kenning reindex`")
                return
            done += len(docs)
            ctx.progress(records=done, total=total if total and done <= total else None, file="embeddings",
                         unit="turns embedded")

    @staticmethod
    def embed_nodes(ctx: StageContext, counts: Counter) -> None:
        """DOC72 node vectors (§3.3), after the node store changed: the same model, space ``nodes``."""
        from kenning.knowledge.vectors import embed_nodes

        try:
            counts.update({k: v for k, v in embed_nodes(ctx.conn, ctx.config, ctx.clock,
                                                         progress=ctx.progress).items() if v})
        except (EmbeddingError, LLMEndpointError) as e:
            ctx.warn("EMBEDDINGS_UNAVAILABLE", f"{e}; knowledge nodes have no vectors until `kenning reindex`")
