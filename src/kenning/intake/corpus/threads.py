"""The `threads` stage (seed 003 §25; issue 18 part 6): one ``conversation_threads`` row per conversation, its
``thread_entity_links`` and ``decision_checkpoints``.

- Incremental (I52): a thread's input hash covers its messages (ids, raw hashes, branch/hidden flags), its linked
  entity nodes, the summarizer version and how it is summarised; only threads whose hash changed are rebuilt.
- Extractive without a model (``checkpoints.read_thread``); abstractive with one (I53): the versioned prompt
  ``thread_summary`` through the logged model client. A bad or failed answer falls back to the extractive reading
  (method ``extractive_fallback``), never to nothing. Decision checkpoints stay extractive in both cases unless the
  model names the turn a decision was taken in, so every checkpoint points at a message.
- thread_id = the conversation id (I50); links only to active ``world_entity`` nodes the knowledge bridge made for
  the entities mentioned in the thread, the vault owner left out (every thread would link to them)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from kenning.intake.corpus.checkpoints import Decision, Turn, clip, extractive_summary, read_thread
from kenning.pipeline.runner import StageContext
from kenning.sources.jcs import jcs_hash
from kenning.store import corpus as sql

PROMPT = "thread_summary"
SPACE = "threads"   # the vector-index space of thread summaries (§25.1 "with vector embedding"; I65)


def thread_text(t: dict[str, Any]) -> str:
    """What a thread's vector embeds: title, summary, decisions and open items."""
    return "\n".join([t["title_hint"] or "", t["checkpoint_summary"] or "", *t["key_decisions"],
                      *t["unresolved_items"]]).strip()


class DecisionOut(BaseModel):
    description: str
    reasoning: str = ""
    turn: int | None = None


class ThreadSummaryOut(BaseModel):
    title_hint: str = Field(max_length=200)
    checkpoint_summary: str = Field(max_length=2000)
    key_decisions: list[DecisionOut] = Field(default_factory=list)
    unresolved_items: list[str] = Field(default_factory=list)


def entity_node_id(ids: Any, entity_id: str) -> str:
    """The knowledge bridge's node id for a canonical entity (knowledge/bridge.py ``entity_node_id``)."""
    return ids.make("doc72_bridge_node", "world_entity", entity_id)


def transcript_text(turns: list[Turn], max_chars: int) -> str:
    lines = [f"[{i}] {t.role}" + (f" ({t.author})" if t.author else "") + f": {' '.join(t.text.split())}"
             for i, t in enumerate(turns, 1)]
    text = "\n".join(lines)
    # Keep the end: where things stood is what a resume needs most.
    return text if len(text) <= max_chars else "…\n" + text[-max_chars:]


