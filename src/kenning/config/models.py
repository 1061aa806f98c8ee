"""Typed view of the configuration.

Fields carry no defaults of their own: ``defaults.yaml`` is the one place defaults live, and a
key missing from it is a validation error (tested), so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from kenning.sources.jsonpointer import is_valid_pointer


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Pointer = str | list[str] | None


class VaultConfig(Strict):
    db_path: str
    busy_timeout_ms: int


class IdsConfig(Strict):
    id_namespace: str


class TimeConfig(Strict):
    anchor_timezone: str


PartType = Literal["text", "image", "file", "tool_call", "tool_result", "other"]


class ContentPartRule(Strict):
    part_type: PartType
    part_is: Literal["string", "object"] | None = None
    match_path: str | None = None
    match_value: Any = "*"
    message_match_path: str | None = None
    message_match_value: Any = "*"
    text_extract_path: Pointer = None
    text_extractor: Literal["thoughts", "user_editable_context"] | None = None
    mime_type_path: Pointer = None
    file_path_path: Pointer = None
    metadata_paths: list[str] = Field(default_factory=list)
    mark: dict[str, Any] = Field(default_factory=dict)


class ExportMapping(Strict):
    format_version: str
    conversation_id_path: Pointer
    conversation_title_path: Pointer
    conversation_created_path: Pointer
    conversation_updated_path: Pointer
    conversation_current_node_path: Pointer
    messages_path: str
    messages_is_mapping: bool
    message_id_path: Pointer
    message_role_path: Pointer
    message_parent_path: Pointer
    message_created_path: Pointer
    message_content_path: Pointer
    message_author_name_path: Pointer
    message_recipient_path: Pointer
    message_content_type_path: Pointer
    message_weight_path: Pointer
    message_hidden_path: Pointer
    role_mapping: dict[str, Literal["user", "assistant", "system", "tool", "unknown"]]
    known_attachment_paths: list[str]
    attachment_mime_type_path: Pointer
    attachment_file_path_path: Pointer
    attachment_metadata_paths: list[str]
    content_part_rules: list[ContentPartRule]

    @field_validator("role_mapping")
    @classmethod
    def _lower_roles(cls, v: dict[str, str]) -> dict[str, str]:
        return {str(k).lower(): r for k, r in v.items()}

    def pointer_problems(self) -> list[str]:
        """Pointers that are not RFC 6901 (the seed does not validate; we warn)."""
        bad = []
        for name, value in self:
            values = value if isinstance(value, list) else [value]
            if name.endswith("_path") or name.endswith("_paths"):
                for p in values:
                    if isinstance(p, str) and not is_valid_pointer(p):
                        bad.append(f"{name}: {p!r}")
        return bad


class TextStructureConfig(Strict):
    citation_patterns: list[str]


class IngestConfig(Strict):
    default_stages: list[str]
    progress_every: int


class EntityDetectionConfig(Strict):
    ignore_markdown_blockquotes: bool
    domain_tld_allowlist_enabled: bool
    enable_ner: bool
    ner_max_chars: int
    ner_stride: int
    ner_label_allowlist: list[str]
    emit_spanless_ner: bool
    url_sort_query_params: bool


class AssertionExtractionConfig(Strict):
    enable_llm_assertion_extraction: bool
    llm_temperature: float
    llm_top_p: float
    llm_seed: int | None
    max_retries_llm: int
    llm_multi_run_count: int
    k_context: int
    code_fence_masking: Literal["whitespace_preserve_length", "marker", "remove"]
    threshold_link_string_sim: float
    assertion_upsert_policy: Literal["keep_highest_confidence", "keep_first", "keep_all"]


class TrustWeights(Strict):
    trust_weight_user: float
    trust_weight_assistant_corroborated: float
    trust_weight_assistant_uncorroborated: float


class CorroborationConfig(Strict):
    coref_window_size: int


class TemporalReasoningConfig(Strict):
    time_link_proximity_chars: int
    time_link_min_alignment: float
    fallback_valid_from_asserted: bool
    threshold_close: float
    confidence_supersession_margin: float
    use_detector_tier_tiebreak: bool
    use_salience_conflict_tiebreak: bool
    invalidation_rules: str
    proximity_same_sentence: bool
    temporal_bound_ends_validity: bool
    transition_wins_ties: bool
    publish_beliefs: bool
    observed_states_eligible: bool
    context_dated_by_conversation: bool


class PipelineConfig(Strict):
    entity_detection: EntityDetectionConfig
    assertion_extraction: AssertionExtractionConfig
    trust_weights: TrustWeights
    corroboration: CorroborationConfig
    temporal_reasoning: TemporalReasoningConfig


class LlmBudget(Strict):
    max_calls_per_run: int = Field(ge=0)
    max_tokens_per_run: int = Field(ge=0)


class LlmConfig(Strict):
    """The OpenAI-compatible chat endpoint (``kenning.llm.client``)."""

    mode: Literal["auto", "none", "live", "replay"]
    base_url: str | None
    model: str | None
    api_key: SecretStr | None  # dumps as "**********": never in config_hash, `config show` or run rows
    temperature: float
    top_p: float
    seed: int | None
    max_output_tokens: int = Field(gt=0)
    response_format: Literal["json_schema", "json_object", "none"]
    timeout_s: float = Field(gt=0)
    max_retries: int = Field(ge=0)
    backoff_initial_s: float = Field(ge=0)
    backoff_factor: float = Field(ge=1)
    backoff_max_s: float = Field(ge=0)
    max_json_repair_attempts: int = Field(ge=0)
    max_consecutive_failures: int = Field(ge=1)
    budget: LlmBudget
    prompt_versions: dict[str, int]


class MiniLMConfig(Strict):
    model_name: str
    device: str
    max_seq_length: int = Field(gt=0)
    runtime: Literal["auto", "onnx", "torch"]
    torch_threads: int = Field(ge=0)
    onnx_threads: int = Field(ge=0)
    onnx_spin_wait: bool
    onnx_batch_tokens: int = Field(ge=0)
    onnx_cache_dir: str | None


class OpenAIEmbeddingsConfig(Strict):
    base_url: str | None
    model: str
    api_key: SecretStr | None
    send_dimensions: bool
    timeout_s: float = Field(gt=0)
    max_retries: int = Field(ge=0)


class HashEmbeddingsConfig(Strict):
    version: Literal[1]
    char_ngram: int = Field(ge=2, le=8)
    stopword_weight: float = Field(ge=0, le=1)


class Thresholds(Strict):
    """seed 000 §5.3: resolution match / no_match and the conflict engine's tension threshold."""

    match: float = Field(ge=-1, le=1)
    no_match: float = Field(ge=-1, le=1)
    tension: float = Field(ge=-1, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> "Thresholds":
        if self.no_match > self.match:
            raise ValueError(f"no_match ({self.no_match}) must not exceed match ({self.match})")
        return self


class VectorIndexConfig(Strict):
    engine: Literal["auto", "sqlite", "numpy"]
    mirror_max_vectors: int = Field(ge=0)
    quantize_above: int = Field(ge=0)
    blas_threads: int = Field(ge=0)
    rerank_factor: int = Field(ge=1)
    rerank_min: int = Field(ge=1)
    migration_batch_size: int = Field(gt=0)
    migration_batch_pause_s: float = Field(ge=0)
    storage: Literal["float32", "int8"]


class EmbeddingsConfig(Strict):
    backend: Literal["minilm", "openai", "hash"]
    dimension: int = Field(gt=0, le=8192)
    batch_size: int = Field(gt=0)
    cache: bool
    minilm: MiniLMConfig
    openai: OpenAIEmbeddingsConfig
    hash: HashEmbeddingsConfig
    thresholds: dict[str, Thresholds]
    default_thresholds: Thresholds
    vector_index: VectorIndexConfig


class CalibrationConfig(Strict):
    pairs_file: str | None
    fit_split: str
    match_min_precision: float = Field(gt=0, le=1)
    no_match_min_recall: float = Field(gt=0, le=1)
    tension_min_precision: float = Field(gt=0, le=1)
class DetectorsConfig(Strict):
    optional_enabled: list[Literal["ARXIV", "CVE", "ORCID", "GIT_SHA", "HANDLE", "HASHTAG"]]
    phone_default_region: str | None
    url_key_keep_query: bool
    code_file_extensions: list[str]
    code_object_prefixes: list[str]
    code_handles: list[str]


class NerLlmConfig(Strict):
    enabled: bool
    labels: list[str]
    confidence: float = Field(ge=0, le=1)
    batch_max_messages: int = Field(ge=1)
    batch_max_chars: int = Field(ge=1)


class NerConfig(Strict):
    backend: Literal["rules", "spacy", "none", "llm"]
    spacy_model: str | None
    spacy_confidence: float = Field(ge=0, le=1)
    label_map: dict[str, str]
    llm: NerLlmConfig


class TimeMentionsConfig(Strict):
    enabled: bool
    dateparser_crosscheck: bool
    dateparser_disagreement_factor: float = Field(ge=0, le=1)
    bare_year_confidence: float = Field(ge=0, le=1)


class LexiconConfig(Strict):
    enable_lexicon_induction: bool
    enable_noun_chunk_induction: bool

    @field_validator("enable_noun_chunk_induction")
    @classmethod
    def _no_noun_chunks(cls, v: bool) -> bool:
        # seed 001 §2B.4.1 #7 asks for "spaCy noun chunker with pinned model version"; Kenning ships neither, so
        # the flag is refused rather than silently ignored (docs/decisions.md W40).
        if v:
            raise ValueError("enable_noun_chunk_induction: the NOUN_CHUNK generator needs spaCy and a pinned "
                             "model, which Kenning does not ship; set it to false (the other six generators run)")
        return v
    lexicon_min_user_mentions: float
    lexicon_min_conversations: int
    lexicon_max_code_ratio: float
    lexicon_min_diversity: float
    lexicon_max_terms: int = Field(ge=0)
    lexicon_denylist_path: str | None
    lexicon_weight_mentions: float
    lexicon_weight_conversations: float
    lexicon_weight_diversity: float
    lexicon_penalty_code: float
    role_weights: dict[Literal["user", "assistant", "system", "tool", "unknown"], float]
    allcaps_stoplist: list[str]
    sentence_initial_words: list[str]
    denylist: list[str]
    org_suffixes: list[str]
    evidence_max_occurrences: int = Field(ge=0)


class SalienceConfig(Strict):
    salience_weight_mentions: float
    salience_weight_conversations: float
    salience_weight_user_ratio: float
    salience_weight_recency: float
    salience_recency_halflife_days: float = Field(gt=0)


class CanonicalizationConfig(Strict):
    detector_weight_tier1: float
    detector_weight_tier2: float
    detector_weight_tier3: float
    detector_weight_tier4: float
    detector_tier_confidence_bonus: float
    lexicon_canonical_bonus: float
    enable_salience_prioritization: bool
    other_role_weight: float


class EntitiesConfig(Strict):
    detectors: DetectorsConfig
    ner: NerConfig
    time_mentions: TimeMentionsConfig
    lexicon: LexiconConfig
    salience: SalienceConfig
    canonicalization: CanonicalizationConfig


class ResolutionConfidence(Strict):
    speaker: float = Field(ge=0, le=1)
    first_person_plural: float = Field(ge=0, le=1)
    kin_descriptor: float = Field(ge=0, le=1)
    kin_coreference: float = Field(ge=0, le=1)
    pronoun_coreference: float = Field(ge=0, le=1)
    elided_subject: float = Field(ge=0, le=1)
    created_entity: float = Field(ge=0, le=1)


class AssertionsLlmConfig(Strict):
    """Stage 4 LLM extraction (seed 001 §4.4.4; docs/decisions.md A32–A38)."""

    prompt: str
    roles: list[Literal["user", "assistant"]]
    context_max_chars: int = Field(ge=0)
    target_max_chars: int = Field(ge=1)
    max_entities: int = Field(ge=0)
    max_assertions_per_message: int = Field(ge=1)
    max_confidence: float = Field(ge=0, le=1)
    accept_new_predicates: bool
    require_names_in_context: bool


class AssertionsConfig(Strict):
    pattern_registry: str
    predicate_vocabulary: str
    min_extractable_chars: int = Field(ge=0)
    mask_citations: bool
    detector_grounding_bonus: float = Field(ge=0)
    enable_salience_confidence_boost: bool
    salience_confidence_bonus: float = Field(ge=0)
    enable_temporal_bounds_validation: bool
    temporal_bounds_violation_penalty: float = Field(ge=0, le=1)
    enable_fuzzy_entity_linking: bool
    predicate_similarity_threshold: float = Field(ge=0, le=1)
    corroboration_same_polarity: bool
    update_entity_assertion_counts: bool
    skip_context_kinds: list[str]
    memory_write_recipients: list[str]
    resolution_confidence: ResolutionConfidence
    hedge_factor: float = Field(ge=0, le=1)
    qualifier_max_gap_chars: int = Field(ge=0)
    batch_conversations: int = Field(ge=1)
    llm: AssertionsLlmConfig


class TranscriptsConfig(Strict):
    default_timezone: str


class LaneWeights(Strict):
    fts: float
    vector: float
    speaker: float
    time: float
    entity: float
    belief: float
    assertion: float
    temporal_cue: float
    answer_type: float
    disposition: float = 1.0
    adjacency: float


class FtsColumnWeights(Strict):
    speaker: float
    body: float
    extra: float
    context: float


class FtsConfig(Strict):
    column_weights: FtsColumnWeights
    max_query_terms: int
    stopwords: list[str]
    rank_all_below: int = Field(ge=0)
    common_term_cap: int = Field(gt=0)
    # the plain BM25 lane leaves out the names of speakers the query names while the speaker lane runs (R30)
    speaker_names_in_plain_lane: bool = False
    pool_cap: int = Field(gt=0)
    pool_and_cap: int = Field(gt=0)
    pool_speaker_cap: int = Field(ge=0)
    pool_min_ratio: float = Field(ge=0)
    # the pool's conjunctive pair steps: each pair of this many rarest common words (R41)
    pool_pair_words: int = Field(default=3, ge=0)
    # the pool reads each document's hits from the forward index search_doc_terms (R51); false: from FTS5 walks
    forward_index: bool = True
    # a search reads the vault through a memory map of up to this many MiB (PRAGMA mmap_size; 0: off; R52)
    mmap_mb: int = Field(default=4096, ge=0)
    # without FTS5 positions (C1), a vault of at most this many search documents ranks its matches from the forward
    # index held in memory by token (C6); a larger one reads the matches' forward rows per query (0: never in memory)
    memory_index_docs: int = Field(default=30000, ge=0)
    posting_cache_mb: float = Field(default=32, ge=0)


class EntityLaneConfig(Strict):
    min_name_chars: int = Field(ge=1)
    max_entities: int = Field(gt=0)
    max_entities_per_name: int = Field(gt=0)
    max_mentions: int = Field(gt=0)


class AssertionLaneConfig(Strict):
    max_assertions: int = Field(gt=0)


class VectorConfig(Strict):
    enabled: bool
    space: str
    batch_size: int = Field(gt=0)
    include_speaker: bool
    sqlite_oversample: int = Field(ge=1)
    # the vector lanes' quantized scans run in a worker thread while the FTS lanes run (R44)
    overlap: bool = True


class SpeakerConfig(Strict):
    min_name_chars: int
    # the speaker lane's vector query is the question without the speakers' names, as its BM25 query is (R30)
    vector_without_names: bool = True
    # a capitalised query word that begins exactly one participant's name ("Mel" → Melanie) names them (R38)
    name_prefixes: bool = True
    min_prefix_chars: int = Field(default=2, ge=2)


class TimeLaneConfig(Strict):
    slack_days: int


class AdjacencyConfig(Strict):
    seeds: int
    window: int


class SearchIndexConfig(Strict):
    batch_size: int


class RetrievalConfig(Strict):
    rrf_k: int
    lane_cap: int
    default_k: int
    lane_weights: LaneWeights
    fts: FtsConfig
    vector: VectorConfig
    speaker: SpeakerConfig
    time: TimeLaneConfig
    entity: EntityLaneConfig
    assertion: AssertionLaneConfig
    adjacency: AdjacencyConfig
    index: SearchIndexConfig


class ProfileConfig(Strict):
    enable_temporal_profiles: bool
    temporal_profile_config: str
    focal_entities: list[str] | None
    granularity: Literal["month", "quarter", "year"]
    allowed_assertion_statuses: list[str]
    user_grounded_only: bool
    window_min_assertions: int
    profile_version: str
    include_value_members_in_profiles: bool
    include_category_nodes: bool
    include_window_sequence_edges: bool
    include_window_top_edges: bool
    window_top_n_members: int
    window_top_n_clusters: int
    include_window_assertion_edges: bool
    include_cluster_evolution_edges: bool
    include_member_evidence_edges: bool
    member_evidence_edge_cap_per_window: int
    salience_weights: dict[str, float]
    recency_halflife_days: float
    enable_embedding_classification: bool
    enable_llm_classification: bool


class GraphConfig(Strict):
    include_message_nodes: bool
    include_lexicon_nodes: bool
    include_detection_tier_metadata: bool
    conflict_pairwise_max_n: int
    include_inverse_lifecycle_edges: bool
    include_time_mention_nodes: bool
    include_time_qualifier_edges: bool
    profile: ProfileConfig


class Config(Strict):
    vault: VaultConfig
    ids: IdsConfig
    time: TimeConfig
    export_mapping: ExportMapping
    text_structure: TextStructureConfig
    ingest: IngestConfig
    pipeline: PipelineConfig
    llm: LlmConfig
    embeddings: EmbeddingsConfig
    calibration: CalibrationConfig
    entities: EntitiesConfig
    assertions: AssertionsConfig
    graph: GraphConfig


    transcripts: TranscriptsConfig
    retrieval: RetrievalConfig
    beliefs: "BeliefsConfig"
    self_beliefs: "SelfBeliefsConfig"
    knowledge: "KnowledgeConfig"
    inspect: "InspectConfig"
    maintain: "MaintainConfig"
    import_limits: "ImportLimitsConfig"
    concurrency: "ImportConcurrencyConfig"
    intake: "IntakeConfig"
    backlinks: "BacklinksConfig"
    corpus: "CorpusConfig"
    forget: "ForgetConfig"
    mining: "MiningConfig"
    vector_fill: "VectorFillConfig"
    person_context: "PersonContextConfig"
    maintain_tier4: "MaintainTier4Config"


# ---- seed 002: belief ledger -------------------------------------------------------------------------

StatementVote = Literal["supports", "partially_supports", "does_not_support"]
SupersessionVote = Literal["contradicts", "refines", "unrelated"]


class WikiSourceConfig(Strict):
    wiki_dir: str
    raw_dir: str
    sidecar_suffix: str
    structural_pages: list[str]
    max_raw_file_bytes: int


class BeliefVerifierConfig(Strict):
    judge: Literal["none"]
    reject_statement_votes: list[StatementVote]
    supersession_expected_votes: dict[str, SupersessionVote]


class WhyConfig(Strict):
    include_history: bool
    max_results: int = Field(gt=0)
    fts_any_fallback: bool
    question_words: list[str]
    vectors: bool
    vector_min_score: dict[str, float]
    fusion_k: int = Field(gt=0)
    sources_shown: int = Field(ge=0)


class M1Config(Strict):
    sample_size: int = Field(gt=0)
    sample_seed: int


class WikiWritePathConfig(Strict):
    runs_dir: str
    staged_dir: str
    inbox_dir: str
    guardian_prompt: str
    max_source_chars: int = Field(gt=0)
    max_beliefs_in_prompt: int = Field(gt=0)
    revise_statement_votes: list[StatementVote]


class BeliefsConfig(Strict):
    default_workspace: str
    statement_max_chars: int = Field(gt=0, le=280)  # the SQL CHECK caps statements at 280 (seed 002)
    supersession_reasons: list[str]
    confidence_hints: list[str]
    wiki: WikiSourceConfig
    verifier: BeliefVerifierConfig
    why: WhyConfig
    m1: M1Config
    write_path: WikiWritePathConfig

    @field_validator("supersession_reasons")
    @classmethod
    def _known_reasons(cls, v: list[str]) -> list[str]:
        allowed = {"contradicted_by_new_source", "elaborated", "manual_correction", "source_drifted"}
        unknown = [r for r in v if r not in allowed]
        if unknown:  # the belief_overrides CHECK only admits the seed's four
            raise ValueError(f"unknown supersession reasons {unknown}; seed 002 allows {sorted(allowed)}")
        return v



# ---- seed 000: the HTN self-belief decomposer --------------------------------------------------------

BeliefType = Literal["TRAIT", "VALUE", "PREFERENCE", "CAPABILITY_LIMIT", "FEELING_STATE", "META_BELIEF",
                     "RELATIONAL", "BELIEF_ABOUT_SELF"]
Stream = Literal["identity", "state", "meta", "relational"]
Mode = Literal["journaling", "introspection", "normal_chat", "roleplay", "heated", "unknown"]
Scope = Literal["state", "ongoing", "habitual", "transitional", "past", "unknown"]


class SelfDetectorConfig(Strict):
    version: int
    source_kinds: list[str]
    roles: list[Literal["user", "assistant", "system", "tool", "unknown"]]
    skip_context_kinds: list[str]
    profile_context_kind: str
    profile_sections: list[str]
    max_chars: int = Field(gt=0)


class HeuristicFallback(Strict):
    profanity_penalty: float = Field(ge=0, le=1)
    caps_penalty: float = Field(ge=0, le=1)
    exclaim_penalty: float = Field(ge=0, le=1)
    caps_ratio: float = Field(ge=0, le=1)
    min_letters_for_caps: int = Field(ge=0)
    exclaim_density: float = Field(ge=0)


class VadConfig(Strict):
    lexicon_path: str | None
    arousal_weight: float = Field(ge=0)


class SourceContextConfig(Strict):
    mode_field: str
    mode_weights: dict[Mode, float]
    source_modes: dict[str, Mode]
    heuristic_fallback: HeuristicFallback
    profanity: list[str]
    mode_cues: dict[Mode, list[str]]
    heated_min_signals: int = Field(ge=1)
    vad: VadConfig

    @field_validator("mode_weights")
    @classmethod
    def _all_modes(cls, v: dict[str, float]) -> dict[str, float]:
        missing = {"journaling", "introspection", "normal_chat", "roleplay", "heated", "unknown"} - set(v)
        if missing:
            raise ValueError(f"mode_weights needs a weight for every mode; missing {sorted(missing)}")
        return v


class SegmenterConfig(Strict):
    split_conjunctions: list[str]
    keep_conjunctions: list[str]


class AtomizerConfig(Strict):
    backend: Literal["auto", "llm", "rules"]
    max_candidates_per_call: int = Field(gt=0)
    intensifiers: list[str]
    fronting_words: list[str]


class ReportedSpeechConfig(Strict):
    verbs: list[str]
    openers: list[str]
    endorsements: list[str]


class ValidatorConfig(Strict):
    min_chars: int = Field(ge=0)
    min_content_tokens: int = Field(ge=0)
    generic_subjects: list[str]
    other_subjects: list[str]
    imperative_verbs: list[str]
    question_starts: list[str]
    reported_speech: ReportedSpeechConfig
    state_idioms: list[str]
    sarcasm_markers: list[str]


class ModalityCues(Strict):
    possible: list[str]
    likely: list[str]
    unsure: list[str]


class EpistemicCues(Strict):
    discourse: list[str]
    negation: list[str]
    negation_exceptions: list[str]
    aversion: list[str]
    frequency_negation: list[str]
    modality: ModalityCues
    past: list[str]
    past_change: list[str]
    transitional: list[str]
    habitual_strong: list[str]
    habitual_soft: list[str]
    ongoing: list[str]
    state: list[str]
    degree_strong: list[str]
    degree_weak: list[str]


class EpistemicConfidence(Strict):
    explicit_cue: float = Field(ge=0, le=1)
    competing_cues: float = Field(ge=0, le=1)
    predicate_form: float = Field(ge=0, le=1)
    no_cue: float = Field(ge=0, le=1)


class DegreeConfig(Strict):
    default: float = Field(ge=0, le=1)
    strong: float = Field(ge=0, le=1)
    weak: float = Field(ge=0, le=1)


class EpistemicsConfig(Strict):
    llm_fallback_threshold: float = Field(ge=0, le=1)
    conflict_resolution: Literal["specificity_then_rightmost"]
    temporal_specificity: dict[Scope, int]
    cues: EpistemicCues
    stative_verbs: list[str]
    confidence: EpistemicConfidence
    degree: DegreeConfig
    modality_caps: dict[Literal["certain", "likely", "possible", "unsure"], float]


class SimilarityThresholds(Strict):
    match: float = Field(ge=0, le=1)
    no_match: float = Field(ge=0, le=1)
    tension: float = Field(ge=0, le=1)


class SelfEmbeddingsConfig(Strict):
    enabled: bool
    space: str
    fallback_to_text_similarity: bool
    text_similarity_method: Literal["levenshtein_ratio"]
    text_similarity_thresholds: SimilarityThresholds
    linear_scan_max_nodes: int = Field(gt=0)


class VerifierConfig(Strict):
    enabled: bool
    min_confidence: float = Field(ge=0, le=1)


class TentativeLinkConfig(Strict):
    auto_accept_threshold: float = Field(ge=0, le=1)
    auto_reject_threshold: float = Field(ge=0, le=1)
    a: float
    b: float
    c: float


class TensionConfig(Strict):
    enabled: bool
    top_k_conflict_check: int = Field(gt=0)


class ResolutionConfig(Strict):
    top_k: int = Field(gt=0)
    verifier: VerifierConfig
    tentative_link: TentativeLinkConfig
    tension: TensionConfig


class ConcurrencyConfig(Strict):
    strategy: Literal["unique_canonical_hash_retry"]
    max_retries: int = Field(ge=0)
    retry_delay_ms: int = Field(ge=0)


class ComponentModels(Strict):
    atomizer_model: str | None
    epistemics_model: str | None
    verifier_model: str | None


class StreamRow(Strict):
    primary: Stream
    secondary: Stream | None


class StreamConfidence(Strict):
    scope_row: float = Field(ge=0, le=1)
    type_default: float = Field(ge=0, le=1)
    fallback: float = Field(ge=0, le=1)


class StreamsConfig(Strict):
    mapping: dict[BeliefType, dict[str, StreamRow]]
    fallback: StreamRow
    confidence: StreamConfidence


class PromoteConfig(Strict):
    min_spread: float = Field(ge=0, le=1)
    min_diversity: float = Field(ge=0, le=1)
    min_activation: float = Field(ge=0)


class RatchetConfig(Strict):
    enabled: bool
    allow_demotion: bool
    demotion_triggers: list[str]


class MigrationConfig(Strict):
    promote_state_to_identity: PromoteConfig
    ratchet: RatchetConfig


class ActivationConfig(Strict):
    half_life_days: dict[Stream, float]


class SupportConfig(Strict):
    k_n: float = Field(gt=0)


class SpreadConfig(Strict):
    midpoint_days: float
    temperature: float = Field(gt=0)


class DiversityConfig(Strict):
    midpoint_contexts: float
    temperature: float = Field(gt=0)


class ConflictPenaltyConfig(Strict):
    weight: float = Field(ge=0)
    recent_window_days: float = Field(ge=0)


class StatusThresholds(Strict):
    developing: float = Field(ge=0, le=1)
    core: float = Field(ge=0, le=1)


class CoreScoreConfig(Strict):
    support: SupportConfig
    spread: SpreadConfig
    diversity: DiversityConfig
    conflict_penalty: ConflictPenaltyConfig
    status_thresholds: StatusThresholds


class SelfConflictsConfig(Strict):
    exclude_state_vs_state: bool
    default_resolution: Literal["temporal_precedence", "evidence_weight"]


class SelfLedgerConfig(Strict):
    enabled: bool
    workspace: str | None
    subject: str
    topic_prefix: str


class AnnotateConfig(Strict):
    export_seed: int
    match_min_f1: float = Field(ge=0, le=1)


class SelfBeliefsConfig(Strict):
    detector: SelfDetectorConfig
    source_context: SourceContextConfig
    segmenter: SegmenterConfig
    atomizer: AtomizerConfig
    validator: ValidatorConfig
    epistemics: EpistemicsConfig
    embeddings: SelfEmbeddingsConfig
    resolution: ResolutionConfig
    concurrency: ConcurrencyConfig
    models: ComponentModels
    streams: StreamsConfig
    migration: MigrationConfig
    activation: ActivationConfig
    core_score: CoreScoreConfig
    conflicts: SelfConflictsConfig
    ledger: SelfLedgerConfig
    annotate: AnnotateConfig


# ---- seed 003 (DOC72): knowledge store math ----------------------------------------------------------

NodeKind = Literal["world_entity", "application", "procedure", "execution_trace", "standing_procedure", "goal",
                   "domain_concept", "obligation", "work_product", "memory_directive", "tool_capability"]
LifecycleStateName = Literal["observed", "suggested", "confirmed", "managed", "archived", "merged", "split",
                             "retracted"]
Tier = Literal["A", "B", "C"]
CandidateClass = Literal["entity", "relationship", "preference", "procedure", "goal", "obligation"]


class BetaPrior(Strict):
    alpha: float = Field(gt=0)
    beta: float = Field(gt=0)


class ConfidenceCaps(Strict):
    domain_principle_no_authority: float = Field(ge=0, le=1)
    staleness_expired_factor: float = Field(ge=0, le=1)
    staleness_invalidated: float = Field(ge=0, le=1)
    superseded_authority: float = Field(ge=0, le=1)


class ConflictConfig(Strict):
    mass_total: float = Field(gt=0)
    distinguish_above: float = Field(ge=0, le=1)
    caution_above: float = Field(ge=0, le=1)


class KnowledgeConfidenceConfig(Strict):
    prior: BetaPrior
    evidence_cap: float = Field(gt=0)
    event_weights: dict[str, float]
    half_life_days: dict[NodeKind, float | None]
    demonstrated_skill_half_life_days: float = Field(gt=0)
    caps: ConfidenceCaps
    conflict: ConflictConfig

    @field_validator("half_life_days")
    @classmethod
    def _every_kind(cls, v: dict[str, float | None]) -> dict[str, float | None]:
        missing = sorted(set(NodeKind.__args__) - set(v))
        if missing:  # a kind without an entry would fail at read time instead of at load time
            raise ValueError(f"half_life_days needs every node kind (null = no decay); missing {missing}")
        bad = [k for k, d in v.items() if d is not None and d <= 0]
        if bad:
            raise ValueError(f"half_life_days must be positive or null: {bad}")
        return v


class HysteresisConfig(Strict):
    cooldown_ms: int = Field(ge=0)
    confirm_after_consecutive_demotions: int = Field(ge=1)


GateAction = Literal["hold_for_review", "demote_confidence", "disable_auto_promotion"]


class QualityGatesConfig(Strict):
    window_days: float = Field(gt=0)
    floors: dict[CandidateClass, float | None]
    action_if_below: dict[CandidateClass, GateAction]
    item_kind_class: dict[str, CandidateClass]
    correct_outcomes: list[str]
    incorrect_outcomes: list[str]


class SuggestedRoutingConfig(Strict):
    min_confidence: float = Field(ge=0, le=1)
    min_distinct_sources: int = Field(ge=0)
    require_explicit_string_match: bool


class ProcedurePromotionConfig(Strict):
    validate_after_successes: int = Field(ge=1)
    composite_validate_after_successes: int = Field(ge=1)
    taught_validate_after_successes: int = Field(ge=1)
    promote_after_cross_skill_uses: int = Field(ge=1)


class LifecycleCleanupConfig(Strict):
    candidate_decay_days: float = Field(gt=0)
    suggestion_expiry_days: float = Field(gt=0)


class TiersConfig(Strict):
    kinds: dict[NodeKind, Tier]
    entity_types: dict[str, Tier]
    important_world_entity: Tier
    candidate_kinds: list[NodeKind]
    candidate_states: list[LifecycleStateName]

    @field_validator("kinds")
    @classmethod
    def _every_kind(cls, v: dict[str, str]) -> dict[str, str]:
        missing = sorted(set(NodeKind.__args__) - set(v))
        if missing:
            raise ValueError(f"tiers.kinds needs every node kind; missing {missing}")
        return v


class KnowledgeLifecycleConfig(Strict):
    hysteresis: HysteresisConfig
    quality_gates: QualityGatesConfig
    generic_promotion_min_confidence: float = Field(ge=0, le=1)
    suggested_routing: SuggestedRoutingConfig
    procedure: ProcedurePromotionConfig
    cleanup: LifecycleCleanupConfig
    tiers: TiersConfig


class KnowledgeProvenanceConfig(Strict):
    excerpt_max_chars: int = Field(gt=0, le=500)  # §33.3 "max 500 chars" (provenance.EXCERPT_MAX)
    compact_depth: int = Field(ge=1)
    tier_depth: dict[Tier, Literal["full", "compact", "minimal"]]


class KnowledgeExperienceConfig(Strict):
    recent_window: int = Field(ge=1)
    alpha_every_successes: int = Field(ge=1)
    alpha_increment: float = Field(ge=0)
    beta_after_consecutive_failures: int = Field(ge=1)
    beta_increment: float = Field(ge=0)
    negative_outcomes: list[str]
    success_outcomes: list[str]
    failure_outcomes: list[str]
    correction_outcomes: list[str]
    neutral_outcomes: list[str]
    trend_min_events: int = Field(ge=1)
    trend_tolerance: float = Field(ge=0, le=1)
    full_record_kinds: list[NodeKind]


class KnowledgeStoreConfig(Strict):
    event_log: str = Field(min_length=1)


class KnowledgeBridgeConfig(Strict):
    entity_types: list[str]
    min_user_mentions: int = Field(ge=0)
    max_provenance_per_node: int = Field(ge=1)
    mention_window_chars: int = Field(ge=0, le=240)
    lexicon_term_types: list[str]
    directive_categories: dict[str, Literal["preference", "constraint"]]
    directive_skip_predicates: list[str]
    applies_when: dict[str, str]
    injection_format: dict[str, Literal["imperative", "conditional", "contextual", "cautionary"]]
    relation_modalities: list[str]
    relation_prefix: Literal["domain_", "learned_"]
    obligation_qualifiers: list[Literal["at", "since", "until", "during"]]  # not read since I75; configs still load
    evidence: dict[Literal["statement", "mention", "other", "assistant", "owner"], str]
    assistant_edge_confidence_cap: float = Field(ge=0, le=1)


class KnowledgeConfig(Strict):
    store: KnowledgeStoreConfig
    bridge: KnowledgeBridgeConfig
    confidence: KnowledgeConfidenceConfig
    lifecycle: KnowledgeLifecycleConfig
    provenance: KnowledgeProvenanceConfig
    experience: KnowledgeExperienceConfig
    delivery: "KnowledgeDeliveryConfig"


class DeliveryCeiling(Strict):
    p50_ms: float = Field(gt=0)
    p95_ms: float = Field(gt=0)
    ceiling_ms: float = Field(gt=0)


class DeliveryQueryDefaults(Strict):
    max_results: int = Field(ge=1)
    max_nodes: int = Field(ge=1)
    goal_max_tokens: int = Field(ge=1)
    max_cards: int = Field(ge=1)
    lookup_limit: int = Field(ge=1)


class NoveltyGateConfig(Strict):
    max_tokens: int = Field(gt=0)
    work_context_cap_tokens: int = Field(gt=0)
    participant_cap_tokens: int = Field(gt=0)
    recent_cap_tokens: int = Field(gt=0)
    cross_context_cap_tokens: int = Field(gt=0)
    participant_min_reserved_tokens: int = Field(ge=0)
    cross_context_min_reserved_tokens: int = Field(ge=0)
    include_relationship_hints: bool
    suppress_hub_nodes_above_edge_count: int = Field(gt=0)
    exclude_generic_document_refs: bool
    recent_window_days: int = Field(gt=0)
    max_recent_entities: int = Field(gt=0)
    work_context_limit: int = Field(gt=0)
    participant_limit: int = Field(gt=0)
    cross_context_limit: int = Field(gt=0)
    cross_context_kinds: list[NodeKind]
    entity_kinds: list[NodeKind]
    min_salience: float = Field(ge=0, le=1)
    generic_names: list[str]
    min_name_chars: int = Field(ge=0)
    chars_per_token: float = Field(gt=0)


class DeliveryResolveConfig(Strict):
    max_ngram_words: int = Field(ge=1, le=8)
    alias_limit: int = Field(ge=1)
    fts_limit: int = Field(ge=0)
    fts_pool: int = Field(ge=0)
    max_term_doc_share: float = Field(gt=0, le=1)
    min_common_term_docs: int = Field(ge=0)
    use_vectors: bool
    vector_limit: int = Field(ge=0)
    min_word_chars: int = Field(ge=1)
    stopwords: list[str]


class DeliveryDirectivesConfig(Strict):
    max_tokens: int = Field(ge=0)
    max_items: int = Field(ge=0)
    always_priority_classes: list[Literal["absolute", "strong", "default", "suggestion"]]
    fts_limit: int = Field(ge=0)


class DeliveryGoalsConfig(Strict):
    max_tokens: int = Field(ge=0)
    max_items: int = Field(ge=0)


class DeliveryObligationsConfig(Strict):
    max_tokens: int = Field(ge=0)
    max_items: int = Field(ge=0)
    due_soon_days: int = Field(ge=0)
    overdue_days: int = Field(ge=0)
    open_statuses: list[str]


class BriefConfig(Strict):
    min_tokens: int = Field(ge=1)
    max_tokens: int = Field(ge=1)
    max_related: int = Field(ge=0)
    max_history: int = Field(ge=0)
    max_activity: int = Field(ge=0)
    stale_after_half_lives: float = Field(gt=0)


class KnowledgeDeliveryConfig(Strict):
    query_ceilings: dict[Literal["entity_lookup", "entity_neighbors_depth1", "entity_neighbors_depth2",
                                 "entity_cards", "procedure_bundle", "goal_context", "knowledge_brief",
                                 "related_threads", "entity_scoped_search", "context"], DeliveryCeiling]
    query_defaults: DeliveryQueryDefaults
    neighbor_scan_limit: int = Field(ge=1)
    gate: NoveltyGateConfig
    resolve: DeliveryResolveConfig
    directives: DeliveryDirectivesConfig
    goals: DeliveryGoalsConfig
    obligations: DeliveryObligationsConfig
    low_hit_rate: float = Field(ge=0, le=1)
    brief: BriefConfig


# ---- seed 003 §41, §42A.4: inspection, read-only SQL, compiled truth, digest ------------------------------

class InspectSqlConfig(Strict):
    rows_default: int = Field(ge=1)
    rows_cap: int = Field(ge=1)
    timeout_ms_default: int = Field(ge=1)
    timeout_ms_cap: int = Field(ge=1)


class TextToSqlConfig(Strict):
    tables: list[str]
    max_sql_chars: int = Field(ge=1)


class CompiledTruthConfig(Strict):
    lock_minutes: float = Field(gt=0)
    max_related: int = Field(ge=0, le=20)
    low_confidence_below: float = Field(ge=0, le=1)
    recent_provenance: int = Field(ge=0)
    renderer_version: str


class ConstellationConfig(Strict):
    max_primary_entities: int = Field(ge=1)
    max_recent_changes: int = Field(ge=1)
    max_likely_next_procedures: int = Field(ge=1)


class DigestConfig(Strict):
    window_days: int = Field(ge=1)
    max_entities: int = Field(ge=1)
    deadline_days: int = Field(ge=0)


class InspectConfig(Strict):
    sql: InspectSqlConfig
    search_limit: int = Field(ge=1)
    search_vectors: bool
    connected_limit: int = Field(ge=1)
    text_to_sql: TextToSqlConfig
    compiled_truth: CompiledTruthConfig
    constellation: ConstellationConfig
    digest: DigestConfig


# ---- seed 003 §42, §42A.5–6, §3.6: nightly upkeep ------------------------------------------------------

class MaintainCleanupConfig(Strict):
    trace_summary_days: float = Field(gt=0)
    usage_event_days: float = Field(gt=0)
    stale_procedure_days: float = Field(gt=0)
    stale_procedure_top: int = Field(ge=0)
    typo_min_similarity: float = Field(ge=0, le=100)
    typo_min_length: int = Field(ge=1)
    identity_attributes: list[str]
    orphan_flag: bool


class MaintainFoldingConfig(Strict):
    max_pairs_per_night: int = Field(ge=0)
    cosine_distance: dict[str, float]
    concept_provenance_months: float = Field(gt=0)
    min_state: Literal["observed", "suggested", "confirmed", "managed"]
    prompt: str


class MaintainHygieneConfig(Strict):
    half_life_days: float = Field(gt=0)
    floor: float = Field(ge=0, le=1)
    isolated_candidate_days: float = Field(gt=0)


class MaintainMotifsConfig(Strict):
    max_nodes: int = Field(ge=2)
    min_pair_support: int = Field(ge=1)
    min_lift: float = Field(ge=0)
    max_clique_size: int = Field(ge=2)
    max_cliques: int = Field(ge=1)
    hub_degree: int = Field(ge=1)
    time_cap_seconds: float = Field(gt=0)
    min_motif_support: int = Field(ge=1)
    motif_length: tuple[int, int]
    standing_success_ratio: float = Field(ge=0, le=1)
    standing_min_confidence: float = Field(ge=0, le=1)


class MaintainVacuumConfig(Strict):
    archived_threshold: int = Field(ge=0)
    weekly_days: float = Field(gt=0)


class MaintainHealthConfig(Strict):
    low_confidence_below: float = Field(ge=0, le=1)
    hub_degree: int = Field(ge=1)
    weak_edge_below: float = Field(ge=0, le=1)
    top_hubs: int = Field(ge=1)
    precision_window_days: float = Field(gt=0)
    debt_weights: dict[Literal["unresolved", "low_confidence", "contradictions", "imprecision"], float]


class MaintainConfig(Strict):
    cleanup: MaintainCleanupConfig
    folding: MaintainFoldingConfig
    hygiene: MaintainHygieneConfig
    motifs: MaintainMotifsConfig
    vacuum: MaintainVacuumConfig
    health: MaintainHealthConfig


class ImportLimitsConfig(Strict):
    """Issue 23 part 3: bounds on one record (defaults.yaml ``import_limits``)."""

    max_record_bytes: int = Field(gt=0)
    max_nesting_depth: int = Field(gt=0)
    max_parts_per_message: int = Field(gt=0)
    max_message_chars: int = Field(gt=0)


class ImportConcurrencyConfig(Strict):
    """Issue 23 part 5: a second import into a vault waits this long for the first (defaults.yaml ``concurrency``)."""

    import_wait_s: float = Field(ge=0)


# ---- DOC72 intake funnel (seed 003 §20A, §13.4, §22–24, §38; decisions I1–I19) -----------------------------

class IntakeWeights(Strict):
    intent: float = Field(ge=0)
    novelty: float = Field(ge=0)
    domain: float = Field(ge=0)
    centrality: float = Field(ge=0)
    action: float = Field(ge=0)
    matter: float = Field(ge=0)
    dup: float = Field(ge=0)
    privacy: float = Field(ge=0)
    min_score_for_shallow: float = Field(ge=0, le=1)
    min_score_for_deep: float = Field(ge=0, le=1)


class IntakeCalibration(Strict):
    days: int = Field(ge=0)
    min_score_for_shallow: float = Field(ge=0, le=1)
    min_score_for_deep: float = Field(ge=0, le=1)
    first_week_deep_max_total: int = Field(ge=0)


class IntakePattern(Strict):
    pattern: str
    weight: float = Field(ge=0, le=1)


class IntakePrivacyPattern(Strict):
    pattern: str
    risk: float = Field(ge=0, le=1)


class IntakeIntentPatterns(Strict):
    correction: str
    focus: str
    accept: str
    ask: str
    decide: str


class IntakeIncognito(Strict):
    conversations: list[str]
    title_patterns: list[str]
    folders: list[str]
    keep: Literal["raw_only", "drop"]


class IntakeBudget(Strict):
    deep_max_total: int = Field(ge=0)
    token_max_total: int = Field(ge=0)
    usd_max_total: float = Field(ge=0)
    deep_max_browser: int = Field(ge=0)
    deep_max_notes: int = Field(ge=0)
    deep_max_docs: int = Field(ge=0)
    reserved_critical_slots: int = Field(ge=0)
    usd_per_1k_tokens: float = Field(ge=0)


class IntakeQueue(Strict):
    max_retries: int = Field(ge=0)
    max_age_hours: int = Field(ge=1)
    crash_minutes: int = Field(ge=1)
    rules_version: str


class IntakeConfig(Strict):
    weights: IntakeWeights
    calibration: IntakeCalibration
    high_value_patterns: dict[str, IntakePattern]
    intent_patterns: IntakeIntentPatterns
    action_pattern: str
    privacy_patterns: dict[str, IntakePrivacyPattern]
    context_turns: int = Field(ge=0)
    min_chars: int = Field(ge=0)
    incognito: IntakeIncognito
    budget: IntakeBudget
    queue: IntakeQueue

    @model_validator(mode="after")
    def _regexes_compile(self) -> "IntakeConfig":
        import re

        named = [(f"intake.high_value_patterns.{k}", p.pattern) for k, p in self.high_value_patterns.items()]
        named += [(f"intake.privacy_patterns.{k}", p.pattern) for k, p in self.privacy_patterns.items()]
        named += [(f"intake.intent_patterns.{k}", v) for k, v in self.intent_patterns.model_dump().items()]
        named += [("intake.action_pattern", self.action_pattern)]
        named += [(f"intake.incognito.title_patterns[{i}]", p) for i, p in enumerate(self.incognito.title_patterns)]
        for where, pattern in named:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"{where} is not a valid regular expression ({e}): {pattern!r}") from None
        return self
