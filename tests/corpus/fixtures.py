"""Small realistic inputs for the conversation-corpus tests (issue 18 parts 6–7)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import _node

AS_OF = "2024-06-01T00:00:00Z"

LAPTOP = [
    ("user", "I'm flying to Lisbon in May with Maria and I need a laptop for the trip. "
             "Not sure whether 13 or 14 inch is better."),
    ("assistant", "I'd recommend the 14-inch ThinkPad X1 Carbon for its battery life. "
                  "You could also consider a MacBook Air."),
    ("user", "Perfect, I'll use that. I still need to check the price in Lisbon though."),
    ("assistant", "Prices in Lisbon are usually close to the rest of the EU."),
    ("user", "We decided to stay in Alfama because it is close to the river. Should we rent a car?"),
]
GARDEN = [
    ("user", "My tomatoes in the Berlin allotment keep splitting."),
    ("assistant", "You could try watering less often but more deeply, in the morning."),
    ("user", "Hmm, what if it is the variety?"),
    ("assistant", "It could be; some varieties split more easily."),
]


def conversation(conv_id: str, title: str, turns: list[tuple[str, str]], t0: int) -> dict:
    mapping = {"root": _node("root", None, None, None, ["m0"], 0)}
    for i, (role, text) in enumerate(turns):
        nid = f"{conv_id}-m{i}"
        mapping[nid] = _node(nid, role, text, "root" if i == 0 else f"{conv_id}-m{i - 1}",
                             [f"{conv_id}-m{i + 1}"] if i + 1 < len(turns) else [], t0 + i * 60)
    mapping["root"]["children"] = [f"{conv_id}-m0"]
    return {"id": conv_id, "conversation_id": conv_id, "title": title, "create_time": t0,
            "update_time": t0 + len(turns) * 60, "current_node": f"{conv_id}-m{len(turns) - 1}", "mapping": mapping}


def write_chats(path: Path, laptop: list[tuple[str, str]] = LAPTOP, garden: list[tuple[str, str]] = GARDEN) -> Path:
    convs = [conversation("conv-laptop", "Laptop for Lisbon", laptop, 1714000000),
             conversation("conv-garden", "Splitting tomatoes", garden, 1712000000)]
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path