class ThreadsStage:
    name = "threads"
    title = "conversation threads"

    @staticmethod
    def model_wanted(config: Any, explicit: bool) -> bool:
        return bool(config.corpus.threads.abstractive)

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.llm.client import open_llm_run
        from kenning.llm.prompts import prompt_for
        from kenning.pipeline.incognito import incognito_skip

        cfg = ctx.config.corpus.threads
        counts: Counter = Counter()
        abstractive = ctx.llm_mode != "none" and cfg.abstractive
        prompt_ref = prompt_for(ctx.config, PROMPT).ref if abstractive else None
        method_key = {"summarizer_version": cfg.summarizer_version, "prompt": prompt_ref,
                      "limits": [cfg.max_decisions, cfg.max_unresolved, cfg.max_linked_entities, cfg.summary_chars,
                                 cfg.llm_max_chars]}
        self_id = sql.self_entity_id(ctx.conn)
        mentions = sql.conversation_entity_ids(ctx.conn)
        node_of = {e: entity_node_id(ctx.ids, e) for ents in mentions.values() for e, _ in ents if e != self_id}
        live_nodes = sql.existing_nodes(ctx.conn, sorted(set(node_of.values())))
        built = sql.builds(ctx.conn)
        todo: list[tuple[dict, list[str], str]] = []
        skip = incognito_skip(ctx)
        for fp in sql.conversation_fingerprints(ctx.conn):
            cid = fp["conversation_id"]
            if cid in skip:  # §13.4 (I70): no thread, no resume card; no build row, so a cleared mode builds it
                counts["threads_incognito"] += 1
                continue
            ents = sorted(((e, n) for e, n in mentions.get(cid, []) if node_of.get(e) in live_nodes),
                          key=lambda x: (-x[1], x[0]))[: cfg.max_linked_entities]
            links = [node_of[e] for e, _ in ents]
            h = jcs_hash({"msgs": fp["msgs"] or "", "title": fp["title"], "kind": fp["source_kind"], "links": links,
                          "method": method_key})
            if built.get(cid, {}).get("input_hash") == h:
                counts["threads_unchanged"] += 1
                continue
            todo.append((fp, links, h))
        rebuilt: list[dict[str, Any]] = []
        from kenning.llm.errors import LLMUnavailable

        with open_llm_run(ctx, PROMPT) as llm:
            use = llm if abstractive and llm.enabled else None
            for n, (fp, links, h) in enumerate(todo, 1):
                try:
                    rebuilt.append(self._build(ctx, use, fp, links, h, built, counts, prompt_ref))
                except LLMUnavailable as e:
                    # a summary has a rule-made fallback: a model that stopped answering costs abstraction, not
                    # the stage (I67)
                    ctx.warn("THREAD_SUMMARY_MODEL_UNAVAILABLE", f"{e}; this and the remaining threads keep "
                             "their extractive summaries")
                    use = None
                    rebuilt.append(self._build(ctx, None, fp, links, h, built, counts, prompt_ref))
                ctx.progress(records=n, file="conversation threads")
            llm.run.add(messages_processed=counts["threads_new"] + counts["threads_changed"], assertions_extracted=0)
        self._embed(ctx, rebuilt, counts)
        return {k: counts[k] for k in sorted(counts)}

    @staticmethod
    def _embed(ctx: StageContext, rebuilt: list[dict[str, Any]], counts: Counter) -> None:
        """Vectors of the summaries in space ``threads`` (I65), when search vectors are on. A model that
        cannot be reached leaves a warning, never a failed stage: the BM25 search still answers."""
        from kenning.llm.errors import EmbeddingError, LLMEndpointError
        from kenning.llm.index import VectorIndex

        if not (ctx.config.retrieval.vector.enabled and ctx.config.corpus.threads.vectors):
            return
        # Every thread is offered: the index skips unchanged texts, and threads built while vectors were off (or
        # before a model migration) get theirs now.
        every = sql.threads(ctx.conn)
        try:
            idx = VectorIndex(ctx.conn, ctx.config, clock=ctx.clock)
            idx.ensure_active()
            written = idx.upsert(SPACE, [(t["thread_id"], thread_text(t), t["channel"]) for t in every
                                         if thread_text(t)])
            if written:
                counts["thread_vectors_written"] += written
        except (EmbeddingError, LLMEndpointError) as e:
            ctx.warn("EMBEDDINGS_UNAVAILABLE", f"{e}; thread summaries have no vectors (keyword search still works)")

    def _build(self, ctx: StageContext, llm: Any, fp: dict, links: list[str], input_hash: str,
               built: dict[str, dict], counts: Counter, prompt_ref: str | None) -> dict[str, Any]:
        cfg = ctx.config.corpus.threads
        cid = fp["conversation_id"]
        conv = sql.conversation(ctx.conn, cid) or {}
        turns = [Turn(m["message_id"], m["role"], m["author_name"], m["text_raw"] or "", m["at"])
                 for m in sql.thread_messages(ctx.conn, cid) if (m["text_raw"] or "").strip()]
        reading = read_thread(turns)
        title = (conv.get("title") or "").strip()
        title_hint = clip(title or reading.first_user or "(untitled)", 120)
        summary = extractive_summary(title_hint, reading, len(turns), cfg.summary_chars)
        decisions = reading.decisions
        unresolved = [u for u, _ in reading.unresolved]
        method, call_ids = "extractive", None
        if llm is not None and turns:
            res = llm.structured(PROMPT, {"title": title, "channel": conv.get("source_kind") or "",
                                          "transcript": transcript_text(turns, cfg.llm_max_chars)},
                                 ThreadSummaryOut, item_key=cid)
            call_ids = list(res.call_ids)
            if res.ok and res.value.checkpoint_summary.strip():
                v = res.value
                method = "abstractive"
                title_hint = clip(v.title_hint.strip() or title_hint, 120)
                summary = clip(v.checkpoint_summary, cfg.summary_chars)
                unresolved = [clip(u, 240) for u in v.unresolved_items if u.strip()]
                decisions = self._model_decisions(v.key_decisions, turns) or decisions
                counts["threads_abstractive"] += 1
            else:
                method = "extractive_fallback"
                counts["threads_llm_fallback"] += 1
                ctx.warn("THREAD_SUMMARY_FALLBACK", f"conversation {cid}: the model's summary was unusable "
                         f"({res.error_code}); the extractive summary is kept", conversation=cid)
        decisions = decisions[: cfg.max_decisions]
        unresolved = unresolved[: cfg.max_unresolved]
        times = [t.at for t in turns if t.at]
        occurred = max(times) if times else (conv.get("updated_at_utc") or conv.get("created_at_utc"))
        per_msg = sql.message_entity_ids(ctx.conn, cid)
        link_set = set(links)
        checkpoints = []
        for i, d in enumerate(decisions):
            ents = sorted({entity_node_id(ctx.ids, e) for mid in {d.message_id, d.accepted_from} if mid
                           for e in per_msg.get(mid, [])} & link_set)
            checkpoints.append({"decision_id": ctx.ids.make("decision_checkpoint", cid, d.message_id, i,
                                                            d.description),
                                "thread_id": cid, "description": d.description, "reasoning": d.reasoning,
                                "linked_entity_ids": ents, "occurred_at": d.occurred_at, "message_id": d.message_id,
                                "ordinal": i})
        thread = {"thread_id": cid, "title_hint": title_hint, "linked_entity_ids": links,
                  "key_decisions": [d.description for d in decisions], "unresolved_items": unresolved,
                  "checkpoint_summary": summary, "occurred_at": occurred, "turn_count": len(turns),
                  "channel": conv.get("source_kind")}
        sql.replace_thread(ctx.conn, thread, links, checkpoints,
                           {"thread_id": cid, "conversation_id": cid, "input_hash": input_hash, "method": method,
                            "prompt_ref": prompt_ref if method != "extractive" else None, "llm_call_ids": call_ids,
                            "built_run_id": ctx.run_id})
        counts["threads_changed" if cid in built else "threads_new"] += 1
        counts["decision_checkpoints"] += len(checkpoints)
        counts["entity_links"] += len(links)
        return thread

    @staticmethod
    def _model_decisions(items: list[DecisionOut], turns: list[Turn]) -> list[Decision]:
        """Model decisions that name a real turn; the others cannot be traced to a message and are dropped."""
        out = []
        for d in items:
            if d.turn is None or not 1 <= d.turn <= len(turns) or not d.description.strip():
                continue
            t = turns[d.turn - 1]
            out.append(Decision(clip(d.description, 240), clip(d.reasoning or "", 240), t.message_id, t.at))
        return out


__all__ = ["SPACE", "ThreadsStage", "ThreadSummaryOut", "entity_node_id", "thread_text"]
