"""The forget registry (issue 23 §1, decision P2): every table that holds a person's words or something derived
from them, and how its rows key to the forgotten conversations.

Three lists, applied in order:

* ``COLLECT`` — (kind, SELECT): widens the forgotten key set (``temp.forget_keys``) from conversations to
  messages, assertions, experiences, beliefs, entities, search documents …  Each SELECT may use ``{kind}``
  placeholders for the keys collected before it.
* ``REGISTRY`` — one entry per table: ``Delete`` (rows matching a condition go), ``Update`` (a pointer to a
  forgotten row is cleared, a JSON list shortened) or ``Step`` (a named Python step in ``kenning.forget.apply``
  owns the table: the search index, vectors, the DOC72 node store through its single writer, the seed-001 graph
  rebuild …). Dependents come before what they reference (foreign keys are on).
* ``NO_USER_TEXT`` — tables that hold no user text (configuration, run bookkeeping, numeric state).

A table added later gets one ``Delete``/``Step`` entry here (or a place in ``NO_USER_TEXT``): the test
``tests/forget/test_registry.py`` fails while a table with a text column is in neither."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Delete:
    table: str
    where: str


@dataclass(frozen=True)
class Update:
    table: str
    set_sql: str
    where: str


@dataclass(frozen=True)
class Step:
    """A table a named step of ``kenning.forget.apply`` handles (listed here so coverage can be checked)."""
    table: str
    step: str


COLLECT: list[tuple[str, str]] = [
    ("message", "SELECT message_id FROM messages WHERE conversation_id IN {conversation}"),
    ("assertion", "SELECT assertion_id FROM assertions WHERE message_id IN {message}"),
    ("retraction", "SELECT retraction_id FROM retractions WHERE retraction_message_id IN {message}"),
    ("conflict_group", "SELECT DISTINCT conflict_group_id FROM conflict_members WHERE assertion_id IN {assertion}"),
    ("candidate", "SELECT candidate_id FROM entity_mention_candidates WHERE message_id IN {message}"),
    # an entity goes when every piece of evidence for it goes: no mention and no claim left outside the forgotten
    # messages (the vault owner's SELF entity stays)
    ("entity", "SELECT e.entity_id FROM entities e WHERE e.entity_key <> '__SELF__' AND e.entity_id IN ("
               "SELECT entity_id FROM entity_mentions WHERE message_id IN {message} UNION "
               "SELECT subject_entity_id FROM assertions WHERE assertion_id IN {assertion} UNION "
               "SELECT object_entity_id FROM assertions WHERE assertion_id IN {assertion}) "
               "AND NOT EXISTS (SELECT 1 FROM entity_mentions m WHERE m.entity_id = e.entity_id "
               "AND m.message_id NOT IN {message}) "
               "AND NOT EXISTS (SELECT 1 FROM assertions a WHERE a.assertion_id NOT IN {assertion} "
               "AND (a.subject_entity_id = e.entity_id OR a.object_entity_id = e.entity_id))"),
    ("experience", "SELECT experience_id FROM experiences WHERE message_id IN {message} "
                   "OR conversation_id IN {conversation}"),
    ("occurrence", "SELECT occurrence_id FROM belief_occurrences WHERE message_id IN {message} "
                   "OR source_experience_id IN {experience}"),
    # seed 000: a belief whose every occurrence is forgotten goes too
    ("self_belief", "SELECT DISTINCT o.belief_id FROM belief_occurrences o WHERE o.occurrence_id IN {occurrence} "
                    "AND NOT EXISTS (SELECT 1 FROM belief_occurrences x WHERE x.belief_id = o.belief_id "
                    "AND x.occurrence_id NOT IN {occurrence})"),
    ("document", "SELECT id FROM documents WHERE conversation_id IN {conversation}"),
    ("claim", "SELECT id FROM wiki_claim_provenance WHERE message_id IN {message} "
              "OR conversation_id IN {conversation} OR document_id IN {document}"),
    # seed 002: a ledger belief goes when all its provenance goes (or its page does); others lose the entries
    ("wiki_belief", "SELECT b.belief_id FROM wiki_beliefs b WHERE b.wiki_document_id IN {document} OR ("
                    "EXISTS (SELECT 1 FROM belief_provenance p WHERE p.belief_id = b.belief_id "
                    "AND p.provenance_id IN {claim}) AND NOT EXISTS (SELECT 1 FROM belief_provenance p "
                    "WHERE p.belief_id = b.belief_id AND p.provenance_id NOT IN {claim}))"),
    # ---- DOC72 intake (issue 18): observations of forgotten units, their decisions and queue rows -------------
    ("observation", "SELECT observation_id FROM intake_observations WHERE conversation_id IN {conversation} "
                    "OR message_id IN {message}"),
    ("pending", "SELECT pending_id FROM pending_extractions WHERE observation_id IN {observation}"),
    # ---- back-links (issue 20): a message is one observation (G3), its conversation the work context ---------
    ("mention", "SELECT mention_id FROM mention_observations_derived WHERE observation_id IN {message} "
                "OR work_context_id IN {conversation}"),
    # a bundle any forgotten mention supported or contradicted goes; the next `backlinks` run re-aggregates what
    # the remaining mentions support (P12)
    ("bundle", "SELECT DISTINCT b.evidence_bundle_id FROM evidence_bundles_derived b, json_each(b.support_mention_ids) "
               "j WHERE j.value IN {mention} UNION SELECT DISTINCT b.evidence_bundle_id FROM evidence_bundles_derived "
               "b, json_each(b.contradiction_mention_ids) j WHERE j.value IN {mention}"),
    ("entity_candidate", "SELECT DISTINCT c.candidate_id FROM entity_creation_candidates c, "
                         "json_each(c.source_observation_ids) j WHERE j.value IN {message}"),
    # ---- conversation corpus (issue 18 §25): a thread per conversation (a note's conversation id is its note id)
    ("thread", "SELECT thread_id FROM thread_builds WHERE conversation_id IN {conversation} "
               "UNION SELECT thread_id FROM conversation_threads WHERE thread_id IN {conversation}"),
    ("search_doc", "SELECT doc_rowid FROM search_docs WHERE (doc_kind = 'message' AND doc_id IN {message}) "
                   "OR conversation_id IN {conversation} OR (doc_kind = 'entity' AND doc_id IN {entity})"),
]

_CLAIM_IDS_LEFT = ("(SELECT json_group_array(value) FROM json_each(wiki_beliefs.provenance_ids) "
                   "WHERE value NOT IN {claim})")

REGISTRY: list[Delete | Update | Step] = [
    # ---- delivery caches and logs that quote what they were built from --------------------------------------
    Step("context_packets", "knowledge"),
    Step("context_session_items", "knowledge"),
    Step("extraction_audit_rows", "knowledge"),   # the view extraction_audit (Y20)
    # ---- nightly upkeep (issue 20 parts 4–6): review items and fold verdicts name the nodes they are about ----
    Delete("maintain_queue", "EXISTS (SELECT 1 FROM json_each(maintain_queue.node_ids) j "
                             "WHERE j.value IN {affected_node})"),
    Delete("fold_decisions", "node_a_id IN {affected_node} OR node_b_id IN {affected_node}"),
    # a surviving entity drops the names only forgotten messages used (P7); its search document is re-made by the
    # next index run (it would otherwise keep the dropped names)
    Step("entities", "entity_aliases"),
    # ---- DOC72 intake, back-links and threads (issues 18, 20; P12) ---------------------------------------------
    Delete("mining_rejected_options", "conversation_id IN {conversation} OR suggestion_message_id IN {message} "
                                      "OR rejection_message_id IN {message}"),
    Delete("pending_extraction_audits", "pending_id IN {pending}"),
    Delete("pending_extractions", "pending_id IN {pending}"),
    Delete("intake_dispatch_decision_rows", "observation_id IN {observation}"),   # the view (Y20)
    Delete("intake_observation_rows", "observation_id IN {observation}"),   # the view intake_observations (Y2)
    Delete("review_queue_derived", "primary_ref IN {bundle} OR primary_ref IN {entity_candidate} "
                                   "OR primary_ref IN {mention}"),
    Delete("backlink_tier4_queue", "mention_id IN {mention} OR observation_id IN {message}"),
    Delete("evidence_bundles_derived", "evidence_bundle_id IN {bundle}"),
    Delete("entity_creation_candidates", "candidate_id IN {entity_candidate} AND NOT EXISTS (SELECT 1 FROM "
                                         "json_each(entity_creation_candidates.source_observation_ids) j "
                                         "WHERE j.value NOT IN {message})"),
    Update("entity_creation_candidates", "source_observation_ids = (SELECT json_group_array(value) FROM "
                                         "json_each(entity_creation_candidates.source_observation_ids) "
                                         "WHERE value NOT IN {message})", "candidate_id IN {entity_candidate}"),
    Delete("mention_observations_derived", "mention_id IN {mention}"),
    Delete("backlink_observations", "observation_id IN {message}"),
    # a person's verdict quoting a span: goes with --matching when it quotes the phrase (P12)
    Delete("backlink_rejections_derived", "EXISTS (SELECT 1 FROM temp.forget_keys k WHERE k.kind = 'needle' "
                                          "AND instr(backlink_rejections_derived.matched_text_span, k.id) > 0)"),
    Delete("decision_checkpoints", "thread_id IN {thread} OR message_id IN {message}"),
    Delete("thread_entity_links", "thread_id IN {thread}"),
    Delete("thread_builds", "thread_id IN {thread}"),
    Delete("conversation_threads", "thread_id IN {thread}"),
    Delete("incognito_purges", "conversation_id IN {conversation}"),   # I72: ids and a time; goes with them
    Delete("note_assessment_pointers", "note_id IN {conversation}"),
    Delete("note_versions", "note_id IN {conversation}"),
    # ---- search index and vectors ---------------------------------------------------------------------------
    Step("search_docs", "search"), Step("search_fts", "search"), Step("search_doc_terms", "search"),
    Step("search_doc_keys", "search"), Step("search_term_docs", "search"),
    Delete("search_entity_names", "entity_id IN {entity}"),
    # ---- DOC72 node store: through the single writer, a commit; history redacted (decision P6) ----------------
    Step("nodes", "knowledge"), Step("edges", "knowledge"), Step("aliases", "knowledge"),
    Step("provenance_entries", "knowledge"), Step("experience_records", "knowledge"),
    Step("fts_nodes", "knowledge"), Step("node_payload_refs", "knowledge"), Step("compiled_truth", "knowledge"),
    Step("knowledge_commits", "knowledge"), Step("knowledge_commit_mutations", "knowledge"),
    Step("extraction_outcome_events", "knowledge"),
    # vectors after the node store: a node that lost a quote is re-embedded by the next index run
    Step("vector_items", "vectors"), Step("embedding_cache", "vectors"),
    # ---- seed 002 belief ledger ---------------------------------------------------------------------------------
    Update("wiki_beliefs", "superseded_by_belief_id = NULL", "superseded_by_belief_id IN {wiki_belief}"),
    Update("wiki_beliefs", f"provenance_ids = {_CLAIM_IDS_LEFT}, supporting_count = max(1, json_array_length("
                           f"{_CLAIM_IDS_LEFT}))",
           "belief_id NOT IN {wiki_belief} AND EXISTS (SELECT 1 FROM json_each(wiki_beliefs.provenance_ids) "
           "WHERE value IN {claim})"),
    Delete("belief_provenance", "belief_id IN {wiki_belief} OR provenance_id IN {claim}"),
    Delete("belief_sightings", "belief_id IN {wiki_belief}"),
    Delete("belief_overrides", "belief_id IN {wiki_belief} OR other_belief_id IN {wiki_belief} "
                               "OR superseded_by_belief_id IN {wiki_belief}"),
    Delete("wiki_verifier_findings", "belief_id IN {wiki_belief}"),
    Delete("wiki_beliefs", "belief_id IN {wiki_belief}"),          # wiki_beliefs_fts follows by trigger
    Step("wiki_beliefs_fts", "fts"),
    Delete("wiki_claim_provenance", "id IN {claim}"),
    Delete("wiki_footnotes", "document_id IN {document}"),
    Delete("documents", "id IN {document}"),
    # ---- seed 000 self-beliefs ---------------------------------------------------------------------------------
    Delete("stream_assignments", "belief_id IN {self_belief}"),
    Delete("tentative_links", "from_belief_id IN {self_belief} OR to_belief_id IN {self_belief}"),
    Delete("conflict_edges", "node_a_id IN {self_belief} OR node_b_id IN {self_belief}"),
    Update("belief_nodes", "merged_into_belief_id = NULL", "merged_into_belief_id IN {self_belief}"),
    Update("belief_nodes", "superseded_by_belief_id = NULL", "superseded_by_belief_id IN {self_belief}"),
    Delete("belief_occurrences", "occurrence_id IN {occurrence}"),
    Delete("belief_nodes", "belief_id IN {self_belief}"),
    Delete("experience_runs", "experience_id IN {experience}"),
    Delete("experience_scan_rows", "message_id IN {message}"),   # the view experience_scans (Y23)
    Delete("experiences", "experience_id IN {experience}"),
    # ---- seed 001 assertions and time ------------------------------------------------------------------------
    Delete("conflict_groups", "conflict_group_id IN {conflict_group}"),   # members cascade
    Delete("conflict_members", "conflict_group_id IN {conflict_group} OR assertion_id IN {assertion}"),
    Delete("assertion_tx_history", "assertion_id IN {assertion}"),
    Delete("assertion_temporalized", "assertion_id IN {assertion}"),
    Update("retractions", "target_assertion_id = NULL", "target_assertion_id IN {assertion}"),
    Update("retractions", "replacement_assertion_id = NULL", "replacement_assertion_id IN {assertion}"),
    Delete("retractions", "retraction_id IN {retraction}"),
    Update("assertions", "superseded_by_assertion_id = NULL, supersession_type = NULL",
           "superseded_by_assertion_id IN {assertion}"),
    Delete("assertions", "assertion_id IN {assertion}"),
    # a model call is forgotten with its message, or when its request quotes a forgotten sentence (P11)
    Delete("llm_extraction_calls", "message_id IN {message} OR EXISTS (SELECT 1 FROM temp.forget_keys k WHERE "
                                   "k.kind = 'needle' AND instr(llm_extraction_calls.request_json, k.id) > 0)"),
    # ---- seed 001 entities, mentions, time expressions ----------------------------------------------------------
    Delete("entity_mentions", "message_id IN {message} OR entity_id IN {entity}"),
    Update("entity_mention_candidates", "suppressed_by_candidate_id = NULL",
           "suppressed_by_candidate_id IN {candidate}"),
    Delete("entity_mention_candidates", "candidate_id IN {candidate}"),
    Delete("time_mentions", "message_id IN {message}"),
    Delete("ner_model_run_io", "message_id IN {message}"),
    Delete("detect_message_state", "message_rowid IN (SELECT rowid FROM messages WHERE message_id IN {message})"),
    Delete("assertion_created_entities", "entity_id IN {entity}"),
    Delete("entity_canonical_name_history", "entity_id IN {entity}"),
    Delete("entities", "entity_id IN {entity}"),
    Step("lexicon_term_candidates", "lexicon"), Step("lexicon_terms", "lexicon"),
    # ---- seed 001 graph: rebuilt from what is left (stage 6 is a full rebuild) --------------------------------
    Step("graph_nodes", "graph"), Step("graph_edges", "graph"),
    # ---- the raw layer ---------------------------------------------------------------------------------------
    Delete("raw_archive", "(table_name = 'messages' AND row_id IN {message}) "
                          "OR (table_name = 'conversations' AND row_id IN {conversation})"),
    Step("rejects", "rejects"),
    Delete("source_conversations", "conversation_id IN {conversation}"),
    Delete("transcript_participants", "conversation_id IN {conversation}"),
    Delete("message_parts", "message_id IN {message}"),
    Delete("messages", "message_id IN {message}"),
    Delete("conversations", "conversation_id IN {conversation}"),
    # ---- the stage log: a changed conversation's title, a warning naming a conversation --------------------
    Step("runs", "runs"), Step("run_events", "runs"),
]

# Tables that hold no user text: configuration, ids and counts, numeric state, the forget log itself.
NO_USER_TEXT: frozenset[str] = frozenset({
    "schema_migrations", "vault_meta", "stage_fingerprints", "search_state", "vector_state", "vector_tables",
    "knowledge_state", "invalidation_rules", "extractor_versions", "compiled_truth_locks",
    "forget_log", "forgotten_conversations",
    # issue 24: search documents the vector lane skips — a document rowid, a content hash and a reason code (Q7)
    "search_vector_skips",
    # issue 24 (Y2): intake observations' repeated values stored once: mode snapshots, feature scores, run ids, times
    "intake_values",
    # bookkeeping of model runs: model names, config, counts (their per-message I/O is in registered tables)
    "ner_model_runs", "llm_extraction_runs", "entity_canonicalization_runs", "lexicon_builds",
    # an import's file path and sizes; a workspace's folder
    "sources", "workspaces",
    # DOC72 upkeep state: day counters, watermarks, node ids and times; memory-mode rules name a conversation id or
    # an import path (like `sources`); suppressions are patterns a person typed as review settings (P12)
    "extraction_budget_days", "backlink_state", "backlink_cooldown", "memory_mode_rules", "backlink_suppressions",
    # predicates are the closed relation vocabulary (labels like lives_in), not the user's words
    "predicates",
    # nightly upkeep bookkeeping: generations, step counts, marks, the merge map, patterns and motifs (node ids,
    # counts and dates only)
    "maintain_runs", "maintain_steps", "maintain_state", "node_merge_map", "co_occurrence_patterns",
    "procedure_motifs",
})


def registered_tables() -> set[str]:
    return {e.table for e in REGISTRY}


# Tables whose names are made at run time, covered by a step: the vec0 tables of the vector index (one per
# embedding generation; the "vectors" step deletes from every active or building one).
DYNAMIC: list[tuple[str, str]] = [(r"vec_items_g\d+", "vectors")]

_TEXT_TYPES = ("TEXT", "CHAR", "CLOB", "JSON", "ANY")


def _holds_text(columns: list[tuple[str, str]]) -> bool:
    """A column can hold text when its declared type says so, or says nothing (SQLite then stores anything)."""
    return any(not t or any(x in t for x in _TEXT_TYPES) for _name, t in columns)


def uncovered_tables(tables: list[dict]) -> list[str]:
    """Tables (``kenning.store.forget.schema_tables`` rows) that may hold user text and are neither registered
    nor declared textless. A virtual table's shadow tables (``<owner>_data``, ``<owner>_vocab`` …) follow their
    owner."""
    import re

    covered = registered_tables() | NO_USER_TEXT
    virtual = [t["name"] for t in tables if t["virtual"]]

    def owner(name: str) -> str | None:
        return next((v for v in virtual if name != v and name.startswith(v + "_")), None)

    missing = []
    for t in tables:
        name = t["name"]
        if name in covered or not _holds_text(t["columns"]):
            continue
        base = owner(name) or name
        if base in covered or any(re.fullmatch(p, base) for p, _ in DYNAMIC):
            continue
        missing.append(name)
    return sorted(missing)
