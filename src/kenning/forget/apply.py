"""`kenning forget` (issue 23 §1): remove conversations and everything derived from them, in every layer, in one
transaction; then rewrite the file so their text is gone from its bytes.

``forget(conn, config, selector, value)`` previews by default: the whole removal runs inside a transaction that is
rolled back, so the counts shown are exactly what applying would do and nothing changes. ``apply=True`` commits,
records the forget log (what, when, counts — never content), rewrites the knowledge event log from the redacted
history, and (``forget.vacuum``) runs ``PRAGMA secure_delete`` + ``VACUUM`` + a truncating WAL checkpoint."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Any

import apsw
import orjson

from kenning.config import Config
from kenning.forget.registry import COLLECT, REGISTRY, Delete, Step, Update
from kenning.sources.ids import IdFactory
from kenning.sources.timestamps import format_utc, now_utc
from kenning.store import forget as fsql
from kenning.store.connection import transaction, vacuum

SELECTORS = ("conversation", "source", "between", "matching")
REDACTED = "(forgotten)"


class ForgetError(ValueError):
    """A selector that cannot be used, phrased for the person."""


class _Rollback(Exception):
    """Raised inside the transaction to undo a preview."""


@dataclass
class ForgetReport:
    selector: str
    applied: bool
    conversations: list[dict[str, Any]] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)       # table → rows removed
    redacted: dict[str, int] = field(default_factory=dict)      # table → rows rewritten
    knowledge: dict[str, int] = field(default_factory=dict)
    forget_id: str | None = None
    vacuumed: bool = False
    # the forgotten keys by kind (ids only), kept in memory for callers that check the removal; never stored
    keys: dict[str, set[str]] = field(default_factory=dict, repr=False)

    @property
    def messages(self) -> int:
        return self.removed.get("messages", 0)

    def as_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "selector": self.selector, "forget_id": self.forget_id,
                "conversations": self.conversations, "messages": self.messages,
                "removed": dict(sorted(self.removed.items())), "redacted": dict(sorted(self.redacted.items())),
                "knowledge": self.knowledge, "vacuumed": self.vacuumed}


# ---- selection -------------------------------------------------------------------------------------------------

def _day(value: str, end: bool) -> str:
    import datetime as dt

    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):
        raise ForgetError(f"--between wants dates like 2023-01-31; {value!r} is not one") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    if end and "T" not in value:
        t = t + dt.timedelta(days=1)  # a plain end date is inclusive: the whole day
    return format_utc(t.astimezone(dt.timezone.utc))


def select(conn: apsw.Connection, selector: str, value: Any) -> list[str]:
    """Which conversations a selector names (decision P1: the conversation is the unit of forgetting)."""
    # a note that never became a conversation (a placeholder) is forgotten by the same selectors (H6)
    if selector == "conversation":
        return _union(fsql.conversations_by_ref(conn, str(value)), fsql.notes_by_ref(conn, str(value)))
    if selector == "source":
        return _union(fsql.conversations_by_source(conn, str(value)), fsql.notes_by_source(conn, str(value)))
    if selector == "between":
        start, end = value
        lo, hi = _day(start, False), _day(end, True)
        if lo >= hi:
            raise ForgetError(f"--between {start} {end}: the first date must come before the second")
        return fsql.conversations_between(conn, lo, hi)
    if selector == "matching":
        phrase = str(value).strip()
        if len(phrase) < 3:
            raise ForgetError("--matching wants a phrase of at least 3 characters")
        return _union(fsql.conversations_matching(conn, phrase), fsql.notes_matching(conn, phrase))
    raise ForgetError(f"unknown selector {selector!r}; one of {', '.join(SELECTORS)}")


def _union(a: list[str], b: list[str]) -> list[str]:
    return sorted(set(a) | set(b))


# ---- the removal -------------------------------------------------------------------------------------------------

def forget(conn: apsw.Connection, config: Config, selector: str, value: Any, *, apply: bool = False,
           now: str | None = None, vacuum: bool | None = None) -> ForgetReport:
    conversation_ids = select(conn, selector, value)
    report = ForgetReport(selector, applied=False)
    report.conversations = fsql.conversation_summaries(conn, conversation_ids)
    if not conversation_ids:
        return report
    now = now or now_utc()
    phrase = str(value).strip() if selector == "matching" else None
    try:
        with transaction(conn):
            _remove(conn, config, conversation_ids, report, now, phrase)
            if apply:
                ids = IdFactory(config.ids.id_namespace)
                report.forget_id = ids.make("forget", now, selector, sorted(conversation_ids))
                fsql.record_forget(conn, {
                    "forget_id": report.forget_id, "forgotten_at_utc": now, "selector": selector,
                    "conversations": len(conversation_ids), "messages": report.messages,
                    "counts_json": orjson.dumps({"removed": dict(sorted(report.removed.items())),
                                                 "redacted": dict(sorted(report.redacted.items())),
                                                 "knowledge": report.knowledge}).decode()}, conversation_ids)
            else:
                raise _Rollback
    except _Rollback:
        pass
    finally:
        fsql.drop_keys(conn)
    if not apply:
        return report
    report.applied = True
    _rewrite_event_log(conn, config)
    if config.forget.vacuum if vacuum is None else vacuum:
        report.vacuumed = scrub(conn)
    return report


def scrub(conn: apsw.Connection) -> bool:
    """Rewrite the file and mark the forgets it covers; False when another process holds the vault open in a read
    (the rewritten pages then wait in the WAL and the old ones stay in the file): the rows are gone from every
    read, and `kenning forget --scrub` finishes the rewrite later."""
    try:
        if not scrub_file(conn):
            return False
    except apsw.BusyError:
        return False
    with transaction(conn):
        fsql.mark_all_vacuumed(conn)
    return _checkpoint(conn)


def _remove(conn: apsw.Connection, config: Config, conversation_ids: list[str], report: ForgetReport, now: str,
            phrase: str | None, keep_raw: bool = False, retract: Any = None) -> None:
    fsql.secure_delete(conn)  # freed pages are zeroed as rows go (VACUUM then compacts)
    fsql.start_keys(conn)
    fsql.add_keys(conn, "conversation", conversation_ids)
    fsql.collect(conn, "export_ref", "SELECT export_conversation_id FROM conversations WHERE conversation_id IN "
                                     "{conversation}")
    for kind, sql in COLLECT:
        if all(fsql.table_exists(conn, t) for t in _tables_of(sql)):
            fsql.collect(conn, kind, sql)
            if keep_raw and kind == "observation":
                # the funnel's own "skipped: incognito" records are the mode at work, not derived content (I72)
                fsql.drop_incognito_skip_observations(conn)
    if phrase:
        fsql.set_phrase(conn, phrase)
    _collect_needles(conn, phrase)
    steps = _Steps(conn, config, report, now, phrase, retract if keep_raw else None, keep_raw=keep_raw)
    done_steps: set[str] = set()
    for entry in REGISTRY:
        if not fsql.table_exists(conn, entry.table):
            continue  # a vault whose schema has not got this table (an older or smaller one)
        if keep_raw and entry.table in KEPT_WITH_RAW:
            continue
        if isinstance(entry, Step):
            if entry.step not in done_steps:
                done_steps.add(entry.step)
                getattr(steps, entry.step)()
        elif isinstance(entry, Delete):
            n = fsql.delete_where(conn, entry.table, entry.where)
            _add(report.removed, entry.table, n)
        elif isinstance(entry, Update):
            n = fsql.update_where(conn, entry.table, entry.set_sql, entry.where)
            _add(report.redacted, entry.table, n)
    report.keys = fsql.all_keys(conn)


# What `remove_derived` (keep-raw mode: incognito turned on later, I72) leaves: the raw layer, the stage log and the
# purge mark itself. The node store is not in it, but its step retracts through the writer instead of deleting (I12).
KEPT_WITH_RAW = frozenset({"raw_archive", "rejects", "source_conversations", "transcript_participants",
                           "message_parts", "messages", "conversations", "runs", "run_events", "incognito_purges"})


def remove_derived(conn: apsw.Connection, config: Config, conversation_ids: list[str], now: str,
                   retract: Any) -> ForgetReport:
    """Keep-raw mode of the registry (issue 18, I72): everything derived from these conversations goes from every
    registered table, in the caller's transaction; their raw text, the import bookkeeping and the stage log stay.
    The node store is handed to ``retract(node_ids, provenance_ids)`` (the intake's writer path: retract, or withdraw
    provenance, one commit per node) instead of the forget's deletion, so its history keeps saying what happened.
    With ``retract=None`` (incognito ``keep: drop``, I171) the node store goes as in a forget: nodes only this content
    supports are deleted, the others lose its evidence, and the history keeps none of its text."""
    report = ForgetReport("incognito", applied=True)
    if not conversation_ids:
        return report
    try:
        _remove(conn, config, sorted(conversation_ids), report, now, None, keep_raw=True, retract=retract)
    finally:
        fsql.drop_keys(conn)
    return report


_SENTENCE = re.compile(r"[^.!?\n]{20,}")
MAX_NEEDLES = 20_000


def _collect_needles(conn: apsw.Connection, phrase: str | None) -> None:
    """Pieces of the forgotten text as a JSON log (a model call's request) would hold them: the head of each
    sentence of 20+ characters of every forgotten message (JSON-escaped like JCS: non-ASCII kept), the titles and,
    for --matching, the phrase. A model-call log holding one is forgotten with the messages (decision P11)."""
    found: set[str] = set()
    for (text,) in fsql.forgotten_texts(conn):
        for m in _SENTENCE.finditer(text):
            s = m.group(0).strip()
            if len(s) >= 20:
                found.add(s[:40])
        if len(found) >= MAX_NEEDLES:
            break
    if phrase:
        found.add(phrase)
    fsql.add_keys(conn, "needle", sorted(orjson.dumps(s).decode("utf-8")[1:-1] for s in found))


def _tables_of(sql: str) -> list[str]:
    return [t for t in re.findall(r"\bFROM\s+([a-z_0-9]+)", sql) if t != "temp"]


def _add(d: dict[str, int], key: str, n: int) -> None:
    if n:
        d[key] = d.get(key, 0) + n


class _Steps:
    """The tables a registry ``Step`` names: each method owns its tables' removal."""

    def __init__(self, conn: apsw.Connection, config: Config, report: ForgetReport, now: str, phrase: str | None,
                 retract: Any = None, keep_raw: bool = False):
        self.conn, self.config, self.report, self.now, self.phrase = conn, config, report, now, phrase
        self.node_ids_touched: set[str] = set()
        self.retract = retract  # keep-raw mode (I72): the node store goes through this instead of deletion
        # keep-raw mode without ``retract`` (incognito ``keep: drop``, I171): the node store is deleted and its
        # history redacted like a forget's, while the funnel's incognito skips stay
        self.keep_raw = keep_raw

    # -- search index -----------------------------------------------------------------------------------------
    def search(self) -> None:
        from kenning.store import search as search_sql

        rowids = fsql.search_doc_rowids(self.conn)
        if rowids:
            search_sql.delete_docs(self.conn, rowids)
            _add(self.report.removed, "search_docs", len(rowids))
            fsql.fts_optimize(self.conn, "search_fts")

    # -- vectors and the embedding cache ------------------------------------------------------------------------
    def vectors(self) -> None:
        from kenning.store import vectors as vsql

        conn = self.conn
        fsql.collect(conn, "vector", "SELECT vid FROM vector_items WHERE (space = 'search' AND item_id IN "
                                     "{search_doc}) OR (space = 'beliefs' AND item_id IN {wiki_belief}) OR "
                                     "(space = 'self_belief_nodes' AND item_id IN {self_belief}) OR "
                                     "(space = 'nodes' AND item_id IN {node}) OR "
                                     "(space = 'threads' AND item_id IN {thread})")
        # the keys are 16 bytes of each sha256 (Z3), collected as their 32 lowercase hex digits
        fsql.collect(conn, "text_sha", "SELECT lower(hex(text_sha256)) FROM vector_items WHERE vid IN {vector}")
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest()[:32] for t in fsql.forgotten_message_texts(conn)]
        fsql.add_keys(conn, "text_sha", shas)
        vids = fsql.vector_vids(conn)
        for name in fsql.vector_table_names(conn):
            vsql.delete_vectors(conn, name, vids)
        vsql.delete_items(conn, vids)
        _add(self.report.removed, "vector_items", len(vids))
        n = fsql.delete_where(conn, "embedding_cache", "lower(hex(text_sha256)) IN {text_sha} AND text_sha256 "
                                                       "NOT IN (SELECT text_sha256 FROM vector_items)")
        _add(self.report.removed, "embedding_cache", n)

    # -- the DOC72 node store, through the single writer ---------------------------------------------------------
    def knowledge(self) -> None:
        from kenning.knowledge.writer import KnowledgeWriter
        from kenning.pipeline.clock import Clock

        conn = self.conn
        if self.retract is not None:
            self._knowledge_keep_raw()
            return
        forgotten_prov = fsql.forgotten_provenance_ids(conn)
        messages = set(fsql.keys(conn, "message"))
        assertions = set(fsql.keys(conn, "assertion"))

        def edge_verdict(edge: dict[str, Any]) -> bool | list[str]:
            payload = edge.get("payload") or {}
            ref = str(payload.get("quote_ref") or "")
            if ref.startswith("message:") and ref[8:].split("#", 1)[0] in messages:
                return True
            ids = payload.get("assertion_ids") or []
            left = [a for a in ids if a not in assertions]
            if ids and not left:
                return True
            return left if len(left) != len(ids) else False

        needles = fsql.forgotten_needles(conn)

        def tainted(doc: dict[str, Any]) -> bool:
            text = " ".join(orjson.dumps(doc.get("payload") or {}).decode("utf-8").split())
            return any(n in text for n in needles)

        summary = ("memory mode incognito (keep: drop): what it taught removed" if self.keep_raw
                   else "forget: sources removed at the user's request")
        writer = KnowledgeWriter(conn, self.config, clock=Clock(self.now), export_log=False)
        res = writer.forget(fsql.nodes_citing(conn), lambda pid, e: pid in forgotten_prov or
                            e.get("message_id") in messages, edge_verdict, summary=summary, tainted=tainted)
        deleted, changed = res.nodes_deleted, res.nodes_changed
        fsql.add_keys(conn, "node", deleted + changed)   # their vectors embed the removed quotes
        k = self.report.knowledge
        k.update(nodes_deleted=len(deleted), nodes_changed=len(changed), edges_deleted=len(res.edges_deleted),
                 edges_changed=len(res.edges_changed), provenance_removed=len(res.provenance_removed))
        _add(self.report.removed, "nodes", len(deleted))
        _add(self.report.removed, "edges", len(res.edges_deleted))
        _add(self.report.removed, "provenance_entries", len(res.provenance_removed))
        self._redact_history(deleted, res.edges_deleted, changed, res.provenance_removed,
                             res.commit.commit_id if res.commit else None, summary)
        affected = sorted(set(deleted) | set(changed))
        _add(self.report.removed, "extraction_outcome_events", fsql.delete_outcome_events_of(conn, deleted))
        self._derived_of_nodes(affected, keep_incognito_skips=self.keep_raw)

    def _knowledge_keep_raw(self) -> None:
        """Keep-raw mode (I72): the nodes citing these messages are retracted or lose that evidence through the
        caller's writer path; what quotes or caches them (packets, pages, vectors, audits) goes like a forget's."""
        conn = self.conn
        affected = fsql.nodes_citing(conn)
        self.report.knowledge.update(self.retract(affected, fsql.forgotten_provenance_ids(conn)) or {})
        fsql.add_keys(conn, "node", affected)   # their vectors embed the withdrawn quotes
        self._derived_of_nodes(affected, keep_incognito_skips=True)

    def _derived_of_nodes(self, affected: list[str], keep_incognito_skips: bool = False) -> None:
        conn = self.conn
        fsql.add_keys(conn, "affected_node", affected)
        if fsql.table_exists(conn, "context_packets"):
            fsql.collect(conn, "packet", "SELECT packet_id FROM context_packets p WHERE primary_node_id IN "
                                         "{affected_node} OR EXISTS (SELECT 1 FROM json_each(p.gate_node_ids) g "
                                         "WHERE g.value IN {affected_node}) OR EXISTS (SELECT 1 FROM "
                                         "json_each(p.referenced_node_ids) r WHERE r.value IN {affected_node}) "
                                         # a packet whose prior-context card quotes a forgotten thread (I79)
                                         "OR json_extract(p.telemetry, '$.prior_context_thread_id') IN {thread}")
            _add(self.report.removed, "context_session_items", fsql.delete_where(
                conn, "context_session_items", "packet_id IN {packet} OR item_id IN {affected_node} "
                                               "OR item_id IN {thread}"))
            _add(self.report.removed, "context_packets", fsql.delete_where(conn, "context_packets",
                                                                           "packet_id IN {packet}"))
        if fsql.table_exists(conn, "compiled_truth"):
            # a rendered page quotes its node's provenance and names its neighbours: the pages of affected nodes
            # and of nodes whose render input names one are rebuilt on demand
            _add(self.report.removed, "compiled_truth", fsql.delete_where(
                conn, "compiled_truth", "node_id IN {affected_node} OR EXISTS (SELECT 1 FROM temp.forget_keys k "
                                        "WHERE k.kind = 'affected_node' AND instr(compiled_truth.render_input, k.id) "
                                        "> 0)"))
        if fsql.table_exists(conn, "extraction_audit"):
            keep = " AND extraction_audit.skip_reason IS NOT 'incognito_mode'" if keep_incognito_skips else ""
            # the rows behind the view (Y20): a delete through the view's trigger would count no rows
            _add(self.report.removed, "extraction_audit", fsql.delete_where(
                conn, "extraction_audit_rows", "extraction_id IN (SELECT extraction_id FROM extraction_audit WHERE "
                                          "(EXISTS (SELECT 1 FROM temp.forget_keys k WHERE k.kind IN "
                                          "('message', 'conversation') AND instr(extraction_audit.source_content_ref,"
                                          " k.id) > 0) OR EXISTS (SELECT 1 FROM json_each(extraction_audit."
                                          "knowledge_commit_ids) c WHERE c.value IN {redacted_commit}))" + keep + ")"))

    def _redact_history(self, deleted: list[str], edges_deleted: list[str], changed: list[str],
                        prov_removed: set[str], forget_commit: str | None,
                        summary: str = "forget: sources removed at the user's request") -> None:
        """Decision P6: the history must not keep forgotten text. Every mutation of a deleted node or edge leaves
        the history (so replaying the log never makes them); in the mutations of a surviving node, the patch
        operations that added or removed a forgotten provenance entry go. Commits that lost operations get a
        neutral change summary and are marked not reversible."""
        from kenning.knowledge.docs import is_edge_key, parse_edge_key

        conn = self.conn
        gone_nodes = set(deleted)
        targets = set(deleted) | set(edges_deleted)
        for t in fsql.mutation_targets(conn):
            if is_edge_key(t):
                src, _rel, tgt, _start = parse_edge_key(t)
                if src in gone_nodes or tgt in gone_nodes:
                    targets.add(t)
        commits = set(fsql.delete_mutations_of(conn, sorted(targets)))
        rewritten = 0
        for m in fsql.mutations_of(conn, changed):
            patch, reverse = orjson.loads(m["patch"]), orjson.loads(m["reverse_patch"])
            new_p, new_r = _strip_provenance(patch, prov_removed), _strip_provenance(reverse, prov_removed)
            if (new_p, new_r) != (patch, reverse):
                fsql.set_mutation_patches(conn, m["commit_id"], m["ordinal"], orjson.dumps(new_p).decode(),
                                          orjson.dumps(new_r).decode())
                commits.add(m["commit_id"])
                rewritten += 1
        if forget_commit:
            commits.add(forget_commit)
        fsql.add_keys(conn, "redacted_commit", sorted(commits))
        _add(self.report.redacted, "knowledge_commit_mutations", rewritten)
        _add(self.report.redacted, "knowledge_commits", fsql.redact_commits(conn, sorted(commits - {forget_commit}),
                                                                            REDACTED))
        if forget_commit:
            fsql.redact_commits(conn, [forget_commit], summary)
        _add(self.report.removed, "knowledge_commit_mutations(history)", len(targets))

    # -- surviving entities: names used only in the forgotten messages ------------------------------------------
    def entity_aliases(self) -> None:
        from kenning.detect.keys import norm_name

        conn = self.conn
        n = 0
        for e in fsql.surviving_entities_with_forgotten_mentions(conn):
            aliases = orjson.loads(e["aliases_json"] or "[]")
            if not isinstance(aliases, list):
                continue
            kept_surfaces = {norm_name(x) for x in e["kept_surfaces"]}
            gone_surfaces = {norm_name(x) for x in e["gone_surfaces"]}
            drop = [a for a in aliases if isinstance(a, str) and norm_name(a) in gone_surfaces
                    and norm_name(a) not in kept_surfaces and norm_name(a) != norm_name(e["canonical_name"] or "")]
            if not drop:
                continue
            fsql.set_entity_aliases(conn, e["entity_id"], orjson.dumps([a for a in aliases if a not in drop]).decode(),
                                    [norm_name(a) for a in drop])
            fsql.add_keys(conn, "renamed_entity", [e["entity_id"]])
            n += 1
        fsql.collect(conn, "search_doc", "SELECT doc_rowid FROM search_docs WHERE doc_kind = 'entity' AND doc_id IN "
                                         "{renamed_entity}")
        _add(self.report.redacted, "entities", n)

    # -- FTS5 indexes whose rows follow by trigger: merged so deleted tokens leave the pages ----------------------
    def fts(self) -> None:
        for table in ("wiki_beliefs_fts", "fts_nodes"):
            if fsql.table_exists(self.conn, table):
                fsql.fts_optimize(self.conn, table)

    # -- the personal lexicon --------------------------------------------------------------------------------------
    def lexicon(self) -> None:
        """A term candidate keeps the occurrences outside the forgotten messages; one left with none goes (with
        its selected term and its search name) — decision P7."""
        conn = self.conn
        messages = set(fsql.keys(conn, "message"))
        gone, rewritten = [], 0
        for cid, ev in fsql.lexicon_candidates_citing_forgotten(conn):
            data = orjson.loads(ev or "{}")
            occ = data.get("occurrences") or []
            left = [o for o in occ if not (isinstance(o, list) and o and o[0] in messages)]
            if not left:
                gone.append(cid)
            elif len(left) != len(occ):
                data["occurrences"] = left
                fsql.set_lexicon_candidate_evidence(conn, cid, orjson.dumps(data).decode())
                rewritten += 1
        fsql.add_keys(conn, "lexicon_candidate", gone)
        fsql.collect(conn, "lexicon_term", "SELECT term_id FROM lexicon_terms WHERE candidate_id IN "
                                           "{lexicon_candidate}")
        _add(self.report.removed, "search_entity_names", fsql.delete_where(
            conn, "search_entity_names", "source = 'lexicon' AND name_norm IN (SELECT lower(canonical_surface) "
                                         "FROM lexicon_terms WHERE term_id IN {lexicon_term})"))
        _add(self.report.removed, "lexicon_terms", fsql.delete_where(conn, "lexicon_terms",
                                                                     "term_id IN {lexicon_term}"))
        _add(self.report.removed, "lexicon_term_candidates", fsql.delete_where(
            conn, "lexicon_term_candidates", "candidate_id IN {lexicon_candidate}"))
        _add(self.report.redacted, "lexicon_term_candidates", rewritten)

    # -- the seed-001 graph: stage 6 is a full rebuild from the tables, so rebuild it from what is left -------------
    def graph(self) -> None:
        from kenning.graph.build import GraphBuilder, build_core
        from kenning.graph.profile import build_profiles
        from kenning.store import graph as gsql

        conn = self.conn
        if not fsql.count_where(conn, "graph_nodes", "1"):
            return
        if self.retract is not None and not (fsql.keys(conn, "assertion") or fsql.keys(conn, "entity")):
            return  # keep-raw mode with no claim or entity gone: the graph is already what is left
        before_n = fsql.count_where(conn, "graph_nodes", "1")
        gcfg = self.config.graph
        data = gsql.load_inputs(conn)
        g = GraphBuilder(IdFactory(self.config.ids.id_namespace))
        build_core(g, data, gcfg)
        if gcfg.profile.enable_temporal_profiles:
            build_profiles(g, data, gcfg.profile, config=self.config, ctx=None)
        nodes, edges = g.rows()
        gsql.replace_graph(conn, nodes, edges)
        _add(self.report.removed, "graph_nodes", max(0, before_n - len(nodes)))

    # -- rejects of the forgotten conversations (and, for --matching, any reject holding the phrase) ----------------
    def rejects(self) -> None:
        where = "record_ref IN {conversation} OR record_ref IN {export_ref}"
        if self.phrase:
            where += (" OR instr(lower(raw_text), (SELECT p FROM temp.forget_phrase)) > 0 "
                      "OR instr(lower(message), (SELECT p FROM temp.forget_phrase)) > 0")
        _add(self.report.removed, "rejects", fsql.delete_where(self.conn, "rejects", where))

    # -- the stage log -----------------------------------------------------------------------------------------------
    def runs(self) -> None:
        conn = self.conn
        forgotten = set(fsql.keys(conn, "conversation"))
        n = 0
        for r in fsql.runs_naming_conversations(conn):
            counts = orjson.loads(r["counts_json"])
            if isinstance(counts, dict) and isinstance(counts.get("changed"), list):
                counts["changed"] = [c for c in counts["changed"]
                                     if not (isinstance(c, dict) and c.get("conversation_id") in forgotten)]
                fsql.set_run_counts(conn, r["run_id"], orjson.dumps(counts).decode())
                n += 1
        _add(self.report.redacted, "runs", n)
        # an event names a forgotten row in its context (any id: conversation, message, entity, assertion …) or a
        # forgotten conversation in its message; for --matching, an event quoting the phrase
        where = ("(json_valid(run_events.context_json) AND EXISTS (SELECT 1 FROM json_tree(run_events.context_json) "
                 "j WHERE j.atom IN (SELECT id FROM temp.forget_keys WHERE kind <> 'needle'))) OR EXISTS (SELECT 1 "
                 "FROM temp.forget_keys k WHERE k.kind IN ('conversation', 'export_ref') "
                 "AND instr(run_events.message, k.id) > 0)")
        if self.phrase:
            where += " OR instr(lower(run_events.message), (SELECT p FROM temp.forget_phrase)) > 0"
        _add(self.report.redacted, "run_events", fsql.update_where(
            conn, "run_events", f"message = code || ' {REDACTED}', context_json = NULL", where))


