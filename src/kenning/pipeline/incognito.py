"""One filter for every deriving stage: incognito conversations are never mined (003 §13.4; issue 18, I70).

A stage asks :func:`incognito_skip` once, at the top of its selection, and passes over the conversations it names
WITHOUT recording them as processed (no detect state, no scan row, no thread build, no search document): clearing
the mode later lets the next run learn from them as if they were new. Stages that keep a whole-stage fingerprint
fold :attr:`IncognitoSkip.digest` into it, so turning a mode on or off re-runs them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass
class IncognitoSkip:
    conversations: frozenset[str]
    _conn: Any = field(repr=False, default=None)
    _messages: frozenset[str] | None = field(repr=False, default=None)
    purged: dict[str, int] = field(default_factory=dict)   # what a purge this call ran removed (I72)

    def __bool__(self) -> bool:
        return bool(self.conversations)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self.conversations

    @property
    def messages(self) -> frozenset[str]:
        """The incognito conversations' message ids (looked up once, only when a stage needs them)."""
        if self._messages is None:
            from kenning.store import intake as isql

            self._messages = frozenset(isql.message_ids_of(self._conn, sorted(self.conversations))
                                       if self.conversations else ())
        return self._messages

    @property
    def json(self) -> str:
        """The conversation ids as one JSON array: a single SQL parameter (``NOT IN (SELECT value FROM
        json_each(?))``) whatever their number."""
        return orjson.dumps(sorted(self.conversations)).decode()

    @property
    def digest(self) -> str:
        """Empty when nothing is incognito, so fingerprints of vaults without a mode are unchanged."""
        if not self.conversations:
            return ""
        return hashlib.sha256("\n".join(sorted(self.conversations)).encode()).hexdigest()


def incognito_skip(ctx: Any) -> IncognitoSkip:
    """The conversations this run must not derive anything from (every rule of I10)."""
    from kenning.knowledge.incognito import incognito_basis

    skip = IncognitoSkip(frozenset(incognito_basis(ctx.conn, ctx.config)), ctx.conn)
    if _purge_due(ctx, skip):
        # a rule set since the last purge (a config pattern, a folder): what was derived goes before this stage
        # derives anything, so no stage reads rows the mode forbids. The one upward import of the layers (L6):
        # the purge runs the forget registry, which knows every derived table.
        from kenning.intake.modes import purge_incognito

        skip.purged = purge_incognito(ctx)
    return skip


def _purge_due(ctx: Any, skip: IncognitoSkip) -> bool:
    from kenning.store import intake as isql

    if not getattr(ctx, "run_id", None):
        return False  # not a pipeline stage (a read): never writes
    done = isql.purged_conversations(ctx.conn)
    return done != set(skip.conversations)
