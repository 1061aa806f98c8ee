"""The vector lane off the import's critical path (issue 24 §1; decisions Q1–Q29).

An import makes every other search lane ready; the search vectors of its turns are made in the index stage only
when there are few (``vector_fill.inline_max``), else afterwards by :func:`fill` — ``kenning reindex --vectors``,
which ``kenning ingest`` starts detached (``vector_fill.mode: background``). The fill works in batches, each embedded
outside any transaction and written in one short transaction of its own, so a killed fill loses at most one batch
and the next one resumes where it stopped; it re-checks each document's content before writing, so an import or a
rebuild meanwhile never gets a stale vector. It waits for an import holding the vault's import lock before each
write, and one fill runs per vault (``<vault>.vectors.lock``).

What a turn embeds (:func:`texts_for`): "<speaker>: <text>" plus captions, as before — minus fenced code (the FTS
lanes keep it), nothing for tool output or a turn that is only code; identical texts are embedded once through the
embedding cache (across conversations and runs).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from kenning.config import Config
from kenning.privatefs import PRIVATE_FILE
from kenning.retrieve.docs import doc_fields, embed_text
from kenning.store import raw as raw_sql
from kenning.store import vector_fill as vf_sql
from kenning.store.connection import transaction
from kenning.store.import_lock import claim, holder_pid, lock_file, lock_path, try_lock

# a fenced block, or an unclosed fence to the end (a truncated answer)
CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
Progress = Callable[..., Any]


# -- what a document embeds ---------------------------------------------------------------------------------
def message_text(role: str | None, speaker: str | None, text: str | None, extras: list[str], config: Config
                 ) -> tuple[str | None, str | None]:
    """(text to embed, None) or (None, skip reason) for one turn."""
    f = config.vector_fill
    if role in f.skip_roles:
        return None, "skip_role"
    body = text or ""
    if f.strip_code and "```" in body:
        body = re.sub(r"[ \t]*\n[ \t\n]*\n", "\n\n", CODE_FENCE.sub("", body)).strip()
        if not body and not extras:
            return None, "code_only"
    if role == "assistant" and f.assistant_max_words:
        words = body.split()
        if len(words) > f.assistant_max_words:
            body = " ".join(words[:f.assistant_max_words])
    if not body.strip() and not any(x.strip() for x in extras):
        return None, "empty"  # a speaker name alone says nothing
    return embed_text(doc_fields(speaker, body, extras, None), config.retrieval.vector.include_speaker), None


def texts_for(conn, config: Config, docs: list[dict]) -> list[tuple[str | None, str | None]]:
    """:func:`message_text` of each document (an entity: its name and aliases)."""
    from kenning.store import search as search_sql  # numpy: only a fill needs it, never `status` (F10)

    msg_ids = [d["doc_id"] for d in docs if d["doc_kind"] == "message"]
    texts = {r["message_id"]: r["text_raw"] for r in raw_sql.message_texts(conn, msg_ids)}
    extras = search_sql.attachment_texts(conn, msg_ids)
    ent = {r["doc_rowid"]: r for r in search_sql.docs_by_rowid(conn, [d["doc_rowid"] for d in docs
                                                                      if d["doc_kind"] == "entity"]).values()}
    out: list[tuple[str | None, str | None]] = []
    for d in docs:
        if d["doc_kind"] == "message":
            out.append(message_text(d.get("role"), d["speaker"], texts.get(d["doc_id"]), extras.get(d["doc_id"], []),
                                    config))
        elif d["doc_kind"] == "entity" and d["doc_rowid"] in ent:
            e = ent[d["doc_rowid"]]
            aliases = orjson.loads(e.get("entity_aliases_json") or "[]")
            s = ", ".join(dict.fromkeys([e["entity_name"] or "", *aliases]))
            out.append((s, None) if s.strip() else (None, "empty"))
        else:
            out.append((None, "empty"))
    return out


def texts_of_items(conn, config: Config, item_ids: list[str]) -> dict[str, str | None]:
    """item_id (a doc_rowid) → the text its search document embeds now: the search space's items keep no text of
    their own (X2); a model migration re-embeds from this."""
    docs = vf_sql.docs_for_fill(conn, [int(i) for i in item_ids])
    return {str(d["doc_rowid"]): t for d, (t, _) in zip(docs, texts_for(conn, config, docs))}


def register_text_source(config: Config) -> None:
    """Tell the vector index where the search space's texts come from (it stores none for them, X2)."""
    from kenning.llm.index import register_text_source as register

    register(config.retrieval.vector.space, texts_of_items)