# ---- issue 20: §42A.2 back-link pipeline ----------------------------------------------------------------------

class BacklinkContextConfig(Strict):
    work_context_bonus: float
    prior_evidence_cap: float
    prior_evidence_per_confidence: float
    prior_evidence_min_confidence: float
    diversity_bonus: float
    participant_bonus: float
    participant_jaccard: float = Field(ge=0, le=1)
    participant_stop_at: float
    recency_bonus: float
    recency_days: int = Field(ge=1)
    rejection_penalty: float


class BacklinkPromotionConfig(Strict):
    min_support_count_for_promotion: int = Field(ge=1)
    min_distinct_observations_for_promotion: int = Field(ge=1)
    min_salience_for_promotion: float = Field(ge=0, le=1)
    hard_block_relation_types: list[str]
    allow_single_observation_promotion: bool
    single_observation_requires_alias_exact: bool
    single_observation_min_graph_context: float = Field(ge=0, le=1)
    single_observation_blocked_relation_types: list[str]


class BacklinkBudgetConfig(Strict):
    max_promoted_edges_per_source_node: int = Field(ge=0)
    max_generic_relations_per_source_node: int = Field(ge=0)


class BacklinkTier4Config(Strict):
    dead_letter_retries: int = Field(ge=1)
    max_candidates: int = Field(ge=1, le=20)
    retry_delay_minutes: int = Field(ge=0)


