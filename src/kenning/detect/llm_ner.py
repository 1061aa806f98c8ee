"""LLM NER through the model layer (seed 001 §2A.5.4; docs/decisions.md E27–E29).

:class:`LlmNerBackend` implements the :class:`kenning.detect.ner.NerBackend` protocol. Stage 2A hands it the texts
of a batch of messages first (:meth:`LlmNerBackend.prefetch`): their NER chunks (``ner_max_chars`` /
``ner_stride``, the same chunks :func:`kenning.detect.ner.run_chunked` asks about) go to the model in requests of
consecutive messages of one conversation (``entities.ner.llm.batch_max_messages`` / ``batch_max_chars``), with the
pinned prompt ``ner_entities`` and the schema :class:`NerBatchOut`. :meth:`detect` then answers from those
answers. Every request is logged by the model layer in ``llm_extraction_calls`` (same transaction as the stage)
and replayable with ``--llm replay``; stage 2A logs the run in ``ner_model_runs`` and each message's raw output
in ``ner_model_run_io`` like any other backend.

The model names entities; Kenning finds the offsets: every exact occurrence of the returned text in the chunk,
with word boundaries where the name begins or ends with a letter or digit, is a span. A name that does not
occur verbatim is kept without offsets (ineligible, ``NO_OFFSETS_UNRELIABLE``, WARN ``OFFSET_UNRELIABLE``):
offsets are never guessed (seed §0 "if not provably correct, store NULL").

A request that fails after the model layer's retries and one repair gives its chunks no entities and marks them
``error``; stage 2A then stores the message's detect state so that the next run tries it again.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

from pydantic import BaseModel

from kenning.config import Config
from kenning.detect.ner import NerSpan, chunk_bounds

PROMPT = "ner_entities"


class NerEntityOut(BaseModel):
    text: str
    label: str


class NerItemOut(BaseModel):
    id: int
    entities: list[NerEntityOut]


class NerBatchOut(BaseModel):
    items: list[NerItemOut]


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def find_spans(text: str, surface: str) -> list[tuple[int, int]]:
    """Every occurrence of ``surface`` in ``text`` (code-point offsets) that does not cut a word: where the surface
    begins (ends) with a word character, the character before (after) it must not be one."""
    out: list[tuple[int, int]] = []
    if not surface:
        return out
    n = len(surface)
    head, tail = _is_word(surface[0]), _is_word(surface[-1])
    i = text.find(surface)
    while i >= 0:
        e = i + n
        if not (head and i > 0 and _is_word(text[i - 1])) and not (tail and e < len(text) and _is_word(text[e])):
            out.append((i, e))
        i = text.find(surface, i + 1)
    return out


def llm_ner_name(config: Config) -> str:
    """The backend's name: the detector is ``NER:llm-<model>`` (seed §2A.1 ``NER:<model>``)."""
    return f"llm-{config.llm.model or 'unknown'}"


def llm_ner_version(config: Config, llm_mode: str) -> str:
    """The extractor version of LLM NER (model, pinned prompt, labels and confidence): the backend's version,
    part of stage 2A's per-message input hash, so a new prompt or model re-detects. Live and replay agree."""
    from kenning.llm.version import extractor_version

    n = config.entities.ner.llm
    return extractor_version(config, prompts=[PROMPT], llm_mode=llm_mode,
                             extra={"ner": {"labels": list(n.labels), "confidence": n.confidence}})


