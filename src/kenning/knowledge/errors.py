"""Errors the single writer raises. Each names the field or id, the value and the reason, for a person to act on;
the writer raises them before anything is written."""

from __future__ import annotations


class KnowledgeError(ValueError):
    """Base: a write that was refused; nothing was written."""


class NodeNotFound(KnowledgeError):
    def __init__(self, node_id: str):
        super().__init__(f"no node {node_id!r} in the knowledge store (see `kenning nodes`)")
        self.node_id = node_id


class NodeExists(KnowledgeError):
    def __init__(self, node_id: str, name: str):
        super().__init__(f"a node {node_id} ({name!r}) already exists; update it, or confirm/correct it")
        self.node_id = node_id


class StaleWrite(KnowledgeError):
    def __init__(self, node_id: str, expected: str, actual: str | None):
        super().__init__(f"node {node_id} changed since it was read: expected_updated_at {expected!r}, "
                         f"but it was updated at {actual!r}; read it again and retry")
        self.node_id, self.expected, self.actual = node_id, expected, actual


class EdgeNotFound(KnowledgeError):
    pass


class RollbackError(KnowledgeError):
    pass


class HysteresisBlocked(KnowledgeError):
    """A demotion the §6.4 hysteresis does not allow now (cooldown, or a person must confirm)."""


class EventLogError(KnowledgeError):
    pass