class EntityCreationConfig(Strict):
    allowed_span_classes: list[str]
    min_distinct_observations: int = Field(ge=1)
    min_distinct_surfaces: int = Field(ge=1)
    min_normalized_span_length: int = Field(ge=1)
    block_all_caps_short_aliases_under: int = Field(ge=1)
    daily_candidate_queue_cap: int = Field(ge=1)
    historical_sweep_candidate_queue_cap: int = Field(ge=1)
    stop_phrases: list[str]


class BacklinkReviewConfig(Strict):
    page_size: int = Field(ge=1, le=100)
    max_page_size: int = Field(ge=1, le=100)
    recency_half_life_days: float = Field(gt=0)


class BacklinkCuesConfig(Strict):
    collaborated_with: list[str]
    produced_by_words: list[str]
    referenced_in_words: list[str]
    negative: list[str]


class BacklinkReaderVisibilityConfig(Strict):
    person: Literal["cloud_allowed", "cloud_warn", "local_only"]
    agent: Literal["cloud_allowed", "cloud_warn", "local_only"]


class BacklinksConfig(Strict):
    enabled: bool
    alias_matching_enabled: bool
    fts_matching_enabled: bool
    fts_min_score: float = Field(ge=0, le=1)
    embedding_matching_enabled: bool
    embedding_min_similarity: float = Field(ge=0, le=1)
    embedding_coreference_enabled: bool
    coreference_min_similarity: float = Field(ge=0, le=1)
    coreference_min_graph_context: float = Field(ge=0, le=1)
    llm_resolution_enabled: bool
    llm_resolution_mode: Literal["synchronous", "nightly", "both"]
    llm_max_unresolved_for_sync: int = Field(ge=1)
    entity_creation_enabled: bool
    entity_creation_min_unresolved_observations: int = Field(ge=1)
    regex_eval_timeout_ms: int = Field(ge=1)
    max_input_text_chars: int = Field(ge=1)
    max_mentions_per_observation: int = Field(ge=1)
    max_new_evidence_bundles_per_observation: int = Field(ge=1)
    max_new_targets_per_observation: int = Field(ge=1)
    cooldown_days_per_node: int = Field(ge=1)
    resolvable_node_kinds: list[str]
    candidates_per_pass: int = Field(ge=1)
    raw_weight: dict[str, float]
    context: BacklinkContextConfig
    coreference_window_chars: int = Field(ge=1)
    promotion: BacklinkPromotionConfig
    budget: BacklinkBudgetConfig
    hub_threshold: int = Field(ge=1)
    tier4: BacklinkTier4Config
    entity_creation: EntityCreationConfig
    review: BacklinkReviewConfig
    role_title_prefixes: list[str]
    organization_suffixes: list[str]
    generic_document_terms: list[str]
    definite_description_terms: list[str]
    leading_words_dropped: list[str]
    cues: BacklinkCuesConfig
    reader_visibility: BacklinkReaderVisibilityConfig
