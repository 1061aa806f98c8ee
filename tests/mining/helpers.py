"""Drive the miners the way the extract stage does: a conversation's turns, one Observation per message."""

from __future__ import annotations

from kenning.config import load_config
from kenning.intake.extractors import ExtractionContext, Observation, registered
from kenning.intake.mining.corrections import is_correction
from kenning.store import knowledge as ksql

NOW = "2026-03-02T12:00:00.000Z"


def run_conversation(conn, turns, *, conv="c1", start_day=1, config=None, now=NOW, llm=None, depth="shallow"):
    """``turns``: [(role, text), ...]. Returns the ExtractionResults, per message, per extractor."""
    config = config or load_config()
    ctx = ExtractionContext(conn=conn, config=config, depth=depth, now=now, llm=llm)
    extractors = registered()
    out, ctx_turns = [], []
    for i, (role, text) in enumerate(turns):
        mid = f"{conv}-m{i}"
        obs = Observation(observation_id=f"message:{mid}", unit_kind="message", text=text, role=role,
                          conversation_id=conv, message_id=mid,
                          created_at=f"2026-03-{start_day:02d}T09:{i:02d}:00.000Z",
                          critical=role == "user" and is_correction(text), context=tuple(ctx_turns[-4:]))
        for name in config.mining.extractors:
            out.append((mid, extractors[name](ctx, obs)))
        ctx_turns.append({"role": role, "text": text, "message_id": mid})
    return out


def nodes(conn, kind):
    return ksql.list_nodes(conn, kind=kind, active=None, limit=1000)


def names(conn, kind):
    return sorted(n["canonical_name"] for n in nodes(conn, kind))
