"""Who is speaking, and who "I" is (issue 5 "role-aware trust", docs/decisions.md A10–A12).

In a ChatGPT export the ``user`` is the vault owner: their first person is the reserved SELF entity. In a
transcript (``conversations.source_kind = 'transcript'``, turns with ``author_name`` = the speaker, and the
``transcript_participants`` table), a first-person statement is about its speaker: SELF only for the participant
marked ``is_self`` (the vault owner, ``--self NAME``), otherwise that person's own PERSON entity
(``entity_key`` = the normalized name, created deterministically when missing). A human speaker's statements are
user-grounded (trust 1.0) whatever the ``role`` column says (issue 9 stores other speakers as ``unknown``).
Assistant text has no first-person subject worth recording; its second person is the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kenning.detect.entities import self_entity_id
from kenning.detect.keys import entity_key
from kenning.sources.ids import IdFactory
from kenning.store import assertions as asql


@dataclass(frozen=True)
class Speaker:
    """The author of one message as stage 4 reads it."""

    kind: str                  # self | person | assistant | none
    entity_id: str | None      # the first-person subject (None for assistant/none)
    tier: int | None
    confidence: float
    trust_role: str | None     # 'user' (primary evidence) | 'assistant' | None (never extracted)
    name: str | None = None
    created: bool = False      # the PERSON entity did not exist and must be inserted

    @property
    def human(self) -> bool:
        return self.kind in ("self", "person")


def _norm(name: str | None) -> str:
    return " ".join((name or "").split()).casefold()


class SpeakerResolver:
    """Loads the participants once per run; answers per message without queries."""

    def __init__(self, conn, ids: IdFactory, *, speaker_confidence: float = 1.0,
                 existing_entity: Callable[[str], dict | None] | None = None):
        self.ids = ids
        self.self_id = self_entity_id(ids)
        self.speaker_confidence = speaker_confidence
        self.participants: dict[str, list[dict[str, Any]]] = asql.transcript_participants(conn)
        self.transcript_conversations: set[str] = set(asql.transcript_conversation_ids(conn))
        self._existing = existing_entity or (lambda eid: asql.entity_exists(conn, eid))
        self._known: dict[str, bool] = {}

    def is_transcript(self, conversation_id: str) -> bool:
        return conversation_id in self.transcript_conversations or conversation_id in self.participants

    def person_entity(self, name: str) -> tuple[str, str, bool]:
        """(entity_id, entity_key, created) of a speaker's PERSON entity: uuid5(["entity", "PERSON", key])."""
        key = entity_key("PERSON", name)
        eid = self.ids.make("entity", "PERSON", key)
        if eid not in self._known:
            self._known[eid] = self._existing(eid) is not None
        return eid, key, not self._known[eid]

    def mark_created(self, entity_id: str) -> None:
        self._known[entity_id] = True

    def speaker(self, message: dict[str, Any]) -> Speaker:
        """``message`` needs role, conversation_id and author_name (a ``messages`` row will do)."""
        role = message.get("role")
        conv = message.get("conversation_id")
        author = message.get("author_name")
        if role in ("system", "tool"):
            return Speaker("none", None, None, 0.0, None)
        if self.is_transcript(conv):
            if role == "assistant":
                return Speaker("assistant", None, None, 0.0, "assistant", author)
            parts = self.participants.get(conv, [])
            who = None
            a = _norm(author)
            if a:
                for p in parts:
                    names = [p["name"], p.get("participant_key"), *p.get("aliases", [])]
                    if a in {_norm(n) for n in names if n}:
                        who = p
                        break
            if who is not None and who["is_self"]:
                return Speaker("self", self.self_id, 1, 1.0, "user", who["name"])
            if who is None and role == "user" and not a:
                return Speaker("self", self.self_id, 1, 1.0, "user")
            name = who["name"] if who is not None else author
            if not name or not name.strip():
                return Speaker("none", None, None, 0.0, None)
            eid, _key, created = self.person_entity(name.strip())
            return Speaker("person", eid, 1, self.speaker_confidence, "user", name.strip(), created)
        if role == "user":
            return Speaker("self", self.self_id, 1, 1.0, "user")
        if role == "assistant":
            return Speaker("assistant", None, None, 0.0, "assistant")
        return Speaker("none", None, None, 0.0, None)


def speaker_subject(conn, message: dict[str, Any], ids: IdFactory | None = None) -> tuple[str, int, float] | None:
    """The first-person subject of ``message`` as (entity_id, detection_tier, confidence), or None when the
    author's "I" is not recorded (assistant, system, tool). Reads ``transcript_participants`` when the table
    exists; otherwise a chat ``user`` message is SELF. A transcript speaker's PERSON entity is created (with the
    seed's entity id formula) if it does not exist yet."""
    ids = ids or IdFactory()
    sp = SpeakerResolver(conn, ids).speaker(message)
    if sp.entity_id is None:
        return None
    if sp.created:
        asql.ensure_person_entity(conn, sp.entity_id, entity_key("PERSON", sp.name or ""), sp.name or "",
                                  "transcript_speaker", run_id=None)
    return sp.entity_id, int(sp.tier or 1), sp.confidence