# ---- seed 003 §25 conversation corpus, issue 18 part 7 sources (I50–I69) ---------------------------------

class CorpusThreadsConfig(Strict):
    summarizer_version: int
    abstractive: bool
    llm_max_chars: int
    max_decisions: int
    max_unresolved: int
    max_linked_entities: int
    summary_chars: int
    vectors: bool


class CorpusResumeConfig(Strict):
    max_decisions: int
    max_open: int
    search_limit: int
    search_vectors: bool
    in_context: bool
    continuity_days: int = Field(ge=0)
    card_max_tokens: int = Field(ge=0)
    min_shared_words: int = Field(ge=1)
    min_word_overlap: float = Field(ge=0.0, le=1.0)
    continuity_scan: int = Field(ge=1)


class CorpusNotesConfig(Strict):
    extensions: list[str]
    ignore_dirs: list[str]
    placeholder_chars: int
    micro_edit_bytes: int
    double_extract_bytes: int
    session_timeout_minutes: Literal[10, 20, 30]
    max_note_bytes: int


class CorpusMailConfig(Strict):
    self_addresses: list[str]
    max_body_chars: int


class CorpusCalendarConfig(Strict):
    default_timezone: str


class CorpusConfig(Strict):
    threads: CorpusThreadsConfig
    resume: CorpusResumeConfig
    notes: CorpusNotesConfig
    mail: CorpusMailConfig
    calendar: CorpusCalendarConfig
