"""The one flow every class miner follows (§20B): mine the user's statements, then the assistant turn the user
answered — accepted, left standing, contested or rejected — and write each item as one KnowledgeCommit."""

from __future__ import annotations

from typing import Any, Callable

from kenning.intake.extractors import ExtractionContext, ExtractionResult, Observation
from kenning.intake.mining import attribution as attr
from kenning.intake.mining import links
from kenning.intake.mining.common import Mined, Span, create_op, get_node, node_id, provenance, sentences, write
from kenning.knowledge.ops import Feedback, UpdateNode
from kenning.store import knowledge as ksql
from kenning.store import mining as msql

Parser = Callable[[str, ExtractionContext, Observation, str], list[Mined]]

# Kinds an assistant may contribute (§29: goals are top-down only; obligations are the user's own).
AGENT_KINDS = frozenset({"procedure", "standing_procedure", "memory_directive"})
# Units in the user's own words: a chat turn, a note version, a mail the user wrote (I93).
USER_UNITS = frozenset({"message", "note_version", "mail"})
# A start event per authority (§5.2 weights): the user's own word, an accepted suggestion, one left standing.
EVENT = {"directive": "taught_by_user", "accepted": "accepted_from_agent", "observation": "agent_observation"}


def _annotation(authority: str, participant: str) -> dict[str, Any]:
    return {"annotation_type": "attribution", "source": "user_stated" if participant == "user" else "inferred",
            "content": f"authority_level={authority}; participant_type={participant}"}


def _with_attribution(m: Mined, authority: str, participant: str) -> Mined:
    payload = dict(m.payload)
    payload["annotations"] = [*payload.get("annotations", []), _annotation(authority, participant)]
    m.payload = payload
    return m


_OWN_ENTRIES = frozenset({"user_statement", "agent_suggestion", "user_acceptance", "user_correction",
                          "reported_success", "user_confirmation", "user_rejection", "learned_from_note",
                          "learned_from_email", "learned_from_calendar"})
# §20B.11: what the user wrote on another surface is evidence of that surface (entry type = §5.2 event, I93).
SURFACE_ENTRY = {"note_version": ("learned_from_note", "the user wrote it in a note"),
                 "mail": ("learned_from_email", "the user wrote it in a mail")}


# Kinds the knowledge bridge still publishes from stage 4 (its directives); goals and obligations are the miners'
# alone (I75), so for them nothing is deferred.
BRIDGE_KINDS = frozenset({"memory_directive"})


def bridged_spans(ctx: ExtractionContext, obs: Observation) -> dict[str, list[tuple[int, int]]]:
    """kind → spans of this message the knowledge bridge (issue 17) already published as active nodes of a kind it
    still makes (its directives from stage 4's claims). The miners leave those to it (I25, narrowed by I75)."""
    if not obs.message_id:
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    for nid in ksql.node_ids_with_message(ctx.conn, [obs.message_id]):
        n = ksql.get_node(ctx.conn, nid)
        if not n or n["node_kind"] not in BRIDGE_KINDS or not n["is_active"]:
            continue
        for p in ksql.get_provenance(ctx.conn, nid):
            if p.get("message_id") == obs.message_id and p["entry_type"] not in _OWN_ENTRIES:
                out.setdefault(n["node_kind"], []).append((p.get("char_start") or 0, p.get("char_end") or len(obs.text)))
    return out


def statement_spans_ok(m: Mined) -> bool:
    return attr.user_statement_kind(m.span.text) == "statement"