# -- one batch ----------------------------------------------------------------------------------------------
def embed_batch(conn, config: Config, idx: Any, docs: list[dict], counts: Counter, *, own_transaction: bool,
                before_write: Callable[[], Any] | None = None) -> None:
    """Embed ``docs`` and write their vectors (and skips). ``own_transaction``: embed first, outside any
    transaction, then write in one short transaction after re-checking that each document is unchanged (the fill);
    else everything joins the caller's transaction (the index stage)."""
    space = config.retrieval.vector.space
    register_text_source(config)
    texts = texts_for(conn, config, docs)
    items = [(str(d["doc_rowid"]), t, d["doc_kind"]) for d, (t, _) in zip(docs, texts) if t is not None]
    skips = [(d["doc_rowid"], d["content_sha256"], why) for d, (_, why) in zip(docs, texts) if why is not None]
    table = idx.ensure_active()
    vectors = model = None
    save: Callable[[], None] = lambda: None  # noqa: E731
    if own_transaction and items:
        emb = idx.embedder_for(table["model_id"], table["dimension"])
        if hasattr(emb, "embed_unsaved"):  # no cache rows: the vectors go to vec0, where the cache finds them (X1)
            vectors, _ = emb.embed_unsaved([t for _, t, _ in items])
        else:
            vectors = emb.embed([t for _, t, _ in items])
        model = table["model_id"]
    scope = _locked_transaction(conn, before_write) if own_transaction else contextlib.nullcontext()
    with scope:
        save()
        if own_transaction:  # a document changed or removed while we embedded: leave it to the next pass
            now = vf_sql.content_shas(conn, [d["doc_rowid"] for d in docs])
            fresh = {str(d["doc_rowid"]) for d in docs if now.get(d["doc_rowid"]) == d["content_sha256"]}
            keep = [n for n, it in enumerate(items) if it[0] in fresh]
            counts["vectors_stale_left"] += len(items) - len(keep)
            items = [items[n] for n in keep]
            vectors = [vectors[n] for n in keep] if vectors is not None else None
            skips = [s for s in skips if str(s[0]) in fresh]
        if skips:
            gone = vf_sql.with_vectors(conn, space, [s[0] for s in skips])
            if gone:
                counts["vectors_removed"] += idx.delete(space, [str(r) for r in gone])
            vf_sql.put_skips(conn, skips)
            for _, _, why in skips:
                counts[f"vectors_skipped_{why}"] += 1
        if items:
            vf_sql.drop_skips(conn, [int(i) for i, _, _ in items])
            counts["vectors_written"] += idx.upsert(space, items, vectors=vectors, model_id=model)


@contextlib.contextmanager
def _locked_transaction(conn, before_write: Callable[[], Any] | None) -> Iterator[None]:
    with (before_write() if before_write else contextlib.nullcontext()):
        with transaction(conn):
            yield


# -- the fill -----------------------------------------------------------------------------------------------
class FillBusy(RuntimeError):
    """Another fill of this vault is running (its pid in ``pid``)."""

    def __init__(self, pid: int | None):
        super().__init__(f"a vector fill of this vault is already running{f' (pid {pid})' if pid else ''}")
        self.pid = pid


def fill_lock_path(db: Path) -> Path:
    return lock_path(db, ".vectors.lock")