def _strip_provenance(patch: list[dict[str, Any]], gone: set[str]) -> list[dict[str, Any]]:
    out = []
    for op in patch:
        parts = op.get("path", "").split("/")
        if len(parts) >= 3 and parts[1] == "provenance" and parts[2] in gone:
            continue
        if "value" in op:
            op = dict(op, value=_drop_keys(op["value"], gone, parts))
        out.append(op)
    return out


def _drop_keys(value: Any, gone: set[str], parts: list[str]) -> Any:
    if not isinstance(value, dict):
        return value
    if parts[-1] == "provenance":
        return {k: v for k, v in value.items() if k not in gone}
    if "provenance" in value and isinstance(value["provenance"], dict):
        return dict(value, provenance={k: v for k, v in value["provenance"].items() if k not in gone})
    return value


# ---- after the commit ------------------------------------------------------------------------------------------

def _rewrite_event_log(conn: apsw.Connection, config: Config) -> None:
    """The exported log is rewritten from the redacted history (atomically, owner-only)."""
    from kenning.knowledge import eventlog

    path = eventlog.log_path(conn, config)
    if path is None or not path.exists():
        return
    tmp = path.with_name(path.name + ".forget-tmp")
    if tmp.exists():
        tmp.unlink()
    eventlog._KNOWN.pop(str(path), None)
    eventlog.export_to(conn, tmp)
    if not tmp.exists():  # no commits left at all
        tmp.write_bytes(b"")
        os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    eventlog._KNOWN.pop(str(path), None)
    eventlog._KNOWN.pop(str(tmp), None)


def _checkpoint(conn: apsw.Connection) -> bool:
    """Copy the WAL into the file and truncate it; False when a reader kept it from finishing."""
    return fsql.checkpoint_truncate(conn)


def scrub_file(conn: apsw.Connection) -> bool:
    """Rewrite the vault so freed pages (and their text) are gone, and empty the WAL (decision P5). True when the
    file itself now holds only the rewritten pages."""
    fsql.secure_delete(conn)
    if not _checkpoint(conn):
        return False
    vacuum(conn)
    return _checkpoint(conn)

