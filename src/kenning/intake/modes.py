"""§13.4 memory modes, per conversation / import / source folder (I10–I12): which conversations are incognito, and
removing what was already derived from them — through the single writer, so the event log records it.

Incognito content is never mined (the funnel skips it with ``incognito_mode``; the knowledge bridge takes no
evidence from it), never in the knowledge graph (nodes whose only provenance is incognito are retracted) and never
in a context packet (``retrieve/context.py`` filters on :func:`incognito_only_nodes`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from kenning.intake.policy import MemoryModeState
from kenning.store import intake as isql


@dataclass
class IncognitoSet:
    """Incognito conversations and why each is (the basis goes into the envelope's memory_mode_snapshot)."""
    basis: dict[str, set[str]] = field(default_factory=dict)

    def add(self, conversation_id: str, why: str) -> None:
        self.basis.setdefault(conversation_id, set()).add(why)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self.basis

    @property
    def conversation_ids(self) -> list[str]:
        return sorted(self.basis)

    def mode(self, conversation_id: str, at: str) -> MemoryModeState:
        if conversation_id not in self.basis:
            return MemoryModeState(activated_at=at)
        return MemoryModeState.incognito(at, "user", tuple(sorted(self.basis[conversation_id])))


def _under(path: str, folder: str) -> bool:
    """``path`` is the file itself or inside ``folder``; a member of an archive ("export.zip!conversations.json")
    counts as the archive."""
    path = path.split("!", 1)[0]
    try:
        p, f = Path(path).expanduser().resolve(), Path(folder).expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    return p == f or f in p.parents


def incognito_conversations(conn: apsw.Connection, config: Any) -> IncognitoSet:
    """Every rule that makes a conversation incognito: `kenning mode` rules, `ingest --incognito` sources, and the
    config's ids, title patterns and folders."""
    cfg = config.intake.incognito
    out = IncognitoSet()
    rules = isql.mode_rules(conn)
    conv_ids = {r["scope_value"] for r in rules if r["scope"] == "conversation"} | set(cfg.conversations)
    sources = [r["scope_value"] for r in rules if r["scope"] == "source"]
    patterns = [re.compile(p, re.IGNORECASE) for p in cfg.title_patterns]
    if not (conv_ids or sources or patterns or cfg.folders):
        return out  # the common case: no mode set anywhere, nothing to scan
    for cid, export_id, title in isql.conversation_titles(conn):
        if cid in conv_ids or (export_id and export_id in conv_ids):
            out.add(cid, "conversation")
        if title and any(p.search(title) for p in patterns):
            out.add(cid, "title_pattern")
    if sources or cfg.folders:
        for cid, path in isql.conversation_sources(conn):
            if any(_under(path, s) for s in sources):
                out.add(cid, "import")
            if any(_under(path, f) for f in cfg.folders):
                out.add(cid, "folder")
    return out


def path_incognito_basis(conn: apsw.Connection, config: Any, paths: list[str]) -> set[str]:
    """Why files imported from ``paths`` are incognito (an `ingest --incognito` source, a configured folder): for a
    note version that has no conversation (a skipped placeholder, I95)."""
    sources = [r["scope_value"] for r in isql.mode_rules(conn) if r["scope"] == "source"]
    folders = config.intake.incognito.folders
    out = set()
    for path in paths:
        if any(_under(path, s) for s in sources):
            out.add("import")
        if any(_under(path, f) for f in folders):
            out.add("folder")
    return out


def incognito_message_ids(conn: apsw.Connection, config: Any) -> set[str]:
    found = incognito_conversations(conn, config)
    return isql.message_ids_of(conn, found.conversation_ids) if found.basis else set()


def incognito_only_nodes(conn: apsw.Connection, config: Any, node_ids: list[str]) -> set[str]:
    """Of ``node_ids``, those whose every message-backed provenance entry cites an incognito message (a node with
    no message provenance at all is not incognito-derived)."""
    msgs = incognito_message_ids(conn, config)
    if not msgs or not node_ids:
        return set()
    out = set()
    for nid, cited in isql.node_provenance_messages(conn, node_ids).items():
        if cited and all(m is not None and m in msgs for m in cited):
            out.add(nid)
    return out


def purge_incognito(ctx: Any) -> dict[str, int]:
    """Remove what was derived from incognito content, through the single writer (one commit per node): a node
    whose only evidence is incognito is retracted (archived out of every read); the funnel's queued extractions
    of those messages are cancelled; with ``keep: drop`` the raw text goes too."""
    from kenning.knowledge.ops import ArchiveNode, KnowledgeWrite, UpdateNode
    from kenning.knowledge.writer import KnowledgeWriter

    conn, config = ctx.conn, ctx.config
    found = incognito_conversations(conn, config)
    counts = {"incognito_conversations": len(found.basis), "nodes_retracted": 0, "provenance_withdrawn": 0,
              "extractions_cancelled": 0, "messages_dropped": 0}
    if not found.basis:
        return counts
    msgs = isql.message_ids_of(conn, found.conversation_ids)
    cited = isql.provenance_by_message(conn, sorted(msgs))
    candidates = sorted({r["node_id"] for r in cited if r["is_active"]})
    writer = KnowledgeWriter(conn, config, clock=ctx.clock, run_id=ctx.run_id)
    only = incognito_only_nodes(conn, config, candidates)
    # A node other content supports too stays, but the incognito evidence comes off it (one commit per node).
    for nid in candidates:
        if nid in only:
            continue
        pids = tuple(sorted(r["id"] for r in cited if r["node_id"] == nid))
        res = writer.write(KnowledgeWrite(
            source_event="intake.incognito", change_summary="incognito evidence withdrawn from the node",
            ops=[UpdateNode(id=nid, remove_provenance=pids)]))
        counts["provenance_withdrawn"] += len(pids) if res.created else 0
    for nid in sorted(only):
        res = writer.write(KnowledgeWrite(
            source_event="intake.incognito",
            change_summary="derived only from incognito content: removed from the knowledge graph",
            ops=[ArchiveNode(id=nid, lifecycle_state="retracted",
                             reason="memory mode incognito: its only evidence is an incognito conversation")]))
        counts["nodes_retracted"] += 1 if res.created else 0
    now = ctx.clock.now()
    obs = isql.observations_of_conversations(conn, found.conversation_ids)
    for item in isql.queue_items_for_observations(conn, [o["observation_id"] for o in obs]):
        if item["status"] in ("queued", "running"):
            # Not stale_archived: that is forbidden for critical rows; 'failed' with a reason is honest for all.
            isql.set_pending(conn, item["pending_id"], status="failed", error_code="incognito_mode", updated_at=now)
            counts["extractions_cancelled"] += 1
    if config.intake.incognito.keep == "drop":
        counts["messages_dropped"] = isql.drop_message_text(conn, sorted(msgs), ctx.run_id)
        isql.drop_conversation_raw(conn, found.conversation_ids)
    return counts
