"""Stage `knowledge` — the bridge into the DOC72 node store (issue 17 part 9; decisions K60–K79), one transaction.

Reads what stages 2B–5 left (entities, assertions with their stage-5 status, the latest lexicon) and publishes it
through the single writer (``knowledge/bridge.py``): one KnowledgeCommit per item that changed, none when nothing
did — so a re-ingest adds no commit and a person's feedback in the node store survives it. The runner appends the
commits to the event log after the stage commits."""

from __future__ import annotations

from typing import Any

from kenning.knowledge.bridge import publish
from kenning.pipeline.runner import StageContext


class KnowledgeBridge:
    name = "knowledge"
    title = "knowledge store"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.pipeline.incognito import incognito_skip

        # the shared filter (I70): it also purges a conversation a new rule made incognito before anything is read
        skip = incognito_skip(ctx)
        counts = publish(ctx, skip.messages)
        ctx.progress(records=counts.get("commits", 0), total=counts.get("commits", 0), file="knowledge store",
                     unit="commits")
        return counts