class ForgetConfig(Strict):
    """Issue 23 §1: `kenning forget` and what a re-import does with forgotten conversations."""
    include_forgotten: bool
    vacuum: bool
# ---- issue 18: miners (goals, obligations, procedures, standing procedures, directives, corrections) ----------


class MiningConfig(Strict):
    enabled: bool
    timezone: str
    deadline_time: str = Field(pattern=r"^\d{2}:\d{2}$")
    context_turns: int = Field(ge=0, le=20)
    extractors: list[str]
    deep_model: bool
    max_deep_chars: int = Field(gt=0)




# ---- issue 24 §1: the vector lane off the import's critical path (decisions Q1–Q29) ------------------------


class VectorFillConfig(Strict):
    mode: Literal["background", "manual", "inline"]
    inline_max: int = Field(ge=0)
    batch_size: int = Field(gt=0)
    skip_roles: list[str]
    strip_code: bool
    assistant_max_words: int = Field(ge=0)
    lock_poll_s: float = Field(gt=0)


class PersonContextConfig(Strict):
    """The person part of a context packet (decisions H4): caps per part and for the whole part."""
    enabled: bool
    max_tokens: int = Field(ge=0)
    quote_chars: int = Field(ge=20)
    max_aliases: int = Field(ge=0)
    max_obligations: int = Field(ge=0)
    max_goals: int = Field(ge=0)
    max_directives: int = Field(ge=0)
    max_facts: int = Field(ge=0)
    max_threads: int = Field(ge=0)
    max_said: int = Field(ge=0)



class MaintainTier4Config(Strict):
    """`kenning maintain`'s Tier 4 step (decision H7): the queued batch, when a model is configured."""
    enabled: bool
    limit: int = Field(gt=0)


Config.model_rebuild()