class LlmNerBackend:
    """Names from the configured model. ``open_client`` opens the model layer's run on first use (a rerun with
    nothing to detect writes no LLM run)."""

    def __init__(self, config: Config, *, version: str, open_client: Callable[[], Any]):
        from kenning.llm.prompts import prompt_for

        n = config.entities.ner.llm
        ed = config.pipeline.entity_detection
        self.name = llm_ner_name(config)
        self.version = version
        self.model = config.llm.model or ""
        self.labels = list(n.labels)
        self.confidence = float(n.confidence)
        self.batch_max_messages, self.batch_max_chars = n.batch_max_messages, n.batch_max_chars
        self.max_chars, self.stride = ed.ner_max_chars, ed.ner_stride
        self.prompt_ref = prompt_for(config, PROMPT).ref
        self._open = open_client
        self.client: Any = None
        self._answers: dict[str, list[NerSpan]] = {}
        self._info: dict[str, dict] = {}
        self.stats: Counter = Counter()

    def config(self) -> dict[str, Any]:
        return {"backend": "llm", "name": self.name, "version": self.version, "model": self.model,
                "prompt": self.prompt_ref, "labels": self.labels, "confidence": self.confidence,
                "batch_max_messages": self.batch_max_messages, "batch_max_chars": self.batch_max_chars}

    # -- the protocol -----------------------------------------------------------------------------------------
    def detect(self, text: str) -> list[NerSpan]:
        if not text.strip():
            return []
        if text not in self._answers:  # not prefetched (direct use): ask for this text alone
            self.prefetch([(None, None, text)])
        return self._answers[text]

    def chunk_info(self, text: str) -> dict | None:
        """What run_chunked records beside a chunk's spans: the calls that answered it, or why it has none."""
        return self._info.get(text)

    # -- batching -----------------------------------------------------------------------------------------------
    def prefetch(self, messages: Iterable[tuple[str | None, str | None, str]]) -> None:
        """Ask the model about every NER chunk of these ``(conversation_id, message_id, text)`` not answered yet
        in this run, in order: consecutive chunks of one conversation share a request up to the batch limits."""
        pending: list[tuple[str | None, str | None, str]] = []
        seen: set[str] = set()
        for conv, mid, text in messages:
            if not text or not text.strip():
                continue
            for off, size in chunk_bounds(len(text), self.max_chars, self.stride):
                piece = text[off:off + size]
                if not piece.strip() or piece in self._answers or piece in seen:
                    continue
                seen.add(piece)
                pending.append((conv, mid, piece))
        batch: list[tuple[str | None, str]] = []
        chars = 0
        conv_of_batch: str | None = None
        for conv, mid, piece in pending:
            if batch and (conv != conv_of_batch or len(batch) >= self.batch_max_messages
                          or chars + len(piece) > self.batch_max_chars):
                self._ask(batch)
                batch, chars = [], 0
            batch.append((mid, piece))
            chars += len(piece)
            conv_of_batch = conv
        if batch:
            self._ask(batch)

    def _ask(self, batch: list[tuple[str | None, str]]) -> None:
        if self.client is None:
            self.client = self._open()
        items = [{"id": i + 1, "text": piece} for i, (_, piece) in enumerate(batch)]
        mids = [mid for mid, _ in batch if mid]
        res = self.client.structured(PROMPT, {"labels": self.labels, "items": items}, NerBatchOut,
                                     message_id=mids[0] if mids else None,
                                     item_key="ner:" + ",".join(dict.fromkeys(mids)))
        self.stats["requests"] += 1
        self.stats["chunks_sent"] += len(batch)
        calls = list(res.call_ids)
        if not res.ok:
            self.stats["requests_failed"] += 1
            for _, piece in batch:
                self._answers[piece] = []
                self._info[piece] = {"call_ids": calls, "error": res.error_code or "ERROR"}
            return
        by_id: dict[int, list[NerEntityOut]] = {}
        for item in res.value.items:
            by_id.setdefault(item.id, []).extend(item.entities)
        for i, (_, piece) in enumerate(batch):
            info: dict[str, Any] = {"call_ids": calls}
            if i + 1 not in by_id:
                info["missing_in_answer"] = True
                self.stats["items_missing"] += 1
            self._answers[piece] = self._spans(piece, by_id.get(i + 1, []), info)
            self._info[piece] = info

    def _spans(self, piece: str, entities: list[NerEntityOut], info: dict) -> list[NerSpan]:
        out: list[NerSpan] = []
        done: set[tuple[str, str]] = set()
        for ent in entities:
            surface, label = ent.text.strip(), ent.label.strip().upper()
            if not surface or not label or (surface, label) in done:
                continue
            done.add((surface, label))
            spans = find_spans(piece, surface)
            self.stats["entities"] += 1
            if not spans:
                self.stats["entities_not_found"] += 1
                out.append(NerSpan(None, None, label, surface, self.confidence, {"llm": "text_not_found"}))
                continue
            out.extend(NerSpan(s, e, label, surface, self.confidence) for s, e in spans)
        if len(done) < len(entities):
            info["duplicates_dropped"] = len(entities) - len(done)
        out.sort(key=lambda x: (x.start is None, x.start or 0, -(x.end or 0), x.label, x.text))
        return out

    def summary(self) -> dict[str, Any]:
        """For ``ner_model_runs.raw_io_json``: the model layer's run and what the requests gave."""
        run = getattr(self.client, "run", None)
        return {"llm_run_id": getattr(run, "run_id", None), "llm_mode": getattr(run, "mode", None),
                "prompt": self.prompt_ref, **{k: self.stats[k] for k in sorted(self.stats)}}
