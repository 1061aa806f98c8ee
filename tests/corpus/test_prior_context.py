"""Seed 003 §25.3 (issue 18 (c), I77–I79): a context request that continues a recent thread gets the
"[Prior Context — reference]" card, within the packet's budget, with provenance — never for an incognito thread,
never twice in a session, never for a thread outside the window."""

from __future__ import annotations

import pytest

from kenning.api import Vault
from kenning.forget.apply import forget
from kenning.intake.corpus.resume import CARD_TITLE
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import run_stage
from kenning.pipeline.stages import SIDE_STAGES
from kenning.retrieve.context import build_context
from tests.intake.helpers import AS_OF, HASH, two_conversations

SOON = "2023-11-20T00:00:00.000Z"   # days after both conversations (14 Nov and 16 Nov 2023)


@pytest.fixture
def vault(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages="0,1,2A,2B,3,4,5,knowledge,threads")
    yield v
    v.close()


def cid(v: Vault, export_id: str) -> str:
    return v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id=?", (export_id,)
                          ).fetchone()[0]


def card(packet) -> dict | None:
    items = packet.sections["prior_context"]
    assert len(items) <= 1
    return items[0] if items else None


def test_a_request_continuing_a_recent_thread_gets_its_card_with_provenance(vault):
    p = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, record=False)
    c = card(p)
    assert c is not None and c["matched_by"] == "topic" and c["thread_id"] == cid(vault, "conv-plans")
    assert c["line"].startswith(CARD_TITLE) and "What was decided:" in c["line"] and "What is open:" in c["line"]
    assert "I'll use that list for the trip" in c["line"]                      # the decision …
    assert "weather like in Lisbon in June" in c["line"]                       # … and what is still open
    assert c["provenance"]["conversation_id"] == c["thread_id"]
    assert c["provenance"]["checkpoint_message_ids"]  # the decision points at the message it was made in
    msg = vault.conn.execute("SELECT conversation_id FROM messages WHERE message_id=?",
                             (c["provenance"]["checkpoint_message_ids"][0],)).fetchone()[0]
    assert msg == c["thread_id"]
    assert p.lines[-1] == c["line"] and p.telemetry["section_tokens"]["prior_context"] == c["tokens"]
    assert c["tokens"] <= vault.config.corpus.resume.card_max_tokens
    # an entity the thread is linked to is continuity too; with both conversations linked to Lisbon, the one that
    # also shares the request's words wins
    q = build_context(vault.conn, vault.config, "Lisbon trip packing list", now=SOON, record=False)
    assert card(q)["matched_by"] == "entity" and card(q)["thread_id"] == cid(vault, "conv-plans")


def test_no_card_without_continuity_or_outside_the_window(vault):
    assert card(build_context(vault.conn, vault.config, "hello there", now=SOON, record=False)) is None
    # the same request half a year later: the thread is no longer recent
    assert card(build_context(vault.conn, vault.config, "the packing list for the trip", now=AS_OF,
                              record=False)) is None


def test_the_card_fits_the_budget_trimmed_or_left_out(vault):
    full = card(build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, record=False))
    used = lambda p: sum(i["tokens"] for items in p.sections.values() for i in items)  # noqa: E731
    small = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, record=False,
                          budget=full["tokens"] - 10)
    trimmed = card(small)
    assert trimmed is not None and trimmed["tokens"] < full["tokens"] and used(small) <= small.budget
    assert "(left out to fit)" in trimmed["line"]
    tiny = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, record=False,
                         budget=5)
    assert card(tiny) is None and tiny.telemetry["prior_context_omitted"].startswith("budget")


def test_never_twice_in_a_session(vault):
    first = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, session="s1")
    again = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, session="s1")
    assert card(first) is not None and card(again) is None
    assert again.telemetry["prior_context_omitted"] == "already given in this session"


def test_never_for_an_incognito_thread(vault):
    plans = cid(vault, "conv-plans")
    # the rule alone (no purge yet): the read already leaves the thread out
    run_stage(vault.conn, SIDE_STAGES["intake-mode"], vault.config, Clock.from_option(AS_OF),
              inputs={"set": [("conversation", plans)], "purge": False})
    p = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, record=False)
    assert card(p) is None or card(p)["thread_id"] != plans
    # and the purge removes the thread itself
    run_stage(vault.conn, SIDE_STAGES["intake-mode"], vault.config, Clock.from_option(AS_OF),
              inputs={"set": [("conversation", plans)]})
    assert vault.conn.execute("SELECT COUNT(*) FROM conversation_threads WHERE thread_id=?", (plans,)
                              ).fetchone()[0] == 0


def test_forgetting_the_conversation_removes_packets_quoting_its_card(vault):
    p = build_context(vault.conn, vault.config, "the packing list for the trip", now=SOON, session="s1")
    assert card(p) is not None
    n = lambda: vault.conn.execute("SELECT COUNT(*) FROM context_packets WHERE packet_id=?",  # noqa: E731
                                   (p.packet_id,)).fetchone()[0]
    assert n() == 1
    forget(vault.conn, vault.config, "conversation", card(p)["thread_id"], apply=True, vacuum=False)
    assert n() == 0


def test_thread_reads_hide_an_incognito_thread_even_before_its_purge(vault):
    """I79: `kenning threads`, `resume_context` and the search leave out a conversation a rule made incognito, even
    while its thread still exists (no purge has run yet)."""
    from kenning.intake.corpus.resume import list_threads, resume_context, search_conversation_history

    plans = cid(vault, "conv-plans")
    assert plans in {t["thread_id"] for t in list_threads(vault.conn, limit=10, config=vault.config)["threads"]}
    run_stage(vault.conn, SIDE_STAGES["intake-mode"], vault.config, Clock.from_option(AS_OF),
              inputs={"set": [("conversation", plans)], "purge": False})
    assert vault.conn.execute("SELECT COUNT(*) FROM conversation_threads WHERE thread_id=?", (plans,)).fetchone()[0]
    assert plans not in {t["thread_id"] for t in list_threads(vault.conn, limit=10, config=vault.config)["threads"]}
    assert plans not in {t["thread_id"] for t in
                         search_conversation_history(vault.conn, vault.config, "packing list trip")["threads"]}
    assert resume_context(vault.conn, vault.config)["thread"]["thread_id"] != plans
