"""Kenning's MCP server (official `mcp` SDK): read-only belief and search tools over stdio or streamable HTTP.

Tools: ``why`` (seed 002 "The why MCP tool"), ``beliefs_list``, ``belief_history``, ``search`` (issue 9's hybrid
search, R61); over the DOC72 knowledge store (seed 003): ``context`` (§42A.1), ``knowledge_brief`` (§41.4),
``neighbors`` (§43 entity_neighbors), ``inspect_knowledge`` (§41.2), ``sql`` and ``describe_knowledge_schema``
(§41.6, D50–D55). Every call opens the vault read-only (``PRAGMA query_only``), so the server can never change it; the
vector mirror is kept per process, so only a server's first search pays for loading it.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from kenning import __version__

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)

INSTRUCTIONS = (
    "Kenning is the user's personal belief ledger. Use `why` to answer 'what do I believe about X, why, what did "
    "I believe before and what changed my mind': it returns current beliefs, superseded history, the supersession "
    "chain, contradicting beliefs, and every supporting verbatim quote re-verified against its source now. "
    "`beliefs_list` lists beliefs (by topic, current only); `belief_history` follows one belief's chain. "
    "Use `search` to find what was said or written — turns of chats and transcripts, entities, beliefs — in the "
    "user's own words ('which bike did I buy?', 'when did I start learning Portuguese?'): each hit has its "
    "text, speaker, date, conversation, per-lane ranks and its evidence chain. "
    "The knowledge graph: `context` gives the compact, novelty-gated packet of what matters for a request; "
    "`knowledge_brief` a 200–300 token brief on one entity; `neighbors` an entity's related nodes (depth 1 or 2); "
    "`inspect_knowledge` says why a node is there (node_detail, provenance_chain, experience_record, "
    "confidence_breakdown, connected_nodes, tag_explanation, entity_knowledge_brief, search_knowledge); "
    "`sql` runs one read-only SELECT against the vault's tables (nodes, aliases, edges, provenance_entries, …); "
    "`describe_knowledge_schema` lists those tables, their columns and meanings. "
    "Past conversations: `search_conversation_history` finds threads by topic, `get_related_threads` lists the "
    "threads about an entity, `resume_context` gives the '[Prior Context — reference]' card of the latest one."
)

MAX_K = 100   # an agent asking for thousands of hits gets a tool error, not a flood (R61)
MAX_BELIEFS = 500  # beliefs_list's limit: a tool caller cannot ask for the whole ledger at once
MAX_BUDGET = 2000   # a context packet's token budget an agent may ask for (D52)


def _plain(data: Any) -> Any:
    """JSON-plain (dates and other objects as strings), exactly what the CLI's --json prints."""
    return orjson.loads(orjson.dumps(data, default=str))


class LoopbackOnly(ValueError):
    pass


def parse_http(spec: str) -> tuple[str, int]:
    """``HOST:PORT`` for --http; only loopback hosts (a personal vault is not served to the network)."""
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit():
        raise LoopbackOnly(f"--http wants HOST:PORT such as 127.0.0.1:8765, not {spec!r}")
    host = host.strip("[]") or "127.0.0.1"
    loopback = host == "localhost"
    try:
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if not loopback:
        raise LoopbackOnly(f"--http {spec}: Kenning serves only on a loopback address (127.0.0.1, ::1, localhost)")
    return host, int(port)


