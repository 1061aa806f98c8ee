"""ChatGPT exports keep their own importer; their messages are indexed and searchable like turns."""

from __future__ import annotations

import json

from kenning.retrieve.search import Searcher
from kenning.sources.inputs import resolve_export
from kenning.store.connection import rows


def _export() -> list[dict]:
    def node(i, parent, role, text, t):
        return {"id": i, "parent": parent, "children": [],
                "message": {"id": i, "author": {"role": role}, "create_time": t,
                            "content": {"content_type": "text", "parts": [text]}}}
    mapping = {"r": {"id": "r", "parent": None, "children": ["a"], "message": None},
               "a": node("a", "r", "user", "How do I repot a fiddle leaf fig?", 1700000000),
               "b": node("b", "a", "assistant", "Pick a pot two inches wider and use chunky soil.", 1700000010)}
    return [{"id": "conv-1", "title": "Plants", "create_time": 1700000000, "update_time": 1700000010,
             "current_node": "b", "mapping": mapping}]


def test_chatgpt_export_imports_and_is_searchable(vault, tmp_path):
    p = tmp_path / "conversations.json"
    p.write_text(json.dumps(_export()))
    assert resolve_export(p).kind == "chatgpt_export"
    res = vault.ingest([p], as_of="2024-01-01T00:00:00Z")
    assert [r.stage for r in res] == ["0", "1", "2A", "2B", "3", "4", "5", "6", "self", "knowledge", "intake",
                                      "extract", "threads", "backlinks", "index"]
    assert res[1].counts["conversations_new"] == 1 and res[-1].counts["docs_new"] == 2
    conv = rows(vault.conn, "SELECT source_kind FROM conversations")[0]
    assert conv["source_kind"] == "chatgpt"
    hit = Searcher(vault.conn, vault.config).search("repotting a fig", now="2024-01-01").hits[0]
    assert hit["speaker"] == "user" and hit["text"].startswith("How do I repot") and hit["turn_ref"] == "a"
