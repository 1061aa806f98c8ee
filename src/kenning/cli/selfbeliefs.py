"""``kenning self …``: the self-belief decomposer of seed 000 (issue 7).

Read commands (``analyze``, ``list``, ``show``, ``links``, ``conflicts``, ``versions``, ``annotate metrics``) take
``--json``. Writing commands run as side stages (one transaction and one run row each): ``backfill`` (the ingest
stage ``self`` on its own), ``rollback``, ``merge``, ``links --accept/--reject``, ``conflicts --resolve``,
``demote``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, LlmOpt, console, fail, llm_mode, open_vault, out, print_json, showing, \
    user_errors

self_app = typer.Typer(help="Beliefs about yourself (seed 000): what you say you are, value, like, can and feel.",
                       no_args_is_help=True)
annotate_app = typer.Typer(help="Samples for human review and scores against a gold file (seed 000 §7).",
                           no_args_is_help=True)
self_app.add_typer(annotate_app, name="annotate")

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Freeze the run clock at this UTC time.")]
STREAMS = ("identity", "state", "meta", "relational")
STATUSES = ("surface", "developing", "core")


def _run_side(vault, name: str, inputs: dict[str, Any], args: dict[str, Any], as_of: str | None = None,
              mode: str = "none"):
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import SIDE_STAGES

    return run_stage(vault.conn, SIDE_STAGES[name], vault.config, Clock.from_option(as_of), inputs=inputs,
                     args={**args, "as_of": as_of, "llm": mode}, llm_mode=mode)


def _node_ref(conn, ref: str) -> dict:
    from kenning.store import selfbeliefs as sql

    found = sql.find_nodes(conn, ref)
    exact = [n for n in found if n["belief_id"] == ref]
    if exact:
        return exact[0]
    if len(found) != 1:
        fail(f"{ref!r} matches {len(found)} self-belief nodes (`kenning self list` shows their ids)")
    return found[0]


# -- analyze ----------------------------------------------------------------------------------------------------
def _analysis_lines(d: dict) -> list[str]:
    sc = d["source_context"]
    lines = [f"source_context: mode {sc['mode']}, source_weight {sc['source_weight']}, context_id {sc['context_id']}"]
    lines.append("candidates:")
    for c in d["candidates"]:
        lines.append(f"  [{c['span'][0]}:{c['span'][1]}] {c['text']}")
    lines.append("atoms:")
    for a in d["atoms"]:
        f = a["epistemic_frame"]
        cond = f", if {f['conditional']}" if f["conditional"] else ""
        cond += ", no longer holds" if f.get("holds_now") is False else ""
        lines.append(f"  {a['polarity']:6} {a['belief_type']:17} {a['canonical_text']}  "
                     f"(scope {f['temporal_scope']}, {f['modality']}, degree {f['degree']}{cond}; "
                     f"confidence {a['confidence']}; hash {a['canonical_hash'][:12]})")
    if not d["atoms"]:
        lines.append("  (none)")
    if d["rejected"]:
        lines.append("rejected:")
        for r in d["rejected"]:
            lines.append(f"  {r['reason']}: {r['atom_text']}")
    return lines


@self_app.command("analyze")
def analyze_cmd(
    text: Annotated[str, typer.Argument(help="A statement, e.g. \"I'm usually patient, but lately I snap.\"")],
    mode: Annotated[Optional[str], typer.Option("--mode", help="Source mode: journaling | introspection | "
                                                "normal_chat | roleplay | heated | unknown (default: inferred).")]
    = None,
    llm: LlmOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Phases 1–6 of the decomposer on one statement, nothing stored: source context, candidates with spans, atoms
    with canonical text, hash, type, polarity, confidence and epistemic frame, and what was rejected and why."""
    from kenning.config import load_config
    from kenning.selfbelief.source_context import MODES

    if mode is not None and mode not in MODES:
        fail(f"--mode must be one of {', '.join(MODES)}")
    with user_errors():
        cfg = load_config(config, None)
    m = llm_mode(cfg, llm)
    if m == "none":
        from kenning.selfbelief.analyze import Analyzer

        d = Analyzer(cfg).analyze(text, mode=mode).as_dict()
    else:  # the model's calls are logged in the vault (replay answers from there)
        with open_vault(db, config) as vault, user_errors():
            inputs: dict[str, Any] = {"texts": [{"text": text, "mode": mode, "key": "analyze"}]}
            _run_side(vault, "self-analyze", inputs, {"texts": 1}, mode=m)
        d = inputs["report"][0].as_dict()
    if json_out:
        print_json(d)
        return
    for line in _analysis_lines(d):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


