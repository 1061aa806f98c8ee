"""The stage registry, in pipeline order. Later stages register here as they land."""

from __future__ import annotations

from kenning.intake.stages import ExtractStage, IntakeModeStage, IntakeStage
from kenning.pipeline.runner import Stage
from kenning.pipeline.stage0 import Preprocess
from kenning.pipeline.stage1 import RawImport
from kenning.pipeline.stage2a import EntityTimeDetection
from kenning.pipeline.stage2b import LexiconAndEntities
from kenning.pipeline.stage3 import EntityCanonicalization
from kenning.pipeline.stage4 import AssertionExtraction
from kenning.pipeline.stage5 import TemporalReasoning
from kenning.pipeline.stage6 import GraphMaterialization
from kenning.pipeline.stage_backlinks import Backlinks
from kenning.pipeline.stage_index import SearchIndex
from kenning.pipeline.stage_knowledge import KnowledgeBridge
from kenning.intake.corpus.threads import ThreadsStage
from kenning.selfbelief.stage import (SelfAnalyze, SelfBeliefStage, SelfConflictResolve, SelfDemote, SelfLinkReview,
                                      SelfMerge, SelfRollback)

STAGES: dict[str, Stage] = {
    "0": Preprocess(),
    "1": RawImport(),
    "2A": EntityTimeDetection(),
    "2B": LexiconAndEntities(),
    "3": EntityCanonicalization(),
    "4": AssertionExtraction(),
    "5": TemporalReasoning(),
    "6": GraphMaterialization(),
    "self": SelfBeliefStage(),   # seed 000: self-statements → belief nodes (issue 7)
    "knowledge": KnowledgeBridge(),  # issue 17: ingest publishes into the DOC72 node store
    "intake": IntakeStage(),         # issue 18: envelopes, scoring, policy, the extraction queue (§20A)
    "extract": ExtractStage(),       # issue 18: drain the queue through the registered extractors
    "threads": ThreadsStage(),       # issue 18 part 6: §25 conversation corpus (after intake/extract when present)
    "backlinks": Backlinks(),  # issue 20: §42A.2 mentions → evidence bundles → promoted edges, review queue
    # Later stages go above this line: the search index is built last, from everything before it.
    "index": SearchIndex(),
}

# Source and ledger stages outside the conversation pipeline's order: `kenning ingest` picks the source stage
# by what a path is (sources/inputs.py); the belief commands run the others. Not part of --stages ranges.
from kenning.beliefs.stages import (FeedRebuild, JudgedM1, ManualSupersede, MarkDrifted, PublishBeliefs,  # noqa: E402
                                    RestoreBelief, UndisputeBelief, WikiRebuild)
from kenning.beliefs.wiki_commit import WikiCommit  # noqa: E402
from kenning.beliefs.wiki_import import WikiImport  # noqa: E402
from kenning.beliefs.wiki_stage import WikiStage  # noqa: E402
from kenning.beliefs.wiki_verify_run import WikiVerify  # noqa: E402
from kenning.knowledge.ask import AskStage  # noqa: E402

SIDE_STAGES: dict[str, Stage] = {
    "wiki": WikiImport(),
    "beliefs-rebuild": WikiRebuild(),
    "beliefs-publish": PublishBeliefs(),
    "beliefs-supersede": ManualSupersede(),
    "beliefs-drift": MarkDrifted(),
    "beliefs-rebuild-feeds": FeedRebuild(),
    "beliefs-restore": RestoreBelief(),
    "beliefs-undispute": UndisputeBelief(),
    "beliefs-m1": JudgedM1(),
    "wiki-stage": WikiStage(),      # seed 002 write path (W60–W79)
    "wiki-verify": WikiVerify(),
    "wiki-commit": WikiCommit(),
    "self-rollback": SelfRollback(),
    "self-merge": SelfMerge(),
    "self-links": SelfLinkReview(),
    "self-conflicts": SelfConflictResolve(),
    "self-demote": SelfDemote(),
    "self-analyze": SelfAnalyze(),
    "ask": AskStage(),
    "intake-mode": IntakeModeStage(),  # issue 18: `kenning mode`, `ingest --incognito` (§13.4)
}


def stage_title(name: str) -> str:
    stage = STAGES.get(name) or SIDE_STAGES.get(name)
    return stage.title if stage is not None else name


class UnknownStage(ValueError):
    pass


def parse_stage_list(spec: str | None, default: list[str]) -> list[str]:
    """'0,1' or '0-1' → ['0', '1'] in pipeline order; unknown names are an error naming the known ones."""
    if not spec:
        wanted = list(default)
    else:
        wanted = []
        for tok in (t.strip() for t in spec.split(",")):
            if not tok:
                continue
            if "-" in tok and all(x.strip() in STAGES for x in tok.split("-", 1)):
                lo, hi = (x.strip() for x in tok.split("-", 1))
                keys = list(STAGES)
                wanted.extend(keys[keys.index(lo): keys.index(hi) + 1])
            else:
                wanted.append(tok)
    unknown = [s for s in wanted if s not in STAGES]
    if unknown:
        raise UnknownStage(f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(STAGES)}")
    return [s for s in STAGES if s in wanted]
