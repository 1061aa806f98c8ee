"""Stage `extract` — a stand-in until the funnel's queue lands (issue 18 parts 1–3 replace it): one Observation
per visible user/assistant message (its previous turns as context; corrections on the critical lane) through
every registered miner. All the logic lives in the miners (``kenning.intake.mining``)."""

from __future__ import annotations

from typing import Any

from kenning.intake.extractors import ExtractionContext, Observation, registered
from kenning.pipeline.runner import StageContext
from kenning.store import mining as msql


class ExtractStage:
    name = "extract"
    title = "mine goals, obligations, procedures, directives"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        cfg = ctx.config.mining
        counts: dict[str, int] = {"observations": 0, "items": 0, "commits": 0}
        if not cfg.enabled:
            return counts
        from kenning.intake.mining.corrections import is_correction
        extractors = registered()
        chosen = [(n, extractors[n]) for n in cfg.extractors if n in extractors]
        ectx = ExtractionContext(conn=ctx.conn, config=ctx.config, depth="shallow", now=ctx.clock.now())
        conv, turns = None, []
        for msg in msql.conversation_messages(ctx.conn):
            if msg["conversation_id"] != conv:
                conv, turns = msg["conversation_id"], []
            text = msg["text_raw"] or ""
            obs = Observation(observation_id=f"message:{msg['message_id']}", unit_kind="message", text=text,
                              role=msg["role"], conversation_id=conv, message_id=msg["message_id"],
                              created_at=msg["created_at_utc"], critical=msg["role"] == "user" and is_correction(text),
                              context=tuple(turns[-cfg.context_turns:]) if cfg.context_turns else ())
            counts["observations"] += 1
            for name, fn in chosen:
                res = fn(ectx, obs)
                counts["items"] += res.items
                counts["commits"] += len(res.commit_ids)
                if res.items:
                    counts[name] = counts.get(name, 0) + res.items
            turns.append({"role": msg["role"], "text": text, "message_id": msg["message_id"]})
            if counts["observations"] % 200 == 0:
                ctx.progress(records=counts["observations"], file="messages mined")
        ctx.progress(records=counts["observations"], file="messages mined")
        return counts
