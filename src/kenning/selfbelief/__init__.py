"""Seed 000: the HTN self-belief decomposer — first-person self-statements into belief nodes.

Phases (seed §2), one module each:

 1 source context   ``source_context.SourceContextClassifier`` → SourceContext(mode, source_weight, context_id)
 2 segment          ``segmenter.BeliefSegmenter``                → [ClaimCandidate(text, span)]
 3 atomize          ``atomizer.RuleAtomizer`` / ``atomizer.LLMAtomizer`` → [RawAtom]
 4 validate         ``validator.BeliefAtomValidator``            → ValidationResult(valid, invalid)
 5 dedup            ``canonicalizer.BeliefCanonicalizer`` → ``deduper.BeliefAtomDeduper`` → DedupResult
 6 epistemics       ``epistemics.EpistemicsRulesEngine`` → ``epistemics.EpistemicsLLMFallback``
 7 embed            ``embedder.HTNBeliefEmbedder`` (the model layer's embedder, text-similarity fallback)
 8 resolve          ``resolver.BeliefResolver`` + ``resolver.BeliefMatchVerifier``
 9 stream           ``streams.StreamClassifier`` → ``streams.StreamService``
10 storage          ``store.selfbeliefs`` rows; ``links.TentativeLinkService``
11 conflict         ``conflicts.ConflictEngine``
12 scoring          ``scoring.ActivationService`` → ``scoring.CoreScoreService``
13 migrate          ``streams.StreamService.check_migration``

``extractor.HTNBeliefExtractor`` runs them: ``analyze(text)`` (phases 1–6, no writes) and
``extract_and_update_self_knowledge(experience)`` (all 13). ``detector`` selects the experiences,
``stage.SelfBeliefStage`` ("self") runs it all on ingest, ``ledger_feed`` publishes nodes to the belief ledger.
``clauses`` finds the main clause and its verb group for the atomizer and the epistemics rules alike (issue 22).
"""