def write_item(ctx: ExtractionContext, obs: Observation, result: ExtractionResult, m: Mined, *, how: str,
               agent: attr.AgentTurn | None = None) -> str | None:
    """``how``: directive (the user's own words) | accepted (assistant, accepted) | observation (assistant,
    uncontested). Returns the node id written (or merged into)."""
    nid = node_id(ctx, m.kind, m.name)
    existing = get_node(ctx, nid)
    event = EVENT[how]
    prov = []
    if how == "directive":
        entry, said = SURFACE_ENTRY.get(obs.unit_kind, ("user_statement", "the user said so in a conversation"))
        if obs.unit_kind in SURFACE_ENTRY:
            event = entry
        prov.append(provenance(obs, m.span, entry_type=entry, event=None if existing is None else event,
                               description=said))
        _with_attribution(m, "directive", "user")
    else:
        prov.append(provenance(obs, m.span, entry_type="agent_suggestion", event=None if existing is None else event,
                               description="the assistant suggested it", message_id=agent.message_id if agent else None,
                               voice="assistant"))
        if how == "accepted":

            prov.append(provenance(obs, Span(0, min(len(obs.text), 300), obs.text[:300]), entry_type="user_acceptance",
                                   event=None, description="the user accepted the suggestion"))
            _with_attribution(m, "directive", "agent")
        else:
            m.lifecycle_state, m.lifecycle_substate = "suggested", "candidate"
            _with_attribution(m, "observation", "agent")
    if how == "directive":
        links.link(ctx, obs, m)   # the user's own goal/obligation names whom and what it is about (H2)
    ops: list[Any] = [create_op(ctx, m, prov, (event,) if existing is None else ())]
    added = links.extend_payload(existing, m) if existing is not None else None
    if added:
        ops.append(UpdateNode(id=nid, payload_set=added))
    if existing is not None and how in ("directive", "accepted") and existing["lifecycle_state"] == "suggested" \
            and existing.get("lifecycle_substate") == "candidate" and m.kind != "standing_procedure":
        ops.append(UpdateNode(id=nid, lifecycle_state=m.lifecycle_state or "confirmed", by_user=True,
                              lifecycle_substate=m.lifecycle_substate))
    if how == "accepted" and m.kind == "standing_procedure":
        # accepting the assistant's restatement of a standing rule is the user's confirmation (§18.9)
        if existing is None or existing["lifecycle_state"] not in ("confirmed", "managed"):
            ops.append(Feedback(id=nid, action="confirm", reason="the user accepted it in the conversation"))
    for op in m.extra_ops:
        ops.append(op)
    write(ctx, result, source_event=f"mining:{m.kind}", summary=f"mined {m.kind.replace('_', ' ')} “{m.name[:80]}” "
          f"({how})", ops=ops)
    return nid


def run_class(ctx: ExtractionContext, obs: Observation, name: str, parse: Parser) -> ExtractionResult:
    """Mine one observation for one class under the §20B rules."""
    result = ExtractionResult(extractor=name)
    if obs.unit_kind not in USER_UNITS or obs.role != "user":
        result.skipped_reason = "not the user's own words (assistant turns are decided on the user's next turn; " \
                                "others' mail and calendar events give obligation candidates only)"
        return result
    if obs.persistence_mode in ("accessible_only", "episodic_recall"):
        result.skipped_reason = f"persistence mode {obs.persistence_mode}: never auto-promoted"
        return result
    # a correction restates an item to fix an earlier one: the corrections miner writes it (critical lane, §10.5)
    correcting = obs.critical and attr.is_correction(obs.text)
    own = [] if correcting else [m for m in parse(obs.text, ctx, obs, "user") if statement_spans_ok(m)]
    if own:
        taken = bridged_spans(ctx, obs)
        own = [m for m in own if not any(a < m.span.end and m.span.start < b for a, b in taken.get(m.kind, ()))]
    for m in own:
        write_item(ctx, obs, result, m, how="directive")
    agent = attr.answered_agent_turn(obs)
    if agent is not None and attr.is_suggestion(agent.text):
        theirs = [m for m in parse(attr.offer_as_statement(agent.text), ctx, obs, "assistant") if m.kind in AGENT_KINDS]
        for m in theirs:   # an offer read as a promise (I145): the quote is the assistant's own words
            if agent.text[m.span.start:m.span.end] != m.span.text:
                start = next((x.start for x in sentences(agent.text) if x.start <= m.span.start < x.end + 1),
                             m.span.start)
                m.span = Span(start, m.span.end, agent.text[start:m.span.end])
        if agent.reaction == "accepted":
            chosen, others = attr.chosen_options(agent.text, theirs, attr.option_choice(obs.text))
            for m in chosen:
                write_item(ctx, obs, result, m, how="accepted", agent=agent)
            for m in others:   # picking one option turns the others down (I142)
                msql.record_rejected_option(ctx.conn, kind=m.kind, name=m.name, quote=m.span.text,
                                            suggestion_message_id=agent.message_id,
                                            rejection_message_id=obs.message_id,
                                            conversation_id=obs.conversation_id, recorded_at=ctx.now)
        elif agent.reaction == "uncontested" and not own:
            for m in theirs:
                write_item(ctx, obs, result, m, how="observation", agent=agent)
        elif agent.reaction == "rejected":
            for m in theirs:
                msql.record_rejected_option(ctx.conn, kind=m.kind, name=m.name, quote=m.span.text,
                                            suggestion_message_id=agent.message_id,
                                            rejection_message_id=obs.message_id,
                                            conversation_id=obs.conversation_id, recorded_at=ctx.now)
            if theirs:
                result.skipped_reason = f"rejected suggestion recorded ({len(theirs)})"
        elif theirs and agent.reaction == "contested":
            result.skipped_reason = "contested suggestion: not written"
    if not result.items and result.skipped_reason is None:
        result.skipped_reason = "nothing of this class"
    return result
