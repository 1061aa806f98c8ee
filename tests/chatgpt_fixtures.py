"""Hand-built ChatGPT export records for tests (independent of the synthetic generator)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def message(mid: str, role: str | None, text: str | list | None, *, parent: str | None, children: list[str] = (),
            t: Any = None, content: dict | None = None, recipient: str = "all", name: str | None = None,
            metadata: dict | None = None, null_message: bool = False) -> tuple[str, dict]:
    if null_message:
        return mid, {"id": mid, "message": None, "parent": parent, "children": list(children)}
    if content is None:
        parts = text if isinstance(text, list) else ([] if text is None else [text])
        content = {"content_type": "text", "parts": parts}
    msg = {"id": mid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": t,
           "update_time": None, "content": content, "status": "finished_successfully", "end_turn": True,
           "weight": 1.0, "metadata": metadata or {}, "recipient": recipient, "channel": None}
    return mid, {"id": mid, "message": msg, "parent": parent, "children": list(children)}


def conversation(cid: str | None, title: str | None, nodes: list[tuple[str, dict]], *, create_time: Any = 1.7e9,
                 update_time: Any = 1.7e9 + 60, current_node: str | None = None, id_key: str = "conversation_id",
                 **extra: Any) -> dict:
    conv: dict[str, Any] = {"title": title, "create_time": create_time, "update_time": update_time,
                            "mapping": dict(nodes), "current_node": current_node or (nodes[-1][0] if nodes else None),
                            "moderation_results": [], "default_model_slug": "gpt-4o", **extra}
    if cid is not None:
        conv[id_key] = cid
        if id_key == "conversation_id":
            conv["id"] = cid
    return conv


def simple_chat(cid: str, title: str, turns: list[tuple[str, str]], start: float = 1_700_000_000.0) -> dict:
    """A linear chat: root (message null) then alternating turns."""
    ids = [f"{cid}-m{i}" for i in range(len(turns))]
    nodes = [message("client-created-root", None, None, parent=None, children=ids[:1], null_message=True)]
    for i, (role, text) in enumerate(turns):
        parent = "client-created-root" if i == 0 else ids[i - 1]
        nodes.append(message(ids[i], role, text, parent=parent, children=ids[i + 1:i + 2], t=start + 60 * i))
    return conversation(cid, title, nodes, create_time=start, update_time=start + 60 * len(turns),
                        current_node=ids[-1] if ids else None)


def write_export(path: Path, conversations: list[Any], indent: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(conversations, ensure_ascii=False, indent=indent), encoding="utf-8")
    return path