def running_fill(db: Path) -> int | None:
    """The pid of the fill running on ``db``, or None (read-only: a shared lock attempt, released at once)."""
    try:
        fd = os.open(fill_lock_path(db), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = holder_pid(fd)
            return -1 if pid is None else pid
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def fill_lock(db: Path) -> Iterator[None]:
    """One fill per vault; raises :class:`FillBusy` when another holds it."""
    with lock_file(fill_lock_path(db)) as fd:
        if fd is not None:  # None: read-only storage, the fill's first write says so
            if not try_lock(fd):
                raise FillBusy(holder_pid(fd))
            claim(fd)
        yield


@contextlib.contextmanager
def import_gate(db: Path, poll_s: float) -> Iterator[None]:
    """Hold the vault's import lock for one write: waits (without a limit) while an import runs, so a fill's
    write never fights an import's long stage transactions; an import starting meanwhile waits one write."""
    with lock_file(lock_path(db)) as fd:
        while fd is not None and not try_lock(fd):
            time.sleep(poll_s)
        yield


def lane_state(conn, config: Config, db: Path | None = None) -> dict[str, Any]:
    """How complete the vector lane is: ``{"enabled", "embedded", "total", "missing", "complete", "filling_pid"}``."""
    if not config.retrieval.vector.enabled:
        return {"enabled": False, "embedded": 0, "total": 0, "missing": 0, "complete": True, "filling_pid": None}
    have, total = vf_sql.lane_counts(conn, config.retrieval.vector.space)
    pid = running_fill(db) if db is not None else None
    return {"enabled": True, "embedded": have, "total": total, "missing": total - have,
            "complete": have >= total, "filling_pid": pid}


def lane_note(state: dict[str, Any]) -> str | None:
    """One line for search and status when the vector lane is incomplete."""
    if not state["enabled"] or state["complete"]:
        return None
    how = (f"filling in the background (pid {state['filling_pid']})" if state["filling_pid"]
           else "run `kenning reindex --vectors` to finish it")
    return (f"the vector lane is incomplete: {state['embedded']:,} of {state['total']:,} search documents have "
            f"vectors; the other lanes search everything ({how})")


def fill(conn, config: Config, db: Path | None, *, clock: Any = None, progress: Progress | None = None,
         max_batches: int | None = None) -> dict[str, int]:
    """Make every missing search vector, batch by batch (see the module docstring). Returns the counts.
    ``max_batches`` stops early (tests: a fill killed mid-way)."""
    from kenning.llm.index import VectorIndex

    vcfg, fcfg = config.retrieval.vector, config.vector_fill
    counts: Counter = Counter()
    if not vcfg.enabled:
        return {}
    lock = fill_lock(db) if db is not None else contextlib.nullcontext()
    gate = (lambda: import_gate(db, fcfg.lock_poll_s)) if db is not None else None
    with lock:
        idx = VectorIndex(conn, config, clock=clock)
        idx.ensure_active()
        with transaction(conn):
            counts["skips_pruned"] += vf_sql.prune_skips(conn)
        total = vf_sql.pending_count(conn, vcfg.space)
        done, batches = 0, 0
        if progress:
            progress(records=0, total=total, file="embeddings", unit="turns embedded")
        # what people said first (the user, the other people in a transcript, entities), assistant answers last:
        # the lane serves the turns that matter most soonest (Q6). Rounds repeat while they find work: an import
        # that finished meanwhile (and saw this fill running) added documents behind the cursor (Q14).
        found = True
        while found and (max_batches is None or batches < max_batches):
            found = False
            progress_mark = _written(counts)  # a round that writes nothing ends the fill (no busy loop)
            for assistant in (False, True):
                after = 0
                while max_batches is None or batches < max_batches:
                    docs = vf_sql.pending_docs(conn, vcfg.space, after, fcfg.batch_size, assistant=assistant)
                    if not docs:
                        break
                    found = True
                    after = docs[-1]["doc_rowid"]
                    embed_batch(conn, config, idx, docs, counts, own_transaction=True, before_write=gate)
                    batches += 1
                    done += len(docs)
                    if progress:
                        progress(records=min(done, total), total=max(total, done), file="embeddings",
                                 unit="turns embedded")
            found = found and _written(counts) > progress_mark
        counts["batches"] = batches
        counts["pending_after"] = vf_sql.pending_count(conn, vcfg.space)
    return {k: counts[k] for k in sorted(counts) if counts[k] or k == "pending_after"}


def _written(counts: Counter) -> int:
    return sum(n for k, n in counts.items() if k == "vectors_written" or k.startswith("vectors_skipped_"))


# -- the detached fill after an import ----------------------------------------------------------------------
def log_path(db: Path) -> Path:
    return db.with_name(db.name + ".vectors.log")


def spawn_background(db: Path, config_path: Path | None, as_of: str | None) -> int:
    """Start ``kenning reindex --vectors`` detached from this process (its own session; output to
    ``<vault>.vectors.log``, owner-only). Returns its pid."""
    args = [sys.executable, "-m", "kenning", "reindex", "--vectors", "--quiet", "--db", str(db)]
    if config_path is not None:
        args += ["--config", str(config_path)]
    if as_of:
        args += ["--as-of", as_of]
    log = os.open(log_path(db), os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
    try:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                             close_fds=True)
    finally:
        os.close(log)
    return p.pid
