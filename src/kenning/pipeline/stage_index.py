"""Stage "index": keep the search index (FTS5 + vectors) in step with the raw layer (issue 9).

Incremental and idempotent: a message is (re)indexed only when it is new or its ``last_changed_run_id``
moved, and re-written only when its indexed fields changed; vectors are computed only for documents whose
text their space has not embedded yet. ``inputs["full"]`` (``kenning reindex``) clears everything first.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from kenning.pipeline.runner import StageContext
from kenning.retrieve.docs import content_hash, doc_fields, embed_text
from kenning.retrieve.embed import make_embedder, space_name
from kenning.retrieve.when import resolve_text
from kenning.store import raw as raw_sql
from kenning.store import search as search_sql


class SearchIndex:
    name = "index"
    title = "search index"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config.retrieval
        counts: Counter = Counter()
        if ctx.inputs.get("full"):
            search_sql.clear_index(ctx.conn)
            counts["cleared"] = 1
        orphans = search_sql.orphan_message_docs(ctx.conn)
        if orphans:
            search_sql.delete_docs(ctx.conn, orphans)
            counts["docs_removed"] += len(orphans)
        batch = cfg.index.batch_size
        after = None
        while True:
            todo = search_sql.messages_to_index(ctx.conn, batch, after)
            if not todo:
                break
            after = (todo[-1]["conversation_id"], todo[-1]["order_index"])
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
            for m in todo:
                speaker = m["author_name"] or m["role"]
                fields = doc_fields(speaker, m["text_raw"], extras.get(m["message_id"], []),
                                    prev.get((m["conversation_id"], m["order_index"])))
                h = content_hash(fields)
                event = (resolve_text(m["text_raw"], dt.date.fromisoformat(m["created_at_utc"][:10]))
                         if m["text_raw"] and m["created_at_utc"] else None)
                doc = {"doc_kind": "message", "doc_id": m["message_id"], "conversation_id": m["conversation_id"],
                       "speaker": speaker, "role": m["role"], "occurred_at_utc": m["created_at_utc"],
                       "position": m["order_index"], "content_sha256": h,
                       "event_start": event.start.isoformat() if event else None,
                       "event_end": event.end.isoformat() if event else None,
                       "source_changed_run_id": m["last_changed_run_id"], "indexed_run_id": ctx.run_id}
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
                fts_new.append((rowid, fields["speaker"], fields["body"], fields["extra"], fields["context"]))
            search_sql.fts_delete(ctx.conn, fts_old)
            search_sql.fts_insert(ctx.conn, fts_new)
            ctx.progress(records=counts["docs_new"] + counts["docs_changed"], file="search index")
        self.embed(ctx, counts)
        counts["docs_total"] = search_sql.doc_count(ctx.conn)
        return {k: counts[k] for k in sorted(counts)}

    def embed(self, ctx: StageContext, counts: Counter) -> None:
        cfg = ctx.config.retrieval.vector
        embedder = make_embedder(cfg, warn=lambda msg: ctx.warn("EMBEDDER_FALLBACK", msg))
        if embedder is None:
            return
        space = space_name(embedder)
        table = search_sql.ensure_vector_space(ctx.conn, space, embedder.backend, embedder.name, embedder.dim,
                                               ctx.run_id)
        batch = max(cfg.batch_size * 8, 64)
        while True:
            docs = search_sql.docs_to_embed(ctx.conn, space, batch)
            if not docs:
                break
            texts = self._texts(ctx, docs, cfg.include_speaker)
            vectors = embedder.embed(texts)
            search_sql.put_vectors(ctx.conn, space, table, docs, vectors)
            counts[f"vectors_{space}"] += len(docs)
            ctx.progress(records=counts[f"vectors_{space}"], file=f"embeddings ({space})")

    @staticmethod
    def _texts(ctx: StageContext, docs: list[dict], include_speaker: bool) -> list[str]:
        ids = [d["doc_id"] for d in docs]
        texts = {r["message_id"]: r["text_raw"] for r in _message_texts(ctx, ids)}
        extras = search_sql.attachment_texts(ctx.conn, ids)
        return [embed_text(doc_fields(d["speaker"], texts.get(d["doc_id"]), extras.get(d["doc_id"], []), None),
                           include_speaker) for d in docs]


def _message_texts(ctx: StageContext, ids: list[str]) -> list[dict]:
    return raw_sql.message_texts(ctx.conn, ids)
