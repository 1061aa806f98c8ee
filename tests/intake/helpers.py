"""Shared pieces for the funnel tests: small real exports, a real test extractor that writes through the writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kenning.intake import extractors as seam
from kenning.knowledge.ops import CreateNode, KnowledgeWrite, ProvenanceIn
from kenning.knowledge.writer import KnowledgeWriter
from kenning.pipeline.clock import Clock

AS_OF = "2024-06-01T00:00:00Z"
HASH = {"embeddings": {"backend": "hash"}}
# No graph (6), self-beliefs or index: the funnel reads conversations and the node store.
STAGES = "0,1,2A,2B,3,4,5,knowledge,intake,extract"
from kenning.knowledge.contracts import EXAMPLE_PAYLOADS  # noqa: E402

DIRECTIVE = dict(EXAMPLE_PAYLOADS["memory_directive"])


def node(nid: str, role: str | None, text: str | None, parent: str | None, children: list[str], t: float) -> dict:
    msg = None
    if role is not None:
        msg = {"id": nid, "author": {"role": role}, "create_time": t,
               "content": {"content_type": "text", "parts": [text]}, "metadata": {}, "recipient": "all"}
    return {"id": nid, "message": msg, "parent": parent, "children": children}


def conversation(conv_id: str, title: str, turns: list[tuple[str, str]], t0: int = 1700000000) -> dict:
    mapping = {"root": node("root", None, None, None, [f"{conv_id}-m0"], 0)}
    for i, (role, text) in enumerate(turns):
        nid = f"{conv_id}-m{i}"
        mapping[nid] = node(nid, role, text, "root" if i == 0 else f"{conv_id}-m{i - 1}",
                            [f"{conv_id}-m{i + 1}"] if i + 1 < len(turns) else [], t0 + i * 60)
    return {"id": conv_id, "conversation_id": conv_id, "title": title, "create_time": t0,
            "update_time": t0 + len(turns) * 60, "current_node": f"{conv_id}-m{len(turns) - 1}", "mapping": mapping}


PLANS = [
    ("user", "My sister Anna lives in Lisbon and I want to visit her in May."),
    ("assistant", "Lisbon in May is lovely. Would you like a packing list?"),
    ("user", "Yes, let's do that, I'll use that list for the trip."),
    ("assistant", "Here is a list: passport, sunscreen, walking shoes."),
    ("user", "Actually, the trip is in June, not May."),
    ("user", "ok"),
    ("user", "What is the weather like in Lisbon in June?"),
]
SECRET = [
    ("user", "My therapist Dr Vale says I should journal every evening. Remember that."),
    ("assistant", "That sounds like a helpful habit."),
    ("user", "I prefer writing in a paper notebook, and I want to start on Monday."),
    ("user", "My sister Anna lives in Lisbon, she gave me the notebook."),
]


def write_export(path: Path, convs: list[dict]) -> Path:
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def two_conversations(tmp_path: Path) -> Path:
    return write_export(tmp_path / "conversations.json",
                        [conversation("conv-plans", "Trip planning", PLANS),
                         conversation("conv-secret", "Private journal", SECRET, t0=1700100000)])


def remember_extractor(ctx: seam.ExtractionContext, obs: seam.Observation) -> seam.ExtractionResult:
    """A small real extractor: a user message saying "prefer" or "want" becomes a memory_directive through the
    single writer, with provenance to the message (so commits, audit links and incognito purges are real)."""
    res = seam.ExtractionResult("test_remember")
    if obs.unit_kind != "message" or obs.role != "user" or not any(w in obs.text.lower() for w in ("prefer", "want")):
        res.skipped_reason = "no_preference"
        return res
    writer = KnowledgeWriter(ctx.conn, ctx.config, clock=Clock(ctx.now))
    out = writer.write(KnowledgeWrite(
        source_event="test.extract", change_summary="test extractor directive",
        ops=[CreateNode(node_kind="memory_directive", canonical_name=obs.text[:80],
                        payload={**DIRECTIVE, "summary": obs.text[:200]}, if_exists="merge",
                        provenance=(ProvenanceIn(entry_type="conversation_statement",
                                                 source_ref=f"message:{obs.message_id}",
                                                 verbatim_excerpt=obs.text[:200], message_id=obs.message_id,
                                                 char_start=0, char_end=min(len(obs.text), 200)),))]))
    if out.commit_id and out.created:
        res.commit_ids.append(out.commit_id)
        res.items = 1
    return res


def failing_extractor(ctx: Any, obs: seam.Observation) -> seam.ExtractionResult:
    raise RuntimeError(f"extractor broke on {obs.observation_id}")