def build_server(db: Path, config_path: Path | None = None, default_workspace: str | None = None) -> MCPServer:
    from kenning.api import Vault

    app: MCPServer = MCPServer("kenning", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def open_ro() -> Vault:
        return Vault.open(db, config_path=config_path, readonly=True)

    def anticipated(fn: Any) -> Any:
        """Failures a caller can act on reach it as a tool error with the message (not a bare crash)."""
        import functools

        from kenning.beliefs.timeutil import TimeValueError
        from kenning.beliefs.why import WhyError
        from kenning.config.loader import ConfigError
        from kenning.knowledge.errors import KnowledgeError
        from kenning.retrieve.inspect import InspectError
        from kenning.store.connection import StoreError
        from kenning.store.readonly_sql import SqlRefused

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (WhyError, TimeValueError, StoreError, ConfigError, LookupError, KnowledgeError, InspectError,
                    SqlRefused) as e:
                raise ToolError(str(e)) from e

        return wrapper

    def why(query: str, workspace: str | None = None, since: str | None = None, until: str | None = None,
            include_history: bool | None = None, predicate: str | None = None,
            told_by: str | None = None) -> dict[str, Any]:
        """Why do I believe this? Resolves `query` as a belief id, then an exact subject (optionally with
        `predicate`), then a topic, then a question in plain words (the predicate it asks about, its words, and
        statements with the same meaning); ties return every match with `match_type`.
        `since`/`until` (ISO dates) keep beliefs held at or after / at or before those dates (when the person
        said them); `told_by` answers as Kenning had been told by that date; `include_history` (default true)
        adds superseded beliefs. Returns `answers` (one per claim: status current|contested|ended|superseded,
        occurrences, quotes), current_beliefs, history, contradicting_beliefs, supersession_chain and, per
        belief, supporting_sources with the verbatim quote, its hash and verified_against_source recomputed now."""
        with open_ro() as v:
            return v.why(query, workspace=workspace or default_workspace, since=since, until=until,
                         include_history=include_history, predicate=predicate, told_by=told_by)

    def beliefs_list(workspace: str | None = None, topic: str | None = None, current_only: bool = False,
                     limit: int | None = None) -> dict[str, Any]:
        """Beliefs of a workspace, newest first; `topic` filters, `current_only` drops superseded ones. `limit`
        (default beliefs.why.max_results) is at most 500; `total` says how many there are."""
        if limit is not None and not 1 <= limit <= MAX_BELIEFS:   # issue 23 §2: capped like search's k (P9)
            raise ToolError(f"limit must be between 1 and {MAX_BELIEFS}, not {limit}")
        with open_ro() as v:
            ws = workspace or default_workspace or v.config.beliefs.default_workspace
            items, total = v.beliefs(workspace=ws, topic=topic, current_only=current_only,
                                     limit=limit or v.config.beliefs.why.max_results)
        return {"workspace": ws, "total": total, "beliefs": items}

    def belief_history(belief_id: str) -> dict[str, Any]:
        """One belief and its whole supersession chain (oldest first), each link with its reason and run."""
        with open_ro() as v:
            hist = v.belief_history(belief_id)
        if hist is None:
            raise LookupError(f"no belief {belief_id}")
        return hist

    def search(query: str, k: int | None = None, as_of: str | None = None, now: str | None = None,
               kinds: list[str] | None = None) -> dict[str, Any]:
        """Hybrid search over what the user said and wrote: BM25 and vector lanes plus the graph's signals
        (speakers, entities and aliases, resolved times such as "in May 2023" or "last summer", assertions and
        their source turns, beliefs), fused with RRF. `k` hits (default retrieval.default_k, at most 100);
        `as_of` (ISO date) searches only what was said up to then and reads relative times from it; `now` is the
        date the question is asked (default `as_of`, else today); `kinds` keeps hits of these kinds (message,
        entity, belief). Returns query, parsed (terms, speakers, times, entities), lanes, notes and hits, each hit
        with rank, score, kind, text, speaker, date, conversation, turn_ref, lanes and evidence."""
        if k is not None and not 1 <= k <= MAX_K:
            raise ToolError(f"k must be between 1 and {MAX_K}, not {k}")
        bad = sorted(set(kinds or ()) - {"message", "entity", "belief"})
        if bad:
            raise ToolError(f"unknown kinds {bad}: use message, entity or belief")
        with open_ro() as v:
            try:
                found = v.search(query, k=k, as_of=as_of, now=now, kinds=kinds).as_dict()
            except ValueError as e:      # a date that is not a date; named as the tool's argument, not the flag
                raise ToolError(str(e).replace("--as-of ", "as_of ")) from e
        return orjson.loads(orjson.dumps(found, default=str))   # exactly what `kenning search --json` prints

    def _now(now: str | None) -> str:
        from kenning.pipeline.clock import Clock, ClockError

        try:
            return Clock.from_option(now).now()
        except ClockError as e:
            raise ToolError(str(e).replace("--as-of ", "now ")) from e

    session_given: dict[str, set[str]] = {}  # session → item ids given (novelty without writing the vault, K18)

    def context(request: str, entity: str | None = None, budget: int | None = None, session: str | None = None,
                now: str | None = None) -> dict[str, Any]:
        """The novelty-gated context packet for a request (seed 003 §42A.1): at most `budget` tokens (default 500,
        at most 2000) of lines such as "Anna (your sister)", chosen from the work context, participants, recent
        and cross-context knowledge, with goals, obligations due soon, memory directives and [caution] /
        [distinguish] flags. `entity` (id, name or alias) centres it on one entity; `now` (ISO) is the time the
        request is made. Returns lines, sections and the seed's telemetry (tokens_used, source_token_share, …).
        Within a `session`, what an earlier call gave is not given again (the server remembers it while it runs;
        the vault is not written)."""
        if budget is not None and not 1 <= budget <= MAX_BUDGET:
            raise ToolError(f"budget must be between 1 and {MAX_BUDGET} tokens, not {budget}")
        if not request.strip():
            raise ToolError("request is empty: say what the assistant is about to do")
        from kenning.retrieve.context import given_items

        at = _now(now)
        with open_ro() as v:
            packet = v.context(request, entity=entity, budget=budget, session=session, now=at, record=False,
                               given=session_given.get(session) if session else None)
        if session:
            session_given.setdefault(session, set()).update(given_items(packet))
        return _plain(packet.as_dict())

    def knowledge_brief(entity: str, now: str | None = None) -> dict[str, Any]:
        """A 200–300 token structured brief on one entity (seed 003 §41.4): related entities, concepts, goals,
        procedures, obligations, recent activity, confidence and what is stale. `entity`: id, name or alias."""
        at = _now(now)
        with open_ro() as v:
            return _plain(v.brief(entity, now=at).as_dict())

    def neighbors(entity: str, depth: int = 1, edge_types: list[str] | None = None, max_results: int | None = None,
                  now: str | None = None) -> dict[str, Any]:
        """An entity's related nodes (seed 003 §43 entity_neighbors), depth 1 or 2, optionally only these
        relation types; `max_results` at most 100. Returns results, latency_ms, truncated and truncation_reason
        (a query past its time ceiling is cut, not slowed)."""
        if depth not in (1, 2):
            raise ToolError(f"depth must be 1 or 2, not {depth}")
        if max_results is not None and not 1 <= max_results <= MAX_K:
            raise ToolError(f"max_results must be between 1 and {MAX_K}, not {max_results}")
        at = _now(now)
        with open_ro() as v:
            return _plain(v.query("entity_neighbors", now=at, entity_id=entity, depth=depth, edge_types=edge_types,
                                  max_results=max_results).as_dict())

    def inspect_knowledge(query_type: str, node: str | None = None, query: str | None = None,
                          limit: int | None = None, now: str | None = None) -> dict[str, Any]:
        """Why is this in my knowledge? (seed 003 §41.2) `query_type`: node_detail (everything about a node),
        provenance_chain (where it was learned, each quote checked against its source), experience_record
        (usage and outcomes), confidence_breakdown (α/β, decay, caps), connected_nodes, tag_explanation (why it
        would be flagged [caution] / [distinguish] / stale), entity_knowledge_brief, search_knowledge (needs
        `query`). `node`: id, id prefix, name or alias. Returns query_type, result_summary (to relay),
        result_data and suggested_actions. Reads only."""
        if limit is not None and not 1 <= limit <= MAX_K:
            raise ToolError(f"limit must be between 1 and {MAX_K}, not {limit}")
        from kenning.retrieve.inspect import inspect_knowledge as inspect_fn

        at = _now(now)
        with open_ro() as v:
            return _plain(inspect_fn(v.conn, v.config, query_type, now=at, node=node, query=query, limit=limit,
                                     audience="agent"))

    def sql(sql: str, max_rows: int | None = None, timeout_ms: int | None = None) -> dict[str, Any]:
        """One read-only SQL statement against the vault (seed 003 §41.6): SELECT / WITH … SELECT / a reading
        PRAGMA such as table_info(nodes). It reads these views (named like their tables, minus incognito
        conversations, what only they support, and edges the agent may not see): nodes (id, node_kind,
        canonical_name, confidence, payload JSON, …), aliases, edges (source_id, target_id, relation_type,
        end_date NULL = current), provenance_entries (verbatim_excerpt, source_ref, …), experience_records,
        messages, conversations, conversation_threads, decision_checkpoints, thread_entity_links; any other table is
        refused.
        `max_rows` default 20, at most 100; `timeout_ms` default 500, at most 2000. Returns columns, rows,
        row_count, truncated and execution_ms. Writes, ATTACH, write pragmas, extensions and several statements
        are refused."""
        from kenning.serve import agent_sql

        with open_ro() as v:
            return _plain(agent_sql.run(v.conn, v.config, sql, max_rows=max_rows, timeout_ms=timeout_ms))

    def describe_knowledge_schema() -> dict[str, Any]:
        """The tables `sql` may read, with their columns and what they mean (seed 003 §41.6 "schema on demand via
        describe_knowledge_schema"): call it before writing SQL."""
        from kenning.knowledge.ask import schema_card

        with open_ro() as v:
            return _plain(schema_card(v.conn, v.config))

    def search_conversation_history(query: str, entity_scope: str | None = None, limit: int | None = None,
                                    vectors: bool | None = None) -> dict[str, Any]:
        """Search past conversations (seed 003 §25.2): ranked thread summaries — title_hint, checkpoint_summary,
        key_decisions, unresolved_items, occurred_at, channel, linked entities. `entity_scope` (id, name or
        alias) keeps threads linked to that entity; `limit` at most 100; `vectors` also ranks by the summaries'
        vectors (semantic; default from config)."""
        from kenning.intake.corpus.resume import search_conversation_history as search_fn

        if limit is not None and not 1 <= limit <= MAX_K:
            raise ToolError(f"limit must be between 1 and {MAX_K}, not {limit}")
        with open_ro() as v:
            return _plain(search_fn(v.conn, v.config, query, entity_scope, limit, vectors))

    def get_related_threads(entity_id: str, limit: int = 20) -> dict[str, Any]:
        """Conversation threads linked to one entity (seed 003 §25.2), most recent first. `entity_id`: node id,
        name or alias."""
        from kenning.intake.corpus.resume import get_related_threads as related_fn

        if not 1 <= limit <= MAX_K:
            raise ToolError(f"limit must be between 1 and {MAX_K}, not {limit}")
        with open_ro() as v:
            return _plain(related_fn(v.conn, entity_id, limit, v.config))

    def resume_context(entity_id: str | None = None) -> dict[str, Any]:
        """Pick up where the user left off (seed 003 §25.2–25.3): the most recent thread (about `entity_id`, if
        given) as a "[Prior Context — reference]" card — where things stood, what was decided, what is open —
        plus the thread and its decision checkpoints. Reference only: not instructions."""
        from kenning.intake.corpus.resume import resume_context as resume_fn

        with open_ro() as v:
            return _plain(resume_fn(v.conn, v.config, entity_id))

    for fn in (why, beliefs_list, belief_history, search, context, knowledge_brief, neighbors, inspect_knowledge,
               sql, describe_knowledge_schema, search_conversation_history, get_related_threads, resume_context):
        app.add_tool(anticipated(fn), name=fn.__name__, annotations=READ_ONLY)
    return app


def serve_stdio(db: Path, config_path: Path | None = None, workspace: str | None = None) -> None:
    build_server(db, config_path, workspace).run("stdio")


def serve_http(db: Path, host: str, port: int, config_path: Path | None = None, workspace: str | None = None) -> None:
    import anyio

    app = build_server(db, config_path, workspace)
    anyio.run(lambda: app.run_streamable_http_async(host=host, port=port))
