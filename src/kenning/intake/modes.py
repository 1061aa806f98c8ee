"""§13.4 memory modes, per conversation / import / source folder (I10–I12): which conversations are incognito, and
removing what was already derived from them — through the single writer, so the event log records it.

Incognito content is never mined (the funnel skips it with ``incognito_mode``; the knowledge bridge takes no
evidence from it), never in the knowledge graph (nodes whose only provenance is incognito are retracted) and never
in a context packet (``retrieve/context.py`` filters on :func:`incognito_only_nodes`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import apsw

from kenning.intake.policy import MemoryModeState
from kenning.knowledge.incognito import incognito_basis, under_folder as _under
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


def incognito_conversations(conn: apsw.Connection, config: Any) -> IncognitoSet:
    """Every rule that makes a conversation incognito: `kenning mode` rules, `ingest --incognito` sources, and the
    config's ids, title patterns and folders (the rules are read in ``knowledge.incognito``, L1)."""
    return IncognitoSet(incognito_basis(conn, config))


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
    """Remove what was derived from incognito content (I12, I72). Each conversation is purged once, when a rule
    first covers it: the forget registry in keep-raw mode clears every derived table (mentions, times, lexicon,
    claims, self-beliefs, threads, search, vectors, audits …), and the node store goes through the single writer
    (one commit per node): a node whose only evidence is incognito is retracted, one other content supports too
    loses the incognito provenance entries. Every deriving stage skips incognito content, so a purged
    conversation stays clean; when no rule covers it any more its mark goes (and the next run learns from it).
    Queued extractions are cancelled; with ``keep: drop`` the raw text goes too."""
    from kenning.forget.apply import remove_derived
    from kenning.knowledge.ops import ArchiveNode, KnowledgeWrite, UpdateNode
    from kenning.knowledge.writer import KnowledgeWriter

    conn, config = ctx.conn, ctx.config
    found = incognito_conversations(conn, config)
    counts = {"incognito_conversations": len(found.basis), "nodes_retracted": 0, "provenance_withdrawn": 0,
              "extractions_cancelled": 0, "messages_dropped": 0, "derived_rows_removed": 0}
    done = isql.purged_conversations(conn)
    # a conversation no rule covers any more (any rule: a command, an import, the config) loses its mark, so a mode
    # turned on again purges it again, and its incognito skips, so the next intake run observes it afresh (I10)
    freed = sorted(done - set(found.basis))
    if freed:
        isql.unmark_purged(conn, freed)
        counts["observations_reopened"] = isql.forget_incognito_skips(conn, freed)
    if not found.basis:
        return counts
    now = ctx.clock.now()
    todo = sorted(set(found.basis) - done)
    writer = KnowledgeWriter(conn, config, clock=ctx.clock, run_id=ctx.run_id)

    def retract(node_ids: list[str], gone: set[str]) -> dict[str, int]:
        for nid in node_ids:
            entries = isql.provenance_ids_of(conn, nid)
            pids = tuple(sorted(p for p in entries if p in gone))
            if not pids:
                continue
            if len(pids) < len(entries):
                # other content supports it too: it stays, the incognito evidence comes off (one commit)
                res = writer.write(KnowledgeWrite(
                    source_event="intake.incognito", change_summary="incognito evidence withdrawn from the node",
                    ops=[UpdateNode(id=nid, remove_provenance=pids)]))
                counts["provenance_withdrawn"] += len(pids) if res.created else 0
            elif isql.node_is_active(conn, nid):
                res = writer.write(KnowledgeWrite(
                    source_event="intake.incognito",
                    change_summary="derived only from incognito content: removed from the knowledge graph",
                    ops=[ArchiveNode(id=nid, lifecycle_state="retracted",
                                     reason="memory mode incognito: its only evidence is an incognito conversation")]))
                counts["nodes_retracted"] += 1 if res.created else 0
        return {}

    if todo:
        # keep: drop keeps no text at all, so the node store is deleted and its history redacted, not retracted (I171)
        drop = config.intake.incognito.keep == "drop"
        report = remove_derived(conn, config, todo, now, None if drop else retract)
        counts["derived_rows_removed"] = sum(report.removed.values()) + sum(report.redacted.values())
        if drop:
            counts["nodes_deleted"] = report.knowledge.get("nodes_deleted", 0)
            counts["provenance_withdrawn"] += report.knowledge.get("provenance_removed", 0)
        isql.mark_purged(conn, todo, now)
    obs = isql.observations_of_conversations(conn, found.conversation_ids)
    for item in isql.queue_items_for_observations(conn, [o["observation_id"] for o in obs]):
        if item["status"] in ("queued", "running"):
            # Not stale_archived: that is forbidden for critical rows; 'failed' with a reason is honest for all.
            isql.set_pending(conn, item["pending_id"], status="failed", error_code="incognito_mode", updated_at=now)
            counts["extractions_cancelled"] += 1
    if config.intake.incognito.keep == "drop":
        msgs = isql.message_ids_of(conn, found.conversation_ids)
        counts["messages_dropped"] = isql.drop_message_text(conn, sorted(msgs), ctx.run_id)
        isql.drop_conversation_raw(conn, found.conversation_ids)
    return counts


def search_incognito(conn: apsw.Connection, config: Any, query: str, limit: int = 20) -> list[dict[str, Any]]:
    """`kenning search --incognito` (I71): incognito raw is never indexed, so the regular search never shows it;
    asked explicitly, the turns of incognito conversations that hold every word of the query. A read: nothing is
    derived or stored."""
    found = incognito_conversations(conn, config)
    words = [w for w in dict.fromkeys(re.findall(r"\w+", query.lower())) if len(w) >= 2]
    return [{"message_id": r["message_id"], "conversation_id": r["conversation_id"], "title": r["title"],
             "speaker": r["role"], "date": r["created_at_utc"], "text": r["text_raw"]}
            for r in isql.raw_turns_matching(conn, found.conversation_ids, words, limit)]
