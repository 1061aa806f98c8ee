"""Which conversations are incognito (§13.4, I10): `kenning mode` rules, `ingest --incognito` sources and the
config's ids, title patterns and folders. Only the rules are read here — ``intake.modes`` wraps them for the memory
modes and the purge; the edge gate (``knowledge.edge_gate``) needs them too, and ``knowledge/`` sits below
``intake/`` (L1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import apsw

from kenning.store import intake as isql


def under_folder(path: str, folder: str) -> bool:
    """``path`` is the file itself or inside ``folder``; a member of an archive ("export.zip!conversations.json")
    counts as the archive."""
    path = path.split("!", 1)[0]
    try:
        p, f = Path(path).expanduser().resolve(), Path(folder).expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    return p == f or f in p.parents


def incognito_basis(conn: apsw.Connection, config: Any) -> dict[str, set[str]]:
    """Every rule that makes a conversation incognito: `kenning mode` rules, `ingest --incognito` sources, and the
    config's ids, title patterns and folders — as {conversation id: why}."""
    cfg = config.intake.incognito
    basis: dict[str, set[str]] = {}

    def add(conversation_id: str, why: str) -> None:
        basis.setdefault(conversation_id, set()).add(why)

    rules = isql.mode_rules(conn)
    conv_ids = {r["scope_value"] for r in rules if r["scope"] == "conversation"} | set(cfg.conversations)
    sources = [r["scope_value"] for r in rules if r["scope"] == "source"]
    patterns = [re.compile(p, re.IGNORECASE) for p in cfg.title_patterns]
    if not (conv_ids or sources or patterns or cfg.folders):
        return basis  # the common case: no mode set anywhere, nothing to scan
    for cid, export_id, title in isql.conversation_titles(conn):
        if cid in conv_ids or (export_id and export_id in conv_ids):
            add(cid, "conversation")
        if title and any(p.search(title) for p in patterns):
            add(cid, "title_pattern")
    if sources or cfg.folders:
        for cid, path in isql.conversation_sources(conn):
            if any(under_folder(path, s) for s in sources):
                add(cid, "import")
            if any(under_folder(path, f) for f in cfg.folders):
                add(cid, "folder")
    return basis
