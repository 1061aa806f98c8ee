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

    @staticmethod
    def model_wanted(config: Any, explicit: bool) -> bool:
        """Like stage 4 (M30): only a run that asks for the model explicitly sends messages to it."""
        return explicit and config.mining.deep_model

    def run(self, ctx: StageContext) -> dict[str, Any]:
        from kenning.llm import open_llm_run
        from kenning.llm.version import extractor_version

        cfg = ctx.config.mining
        counts: dict[str, int] = {"observations": 0, "items": 0, "commits": 0}
        if not cfg.enabled:
            return counts
        ev = extractor_version(ctx.config, prompts=["mining"] if ctx.llm_mode != "none" else [],
                               llm_mode=ctx.llm_mode)
        with open_llm_run(ctx, "mining", extractor_version=ev) as llm:
            return self._mine(ctx, cfg, counts, llm if llm.enabled else None)

    def _mine(self, ctx: StageContext, cfg: Any, counts: dict[str, int], llm: Any) -> dict[str, Any]:
        from kenning.intake.mining.corrections import is_correction
        extractors = registered()
        chosen = [(n, extractors[n]) for n in cfg.extractors if n in extractors]
        # no funnel yet: every message is a deep dispatch when a model is on, shallow (rules) otherwise
        ectx = ExtractionContext(conn=ctx.conn, config=ctx.config, depth="deep" if llm else "shallow",
                                 now=ctx.clock.now(), llm=llm)
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
                if llm is not None and name == "model":
                    llm.run.add(messages_processed=1)
                counts["items"] += res.items
                counts["commits"] += len(res.commit_ids)
                if res.items:
                    counts[name] = counts.get(name, 0) + res.items
            turns.append({"role": msg["role"], "text": text, "message_id": msg["message_id"]})
            if counts["observations"] % 200 == 0:
                ctx.progress(records=counts["observations"], file="messages mined")
        ctx.progress(records=counts["observations"], file="messages mined")
        return counts