# -- list / show ------------------------------------------------------------------------------------------------
def node_view(n: dict, stats: dict | None) -> dict[str, Any]:
    score = orjson.loads(n["score_json"]) if n.get("score_json") else {}
    return {
        "belief_id": n["belief_id"], "statement": n["statement"], "canonical_text": n["canonical_text"],
        "belief_type": n["belief_type"], "polarity": n["polarity"], "stream": n.get("primary_stream"),
        "secondary_stream": n.get("secondary_stream"), "migrated_from": n.get("migrated_from"),
        "status": n["status"], "core_score": round(n["core_score"], 6), "activation": round(n["activation"], 6),
        "conflict_count": n["conflict_count"], "evidence": (stats or {}).get("n", 0),
        "first_said": (stats or {}).get("first_at"), "last_said": (stats or {}).get("last_at"),
        "n_contexts": score.get("n_contexts"), "created_at": n["created_at"],
        "merged_into": n.get("merged_into_belief_id"), "superseded_by": n.get("superseded_by_belief_id"),
    }


@self_app.command("list")
def list_cmd(
    stream: Annotated[Optional[str], typer.Option("--stream", help="identity | state | meta | relational")] = None,
    status: Annotated[Optional[str], typer.Option("--status", help="surface | developing | core")] = None,
    sort: Annotated[str, typer.Option("--sort", help="activation (seed §8.2) | core | evidence")] = "activation",
    limit: Annotated[int, typer.Option("--limit", help="How many.")] = 50,
    all_nodes: Annotated[bool, typer.Option("--all", help="Include merged, superseded and rolled-back nodes.")]
    = False,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """What you believe about yourself (seed §8.2): belief nodes with their stream and status, most active first."""
    from kenning.store import selfbeliefs as sql

    if stream is not None and stream not in STREAMS:
        fail(f"--stream must be one of {', '.join(STREAMS)}")
    if status is not None and status not in STATUSES:
        fail(f"--status must be one of {', '.join(STATUSES)}")
    if sort not in sql.SURFACE_ORDER:
        fail(f"--sort must be one of {', '.join(sql.SURFACE_ORDER)}")
    with open_vault(db, config, readonly=True) as vault:
        nodes = sql.surface(vault.conn, stream=stream, status=status, limit=limit, include_inactive=all_nodes,
                            order=sort)
        stats = sql.occurrence_stats(vault.conn, [n["belief_id"] for n in nodes])
    views = [node_view(n, stats.get(n["belief_id"])) for n in nodes]
    if json_out:
        print_json(views)
        return
    if not views:
        out.print("no self-beliefs yet (run `kenning ingest`, or `kenning self backfill`)"
                  if not (stream or status) else "no matching self-beliefs")
        return
    t = Table(show_edge=False)
    for col in ("id", "belief", "stream", "status", "said", "last said"):
        t.add_column(col, justify="right" if col == "said" else "left", no_wrap=col != "belief")
    for v in views:
        mark = " (conflict)" if v["conflict_count"] else ""
        t.add_row(v["belief_id"][:8], escape(v["statement"]) + mark, v["stream"] or "", v["status"],
                  f"{v['evidence']}×", (v["last_said"] or "")[:10])
    out.print(t)
    if len(views) >= limit:
        out.print(showing(len(views), None, "--limit N"), highlight=False, markup=False)
    out.print("(core score, activation and type: --json or `kenning self show ID`)", style="dim")


@self_app.command("show")
def show_cmd(node: Annotated[str, typer.Argument(help="A belief id (or its first characters).")],
             db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """One self-belief: its evidence (quotes with dates and epistemic frames), score parts, stream history,
    links and conflicts."""
    from kenning.store import selfbeliefs as sql

    with open_vault(db, config, readonly=True) as vault:
        n = _node_ref(vault.conn, node)
        bid = n["belief_id"]
        a = sql.get_assignment(vault.conn, bid) or {}
        stats = sql.occurrence_stats(vault.conn, [bid]).get(bid)
        occ = sql.all_occurrences(vault.conn, [bid])[bid]
        live = {o["occurrence_id"] for o in sql.live_occurrences(vault.conn, [bid])[bid]}
        texts = sql.message_texts(vault.conn, [o["message_id"] for o in occ])
        links = sql.links_of(vault.conn, bid, ("pending", "accepted", "rejected"))
        edges = sql.edges_of(vault.conn, [bid], None)
    view = node_view({**n, "primary_stream": a.get("primary_stream"), "secondary_stream": a.get("secondary_stream"),
                      "migrated_from": a.get("migrated_from")}, stats)
    evidence = []
    for o in occ:
        msg = texts.get(o["message_id"]) or {}
        spans = orjson.loads(o["raw_span"])
        quote = " … ".join((msg.get("text_raw") or "")[s["start"]:s["end"]] for s in spans)
        evidence.append({"occurrence_id": o["occurrence_id"], "quote": quote, "said_at": o["occurred_at"],
                         "conversation": msg.get("title"), "message_id": o["message_id"], "span": spans,
                         "epistemic_frame": orjson.loads(o["epistemic_frame"]), "source_weight": o["source_weight"],
                         "atom_confidence": o["atom_confidence"], "context_id": o["context_id"],
                         "resolution": o["resolution"], "match_confidence": o["match_confidence"],
                         "extractor_version": o["extractor_version"], "live": o["occurrence_id"] in live,
                         "deleted_at": o["deleted_at"]})
    view.update(score=orjson.loads(n["score_json"]) if n.get("score_json") else None, evidence=evidence,
                migration_history=orjson.loads(a.get("migration_history") or "[]"),
                links=[{"link_id": x["link_id"], "other": x["to_belief_id"] if x["from_belief_id"] == bid
                        else x["from_belief_id"], "status": x["status"], "confidence": x["confidence"]} for x in links],
                conflicts=[{"edge_id": e["edge_id"], "other": e["node_b_id"] if e["node_a_id"] == bid else e["node_a_id"],
                            "type": e["conflict_type"], "status": e["status"]} for e in edges])
    if json_out:
        print_json(view)
        return
    out.print(f"{view['statement']}  ({view['belief_type'].lower()}, {view['polarity']}, stream {view['stream']}, "
              f"{view['status']}, core {view['core_score']:.3f}, activation {view['activation']:.3f})",
              markup=False, highlight=False)
    out.print(f"id {bid}; canonical “{n['canonical_text']}”", markup=False, highlight=False)
    for e in evidence:
        f = e["epistemic_frame"]
        flag = "" if e["live"] else " [not counted]"
        out.print(f"  {(e['said_at'] or '?')[:10]} “{e['quote']}” — {f['temporal_scope']}, {f['modality']}; weight "
                  f"{e['source_weight']}, {e['resolution']} {e['match_confidence']:.2f}{flag}",
                  markup=False, highlight=False, soft_wrap=True)
    for h in view["migration_history"]:
        out.print(f"  stream {h['from']} → {h['to']} at {h['at'][:10]} ({h.get('reason')})", markup=False)
    for x in view["links"]:
        out.print(f"  tentative link {x['link_id'][:8]} to {x['other'][:8]}: {x['status']} ({x['confidence']:.2f})",
                  markup=False)
    for x in view["conflicts"]:
        out.print(f"  {x['type']} {x['edge_id'][:8]} with {x['other'][:8]}: {x['status']}", markup=False)


# -- links and merge (§8.3) -------------------------------------------------------------------------------------
def _link_view(link: dict, nodes: dict[str, dict]) -> dict[str, Any]:
    a, b = nodes.get(link["from_belief_id"], {}), nodes.get(link["to_belief_id"], {})
    sig = orjson.loads(link["signals"] or "{}")
    sims = [h.get("similarity") for h in sig.get("history", []) if h.get("similarity") is not None]
    return {"link_id": link["link_id"], "from_belief_id": link["from_belief_id"], "to_belief_id": link["to_belief_id"],
            "from_statement": a.get("statement"), "to_statement": b.get("statement"),
            "confidence": round(link["confidence"], 6), "status": link["status"],
            "status_reason": link["status_reason"], "support_both": link["support_both"],
            "support_one": link["support_one"], "similarity": max(sims) if sims else None,
            "last_support_at": link["last_support_at"], "merged_at": link["merged_at"]}


@self_app.command("links")
def links_cmd(
    accept: Annotated[Optional[list[str]], typer.Option("--accept", help="Accept this link (marks the pair for "
                                                        "`kenning self merge`; repeatable).")] = None,
    reject: Annotated[Optional[list[str]], typer.Option("--reject", help="Reject (close) this link; repeatable.")]
    = None,
    interactive: Annotated[bool, typer.Option("--interactive", "-i", help="Ask about each pending link: "
                                              "a(ccept) / r(eject) / s(kip) / q(uit).")] = False,
    status: Annotated[str, typer.Option("--status", help="Which to list: pending | accepted | rejected | all.")]
    = "pending",
    as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Tentative links (seed §3.3, §8.3): pairs of beliefs that may be the same. Accepting only marks a pair for
    merging — the merge itself is `kenning self merge A B`."""
    from kenning.store import selfbeliefs as sql

    decisions = [(x, "accept") for x in accept or []] + [(x, "reject") for x in reject or []]
    statuses = ("pending", "accepted", "rejected") if status == "all" else (status,)
    if status != "all" and status not in ("pending", "accepted", "rejected"):
        fail("--status must be pending, accepted, rejected or all")
    with open_vault(db, config, readonly=not (decisions or interactive)) as vault:
        links = sql.list_links(vault.conn, ["pending"] if interactive else list(statuses))
        nodes = sql.nodes_by_ids(vault.conn, [x for link in links for x in (link["from_belief_id"],
                                                                              link["to_belief_id"])])
        views = [_link_view(link, nodes) for link in links]
        if interactive:
            for v in views:
                out.print(f"{v['link_id'][:8]}  “{v['from_statement']}”  ≟  “{v['to_statement']}”  (confidence "
                          f"{v['confidence']:.2f}, similarity {v['similarity']})", markup=False, highlight=False)
                ans = typer.prompt("a(ccept) / r(eject) / s(kip) / q(uit)", default="s").strip().lower()[:1]
                if ans == "q":
                    break
                if ans in ("a", "r"):
                    decisions.append((v["link_id"], "accept" if ans == "a" else "reject"))
        if decisions:
            resolved = []
            for ref, d in decisions:
                link = sql.get_link_by_id(vault.conn, ref)
                if link is None:
                    fail(f"no single tentative link matches {ref!r} (`kenning self links --status all`)")
                resolved.append((link["link_id"], d))
            with user_errors():
                r = _run_side(vault, "self-links", {"decisions": resolved}, {"decisions": resolved}, as_of)
            if json_out:
                print_json(r.counts)
            else:
                for x in r.counts["links"]:
                    out.print(f"link {x['link_id'][:8]}: {x['status']}"
                              + (" — merge the pair with `kenning self merge`" if x["status"] == "accepted" else ""),
                              markup=False)
            return
    if json_out:
        print_json(views)
        return
    if not views:
        out.print(f"no {status if status != 'all' else ''} tentative links".replace("  ", " "))
        return
    t = Table(show_edge=False)
    for col in ("link", "belief A", "belief B", "conf", "sim", "both/one", "status"):
        t.add_column(col)
    for v in views:
        t.add_row(v["link_id"][:8], escape(v["from_statement"] or "?"), escape(v["to_statement"] or "?"),
                  f"{v['confidence']:.2f}", f"{v['similarity']:.2f}" if v["similarity"] is not None else "",
                  f"{v['support_both']}/{v['support_one']}", v["status"] + (f" ({v['status_reason']})"
                                                                           if v["status_reason"] else ""))
    out.print(t)


@self_app.command("merge")
def merge_cmd(a: Annotated[str, typer.Argument(help="The belief to fold in (id or prefix).")],
              b: Annotated[str, typer.Argument(help="The belief it becomes (id or prefix).")],
              as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Merge belief A into belief B (the explicit merge; tentative links never merge on their own)."""
    from kenning.selfbelief.merge import MergeError

    with open_vault(db, config) as vault:
        na, nb = _node_ref(vault.conn, a), _node_ref(vault.conn, b)
        try:
            r = _run_side(vault, "self-merge", {"a": na["belief_id"], "b": nb["belief_id"]},
                          {"a": na["belief_id"], "b": nb["belief_id"]}, as_of)
        except Exception as e:  # MergeError inside the stage: one clear line
            cause = getattr(e, "cause", None)
            if isinstance(cause, MergeError):
                fail(str(cause))
            with user_errors():
                raise
    if json_out:
        print_json(r.counts)
        return
    c = r.counts
    out.print(f"merged “{na['statement']}” into “{nb['statement']}”: {c['occurrences_moved']} occurrences moved, "
              f"{c['occurrences_folded']} folded, {c['links_moved']} links and {c['edges_moved']} conflicts re-pointed",
              markup=False, highlight=False)


# -- conflicts (§8.4) -------------------------------------------------------------------------------------------
def _edge_view(e: dict, nodes: dict[str, dict]) -> dict[str, Any]:
    a, b = nodes.get(e["node_a_id"], {}), nodes.get(e["node_b_id"], {})
    return {"edge_id": e["edge_id"], "conflict_type": e["conflict_type"], "detection_method": e["detection_method"],
            "node_a_id": e["node_a_id"], "node_b_id": e["node_b_id"], "a_statement": a.get("statement"),
            "b_statement": b.get("statement"), "status": e["status"], "evidence": orjson.loads(e["evidence"]),
            "created_at": e["created_at"], "observed_at": e["observed_at"], "resolved_at": e["resolved_at"],
            "resolution_method": e["resolution_method"], "resolution_reason": e["resolution_reason"],
            "winner_belief_id": e["winner_belief_id"]}


@self_app.command("conflicts")
def conflicts_cmd(
    resolve: Annotated[Optional[str], typer.Option("--resolve", help="Resolve this conflict (id or prefix).")] = None,
    resolve_all: Annotated[bool, typer.Option("--resolve-all", help="Resolve every active conflict.")] = False,
    by: Annotated[Optional[str], typer.Option("--by", help="temporal_precedence (newer wins) | evidence_weight | "
                                              "user_override (with --keep).")] = None,
    keep: Annotated[Optional[str], typer.Option("--keep", help="With --by user_override: the belief id (prefix) to "
                                                "keep, or 'both' (not a conflict).")] = None,
    status: Annotated[str, typer.Option("--status", help="Which to list: active | resolved | all.")] = "active",
    as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Contradictions (same belief, opposite polarity) and tensions (opposite beliefs) between your self-beliefs,
    and their resolution (seed §4.15, §8.4)."""
    from kenning.selfbelief.conflicts import METHODS
    from kenning.store import selfbeliefs as sql

    if status not in ("active", "resolved", "all"):
        fail("--status must be active, resolved or all")
    with open_vault(db, config, readonly=not (resolve or resolve_all)) as vault:
        if resolve or resolve_all:
            method = by or (vault.config.self_beliefs.conflicts.default_resolution if resolve_all else None)
            if method is None:
                fail("--resolve needs --by temporal_precedence | evidence_weight | user_override")
            if method not in METHODS:
                fail(f"--by must be one of {', '.join(METHODS)}")
            if method == "user_override" and not keep:
                fail("--by user_override needs --keep BELIEF (or --keep both)")
            if method == "user_override" and resolve_all:
                fail("--by user_override resolves one conflict at a time (--resolve ID)")
            if resolve:
                e = sql.get_edge_by_id(vault.conn, resolve)
                if e is None:
                    fail(f"no single conflict matches {resolve!r} (`kenning self conflicts --status all`)")
                if e["status"] != "active":
                    fail(f"conflict {e['edge_id'][:8]} is already {e['status']}")
                resolve = e["edge_id"]
            with user_errors():
                r = _run_side(vault, "self-conflicts", {"edge_id": resolve, "all": resolve_all, "method": method,
                                                         "keep": keep},
                              {"edge_id": resolve, "all": resolve_all, "method": method, "keep": keep}, as_of)
            if json_out:
                print_json(r.counts)
                return
            nodes = sql.nodes_by_ids(vault.conn, [x for d in r.counts["decisions"] for x in (d["winner"], d["loser"])
                                                  if x])
            for d in r.counts["decisions"]:
                if d["winner"] is None:
                    out.print(f"conflict {d['edge_id'][:8]} dismissed: both hold", markup=False)
                else:
                    out.print(f"conflict {d['edge_id'][:8]}: kept “{nodes[d['winner']]['statement']}” over "
                              f"“{nodes[d['loser']]['statement']}” ({d['reason']})", markup=False, highlight=False)
            if not r.counts["decisions"]:
                out.print("no active conflicts")
            return
        edges = sql.list_edges(vault.conn, ["active", "resolved"] if status == "all" else [status])
        nodes = sql.nodes_by_ids(vault.conn, [x for e in edges for x in (e["node_a_id"], e["node_b_id"])])
    views = [_edge_view(e, nodes) for e in edges]
    if json_out:
        print_json(views)
        return
    if not views:
        out.print(f"no {status} conflicts")
        return
    t = Table(show_edge=False)
    for col in ("conflict", "type", "belief A", "belief B", "sim", "status"):
        t.add_column(col)
    for v in views:
        sim = v["evidence"].get("similarity")
        st = v["status"] + (f" ({v['resolution_method']})" if v["resolution_method"] else "")
        t.add_row(v["edge_id"][:8], v["conflict_type"], escape(v["a_statement"] or "?"),
                  escape(v["b_statement"] or "?"), f"{sim:.2f}" if sim is not None else "", st)
    out.print(t)


# -- backfill / rollback / versions / demote (§6, §7) ------------------------------------------------------------
@self_app.command("backfill")
def backfill_cmd(
    limit: Annotated[Optional[int], typer.Option("--limit", help="At most this many experiences.")] = None,
    llm: LlmOpt = None, as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Detect self-statements in messages not read yet and run the decomposer on every experience the current
    extractor version has not processed (seed §6: experiences it already processed are skipped)."""
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.pipeline.stages import STAGES

    with open_vault(db, config) as vault:
        m = llm_mode(vault.config, llm)
        with user_errors():
            r = run_stage(vault.conn, STAGES["self"], vault.config, Clock.from_option(as_of),
                          inputs={"limit": limit}, args={"backfill": True, "limit": limit, "as_of": as_of, "llm": m},
                          llm_mode=m)
    if json_out:
        print_json({"run_id": r.run_id, **r.counts})
        return
    c = r.counts
    out.print(f"extractor version {c['extractor_version']}: {c.get('experiences_processed', 0)} experiences processed "
              f"({c.get('experiences_new', 0)} new), {c.get('nodes_created', 0)} beliefs created, "
              f"{c.get('nodes_matched', 0)} reinforced, {c.get('conflicts', 0)} conflicts, "
              f"{c.get('tentative_links', 0)} tentative links", markup=False)


@self_app.command("rollback")
def rollback_cmd(version: Annotated[str, typer.Argument(help="An extractor version (`kenning self versions`).")],
                 as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Soft-delete every occurrence an extractor version wrote and recompute the scores (seed §6). Its
    experiences become unprocessed for that version, so a later backfill redoes them."""
    from kenning.store import selfbeliefs as sql

    with open_vault(db, config) as vault:
        if not sql.version_known(vault.conn, version):
            known = ", ".join(v["extractor_version"] for v in sql.versions(vault.conn)) or "none"
            fail(f"no extractor version {version!r} in this vault (known: {known})")
        with user_errors():
            r = _run_side(vault, "self-rollback", {"version": version}, {"version": version}, as_of)
    if json_out:
        print_json(r.counts)
        return
    c = r.counts
    out.print(f"rolled back {version}: {c['occurrences_deleted']} occurrences soft-deleted, {c['experiences_reset']} "
              f"experiences reset, {c['nodes_affected']} beliefs rescored ({c['nodes_without_evidence']} left without "
              "evidence)", markup=False)


@self_app.command("versions")
def versions_cmd(db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Extractor versions seen in this vault, with the experiences and live occurrences of each."""
    from kenning.store import selfbeliefs as sql

    with open_vault(db, config, readonly=True) as vault:
        vs = sql.versions(vault.conn)
    if json_out:
        print_json(vs)
        return
    if not vs:
        out.print("no extractor versions yet")
    for v in vs:
        rb = f", rolled back {v['rolled_back_at'][:10]}" if v["rolled_back_at"] else ""
        out.print(f"{v['extractor_version']}  first seen {v['first_seen_at'][:10]}, {v['experiences']} experiences, "
                  f"{v['occurrences']} live occurrences{rb}", markup=False)


@self_app.command("demote")
def demote_cmd(node: Annotated[str, typer.Argument(help="A belief id (or prefix).")],
               to: Annotated[str, typer.Option("--to", help="state | meta | relational")],
               trigger: Annotated[str, typer.Option("--trigger", help="explicit_obsolescence | "
                                                    "sustained_conflict_low_activation")],
               note: Annotated[Optional[str], typer.Option("--note")] = None,
               as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None) -> None:
    """Move a belief out of the identity stream — only with an explicit trigger (the ratchet, seed §4.14)."""
    from kenning.selfbelief.streams import RatchetError

    if to not in STREAMS:
        fail(f"--to must be one of {', '.join(STREAMS)}")
    with open_vault(db, config) as vault:
        n = _node_ref(vault.conn, node)
        try:
            _run_side(vault, "self-demote", {"belief_id": n["belief_id"], "to": to, "trigger": trigger, "note": note},
                      {"belief_id": n["belief_id"], "to": to, "trigger": trigger}, as_of)
        except Exception as e:
            if isinstance(getattr(e, "cause", None), RatchetError):
                fail(str(e.cause))  # type: ignore[attr-defined]
            with user_errors():
                raise
    out.print(f"“{n['statement']}” moved to the {to} stream ({trigger})", markup=False, highlight=False)


# -- annotate (§7) ----------------------------------------------------------------------------------------------
@annotate_app.command("export")
def annotate_export(n: Annotated[int, typer.Argument(help="How many experiences to sample.")],
                    out_path: Annotated[Path, typer.Argument(metavar="OUT", help="A .jsonl file to write.")],
                    seed: Annotated[Optional[int], typer.Option("--seed", help="Sampling seed (default: config).")]
                    = None,
                    db: DbOpt = None, config: ConfigOpt = None) -> None:
    """Write N sampled experiences, in the gold format with Kenning's atoms prefilled, for a person to review."""
    from kenning.selfbelief.annotate import export_rows
    from kenning.store import selfbeliefs as sql

    with open_vault(db, config, readonly=True) as vault:
        exps = []
        for e in sql.experiences_for_export(vault.conn):
            meta = orjson.loads(e["metadata_json"]) if e["metadata_json"] else {}
            exps.append({**e, "text": (e["text_raw"] or "")[e["text_start"]:e["text_end"]], "mode": meta.get("mode"),
                         "selected_reason": orjson.loads(e["selected_reason_json"])})
        atoms = {}
        for eid, rows in sql.experience_atoms(vault.conn, [e["experience_id"] for e in exps]).items():
            atoms[eid] = [{"atom_text": r["canonical_text"] if r["polarity"] == "affirm" else r["raw_text"],
                           "belief_type": r["belief_type"], "polarity": r["polarity"],
                           "temporal_scope": orjson.loads(r["epistemic_frame"])["temporal_scope"],
                           "modality": orjson.loads(r["epistemic_frame"])["modality"],
                           "holds_now": orjson.loads(r["epistemic_frame"]).get("holds_now", True)} for r in rows]
        sd = seed if seed is not None else vault.config.self_beliefs.annotate.export_seed
    picked = export_rows(exps, atoms, n, sd)
    from kenning.privatefs import open_private

    with open_private(out_path, "w", encoding="utf-8") as f:
        for r in picked:
            f.write(orjson.dumps(r, option=orjson.OPT_SORT_KEYS).decode() + "\n")
    console.print(f"wrote {len(picked)} of {len(exps)} experiences to {out_path} (review each and set \"review\": "
                  "\"done\"; format: docs/self-beliefs.md)")


@annotate_app.command("metrics")
def annotate_metrics(
    gold: Annotated[Path, typer.Argument(metavar="GOLD.jsonl", help="Annotated statements (docs/self-beliefs.md).")],
    split: Annotated[Optional[str], typer.Option("--split", help="Only items of this split (e.g. dev, heldout).")]
    = None,
    errors: Annotated[int, typer.Option("--errors", help="Also list up to this many statements with mistakes.")] = 0,
    llm: LlmOpt = None, db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Precision, recall and F1 of atoms, and accuracy of belief type, polarity and temporal scope against a gold
    file (rules by default; --llm live|replay scores the LLM atomizer, its calls logged in / replayed from the
    vault)."""
    from kenning.config import load_config
    from kenning.selfbelief.annotate import GoldFormatError, evaluate, load_gold, predicted_atoms

    try:
        items = load_gold(gold)
    except GoldFormatError as e:
        fail(str(e))
    if split:
        items = [it for it in items if it.get("split") == split]
        if not items:
            fail(f"no statements of split {split!r} in {gold}")
    with user_errors():
        cfg = load_config(config, None)
    m = llm_mode(cfg, llm)
    if m == "none":
        from kenning.selfbelief.analyze import Analyzer

        an = Analyzer(cfg)
        report = evaluate(items, lambda it: predicted_atoms(an.analyze(it["text"], mode=it.get("mode"))),
                          cfg.self_beliefs.annotate.match_min_f1, errors)
        report["atomizer"] = "rules"
    else:
        with open_vault(db, config) as vault, user_errors():
            inputs: dict[str, Any] = {"texts": [{"text": it["text"], "mode": it.get("mode"), "key": it["id"]}
                                                for it in items]}
            r = _run_side(vault, "self-analyze", inputs, {"gold": str(gold), "texts": len(items)}, mode=m)
            analyses = {it["id"]: a for it, a in zip(items, inputs["report"])}
            report = evaluate(items, lambda it: predicted_atoms(analyses[it["id"]]),
                              vault.config.self_beliefs.annotate.match_min_f1, errors)
            report["atomizer"] = r.counts.get("atomizer")
            report["llm_mode"] = m
    if json_out:
        print_json(report)
        return
    t = Table(show_edge=False, title=f"{gold.name} ({report['atomizer']})")
    for col in ("set", "statements", "gold", "pred", "atom P", "atom R", "atom F1", "type acc", "polarity acc",
                "scope acc", "fully right"):
        t.add_column(col, justify="left" if col == "set" else "right")
    for key, b in report.items():
        if not isinstance(b, dict) or "atoms" not in b:
            continue
        t.add_row(key, str(b["statements"]), str(b["gold_atoms"]), str(b["predicted_atoms"]),
                  f"{b['atoms']['precision']:.3f}", f"{b['atoms']['recall']:.3f}", f"{b['atoms']['f1']:.3f}",
                  f"{b['belief_type']['accuracy']:.3f}", f"{b['polarity']['accuracy']:.3f}",
                  f"{b['temporal_scope']['accuracy']:.3f}", f"{b['fully_right']:.3f}")
    out.print(t)
    for e in report.get("errors", []):
        out.print(f"- {e['id']}: {e['text']}", markup=False, highlight=False, soft_wrap=True)
        for g in e["missed"]:
            out.print(f"    missed   {g['atom_text']} ({g['polarity']}, {g['temporal_scope']})", markup=False)
        for p in e["spurious"]:
            out.print(f"    spurious {p['atom_text']} ({p['polarity']}, {p['temporal_scope']})", markup=False)
        for fe in e["field_errors"]:
            g, p = fe["gold"], fe["pred"]
            out.print(f"    wrong    {g['atom_text']}: gold {g['polarity']}/{g['temporal_scope']}/"
                      f"{g.get('modality', '-')}/{g.get('holds_now', '-')}/{g['belief_type']}, got {p['atom_text']} "
                      f"{p['polarity']}/{p['temporal_scope']}/{p['modality']}/{p['holds_now']}/{p['belief_type']}",
                      markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(self_app, name="self")

