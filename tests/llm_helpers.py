"""A small real extraction stage for model-layer tests: the seed-000 atomizer prompt over each user message."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from kenning.llm import open_llm_run
from kenning.llm.version import extractor_version


class Atom(BaseModel):
    atom_text: str
    belief_type: str
    polarity: str
    confidence: float
    source_idx: int


class AtomizerOutput(BaseModel):
    atoms: list[Atom]


def candidates_in(body: dict) -> list[dict]:
    """The candidate list the atomizer prompt carries in its user message."""
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return json.loads(user.split("Candidates:\n", 1)[1])


def atomizer_responder(body: dict) -> dict:
    """What a good model would answer: one atom per clause, lowercased, 'not' → deny. A repair request gets a
    valid (empty) answer."""
    if "Raw output to repair:" in body["messages"][-1]["content"]:
        return {"atoms": []}
    atoms = []
    for c in candidates_in(body):
        for clause in re.split(r",? (?:but|and) |\. ", c["text"].rstrip(".")):
            clause = clause.strip().lower().replace("i'm", "i am")
            if not clause.startswith("i "):
                continue
            deny = " not " in clause
            atoms.append({"atom_text": clause.replace(" not ", " "), "belief_type": "TRAIT",
                          "polarity": "deny" if deny else "affirm", "confidence": 0.9, "source_idx": c["idx"]})
    return {"atoms": atoms}


class AtomizerProbe:
    """Stage "probe": atomize every user message; counts carry the extracted atoms so runs can be compared."""

    name = "probe"
    title = "atomizer probe (tests)"

    def __init__(self, fail_after: int | None = None):
        self.fail_after = fail_after

    def run(self, ctx) -> dict[str, Any]:
        rows = list(ctx.conn.execute(
            "SELECT message_id, text_raw FROM messages WHERE role='user' ORDER BY conversation_id, order_index"))
        ev = extractor_version(ctx.config, prompts=["atomizer"], llm_mode=ctx.llm_mode)
        results = []
        with open_llm_run(ctx, "atomizer", extractor_version=ev) as llm:
            if not llm.enabled:
                return {"enabled": False, "results": []}
            for n, (mid, text) in enumerate(rows):
                if self.fail_after is not None and n == self.fail_after:
                    raise RuntimeError("the stage failed on purpose")
                res = llm.structured("atomizer", {"candidates": [{"idx": 0, "text": text}]}, AtomizerOutput,
                                     message_id=mid, item_key="0")
                results.append({"message_id": mid, "ok": res.ok, "error_code": res.error_code,
                                "atoms": res.value.model_dump()["atoms"] if res.ok else None,
                                "repaired": res.repaired})
                llm.run.add(messages_processed=1, assertions_extracted=len(res.value.atoms) if res.ok else 0)
            run_id = llm.run.run_id
        return {"enabled": True, "results": results, "llm_run_id": run_id, "extractor_version": ev}
