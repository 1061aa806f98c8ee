"""What a caller asks the single writer to do: a ``KnowledgeWrite`` holding typed operations (pydantic contracts).

Each operation names its target by id; the writer turns it into one §37 mutation with a forward and a reverse
RFC 6902 patch. Operations that would change nothing produce no mutation, and a write whose operations all
change nothing produces no commit — that is what makes re-ingest add nothing."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AliasIn(_Op):
    alias: str = Field(min_length=1, max_length=300)
    alias_type: Literal["name", "abbreviation", "shorthand", "system"] = "name"
    confidence: float = Field(0.8, ge=0.0, le=1.0)


class ProvenanceIn(_Op):
    """One §33.3 entry. ``evidence_event`` (a §5.2 event name) moves α — or β when ``contradicts`` — the first
    time this entry is recorded on the node, never again (so re-importing the same source adds nothing)."""
    entry_type: str = Field(min_length=1, max_length=80)
    source_description: str | None = None
    source_ref: str | None = None
    citation: str | None = None
    authority_type: Literal["binding", "persuasive", "informational", "personal"] | None = None
    still_current: Literal["yes", "uncertain", "overruled", "outdated", "not_checked"] = "not_checked"
    confidence_contribution: float | None = None
    supersedes_entry_id: str | None = None
    correction_reason: str | None = None
    jurisdiction_scope: list[str] | None = None
    authorial_voice: str | None = None
    author_entity_id: str | None = None
    assertion_type: Literal["direct_quote", "synthesized_rule", "applied_argument", "factual_claim",
                            "procedural_rule"] | None = None
    verbatim_excerpt: str | None = None
    source_metadata: dict[str, Any] | None = None
    email_context: dict[str, Any] | None = None
    message_id: str | None = None
    char_start: int | None = Field(None, ge=0)
    char_end: int | None = Field(None, ge=0)
    created_at: str | None = None  # when the evidence arose (the message time); default: the commit's time
    evidence_event: str | None = None
    contradicts: bool = False


class CreateNode(_Op):
    op: Literal["create_node"] = "create_node"
    id: str | None = None
    node_kind: str
    canonical_name: str = Field(min_length=1, max_length=500)
    payload: dict[str, Any] = Field(default_factory=dict)
    aliases: tuple[AliasIn, ...] = ()
    provenance: tuple[ProvenanceIn, ...] = ()
    evidence: tuple[str, ...] = ()  # starting evidence events (§6.1) beyond the Beta(2,2) prior
    lifecycle_state: str | None = None
    lifecycle_substate: str | None = None
    last_verified_at: str | None = None
    composite: bool = False
    user_confirmed_literals: bool = False
    # What to do when the node exists: error (a person adding a node twice), merge (add aliases and provenance
    # not yet present — the pipeline's idempotent publish), skip.
    if_exists: Literal["error", "merge", "skip"] = "error"


class UpdateNode(_Op):
    op: Literal["update_node"] = "update_node"
    id: str
    canonical_name: str | None = Field(None, min_length=1, max_length=500)
    payload: dict[str, Any] | None = None  # replaces the payload
    payload_set: dict[str, Any] | None = None  # sets top-level payload keys (None removes one)
    add_aliases: tuple[AliasIn, ...] = ()
    remove_aliases: tuple[str, ...] = ()
    add_provenance: tuple[ProvenanceIn, ...] = ()
    # Provenance entry ids to take off the node (§13.4 incognito turned on later: the evidence is withdrawn; the
    # confidence it once moved is history, kept in the commit's reverse patch).
    remove_provenance: tuple[str, ...] = ()
    staleness_state: str | None = None
    lifecycle_state: str | None = None
    lifecycle_substate: str | None = None
    last_verified_at: str | None = None
    is_active: bool | None = None
    by_user: bool = False  # a demotion asked for by the person skips the §6.4 hysteresis


class Feedback(_Op):
    """A person's verdict on a node (§5.2 weights): confirm adds confirmed_by_user to α; reject adds it to β and
    retracts the node; correct changes name/payload, records the correction in provenance and counts as
    taught_by_user evidence for the corrected content."""
    op: Literal["feedback"] = "feedback"
    id: str
    action: Literal["confirm", "reject", "correct"]
    reason: str | None = Field(None, max_length=2000)
    canonical_name: str | None = Field(None, min_length=1, max_length=500)
    payload_set: dict[str, Any] | None = None


class Evidence(_Op):
    op: Literal["evidence"] = "evidence"
    id: str
    event_type: str
    contradicts: bool = False
    provenance: ProvenanceIn | None = None


class ArchiveNode(_Op):
    op: Literal["archive_node"] = "archive_node"
    id: str
    reason: str = Field(min_length=1, max_length=2000)
    lifecycle_state: Literal["archived", "merged", "retracted"] = "archived"


class RecordUsage(_Op):
    op: Literal["record_usage"] = "record_usage"
    id: str
    event: dict[str, Any]


class CreateEdge(_Op):
    op: Literal["create_edge"] = "create_edge"
    source_id: str
    relation_type: str
    target_id: str
    start_date: str | None = None  # when the relation began to hold; default: the commit's time
    confidence: float = Field(0.5, ge=0.0, le=1.0)
    payload: dict[str, Any] | None = None
    lifecycle_state: str = "active"
    # An existing current edge: "max" keeps the higher confidence and merges the payload; "replace" sets
    # confidence, lifecycle state and payload as given (§42A.2.4's promotion upsert; decision G13).
    on_conflict: Literal["max", "replace"] = "max"


class EndEdge(_Op):
    op: Literal["end_edge"] = "end_edge"
    source_id: str
    relation_type: str
    target_id: str
    end_date: str | None = None  # when it stopped holding; default: the commit's time
    reason: str = Field(min_length=1, max_length=2000)


Operation = Annotated[Union[CreateNode, UpdateNode, Feedback, Evidence, ArchiveNode, RecordUsage, CreateEdge,
                            EndEdge], Field(discriminator="op")]


class KnowledgeWrite(BaseModel):
    """One call of ``entity_knowledge_write``: becomes at most one §37 KnowledgeCommit."""
    model_config = ConfigDict(extra="forbid")
    source_event: str = Field(min_length=1, max_length=200)
    change_summary: str = Field(min_length=1, max_length=2000)
    ops: list[Operation] = Field(min_length=1)
    idempotency_key: str | None = Field(None, min_length=1, max_length=500)
    # Optimistic concurrency (§37): the updated_at the caller read. A string applies to the node the first
    # operation targets; a mapping names node ids.
    expected_updated_at: str | dict[str, str] | None = None
    extraction_prompt_version: str | None = None
