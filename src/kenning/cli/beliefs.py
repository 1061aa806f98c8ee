"""`kenning why`, `kenning beliefs …`, `kenning reindex`: the belief ledger on the command line (seed 002 "CLI")."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import orjson
import typer
from rich.table import Table

from kenning.cli.common import (ConfigOpt, DbOpt, JsonOpt, console, fail, open_vault, out, print_json, showing,
                                user_errors)

beliefs_app = typer.Typer(help="The belief ledger: list, history, supersede, export, verify, M1.", no_args_is_help=True)

WorkspaceOpt = Annotated[Optional[str], typer.Option("--workspace", "-w", help="Workspace (default: config "
                                                     "beliefs.default_workspace, i.e. personal).", show_default=False)]
LlmOpt = Annotated[Optional[str], typer.Option("--llm", help="Judge for model-judged checks: none (recorded as "
                                               "not_checked), live (the configured model; every call logged) or "
                                               "replay (only stored answers).", show_default=False)]

REASON_TEXT = {
    "contradicted_by_new_source": "contradicted by a new source",
    "elaborated": "elaborated — the new belief keeps it and says more",
    "manual_correction": "corrected by hand",
    "source_drifted": "its source drifted (the quote no longer matches)",
}


def _p(line: str = "") -> None:
    out.print(line, markup=False, highlight=False, soft_wrap=True)


def _d(ts: str | None) -> str:
    from kenning.beliefs.timeutil import day

    return day(ts) or "?"


def _source_lines(sources: list[dict], indent: str, lead: str = "") -> list[str]:
    lines = []
    for s in sources:
        where = s["raw_path"] or "?"
        if s.get("page_hint") is not None:
            where += f" (p. {s['page_hint']})"
        mark = {"verified": "✓ quote verified against the source now",
                "relocated": "✓ quote verified (it moved within the file)",
                "drifted": "✗ DRIFTED: the source no longer contains this quote",
                "source_missing": "✗ the source cannot be read any more"}[s["verification"]]
        lines += [f"{indent}{lead}{where} says:", f'{indent}  "{s["quote"]}"', f"{indent}  {mark}"]
    return lines


def _at(ts: str) -> str:
    return ts[:10] if ts.endswith("T23:59:59.999Z") else _d(ts)


HOW = {"belief_id": "belief id", "subject": "subject", "topic": "topic", "fts": "words in statements",
       "predicate": "what the question asks about", "entity": "who or what the question names",
       "vector": "statements that say the same in other words",
       "hybrid": "what the question asks about, its words and their meaning"}


def _ids(a: dict) -> str:
    ids = a["belief_ids"]
    return ids[0] if len(ids) == 1 else f"{ids[0]} +{len(ids) - 1} more"


def _day(ts: str | None) -> str:
    return ts[:10] if ts else "?"


def _said(a: dict) -> str:
    if a["occurrences"] <= 1:
        return ""
    first, last = _day(a["first_said"]), (_day(a["last_said"]) if a["last_said"] else "undated")
    return f" (said {a['occurrences']} times, {first}" + (f" … {last})" if last != first else ")")


def _answer_sources(a: dict, indent: str, shown: int, lead: str = "") -> list[str]:
    srcs = a["supporting_sources"]
    lines = _source_lines(srcs[:shown], indent, lead)
    if len(srcs) > shown:
        lines.append(f"{indent}… and {len(srcs) - shown} more quote(s) (--json lists them all)")
    return lines


def _clusters(contested: list[dict]) -> list[list[dict]]:
    """Contested answers that disagree with each other, together (in the answers' order)."""
    owner = {b: i for i, a in enumerate(contested) for b in a["belief_ids"]}
    parent = list(range(len(contested)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(contested):
        for other in a["contested_with"]:
            if other in owner:
                parent[find(i)] = find(owner[other])
    groups: dict[int, list[dict]] = {}
    for i, a in enumerate(contested):
        groups.setdefault(find(i), []).append(a)
    return list(groups.values())


def render_why(ans: dict, shown: int = 3) -> list[str]:
    """The answer as a person would want it: what is contested, what you hold now with its quotes and dates, what
    ended, then what it replaced and why (W34–W38)."""
    q, lines = ans["query"], []
    told = f" (as Kenning had been told by {ans['told_by']})" if ans.get("told_by") else ""
    if ans["match_type"] == "none":
        return [f'Nothing in workspace {ans["workspace"]} matches "{q}"{told}: no belief id, subject or topic, and no '
                "belief about what it asks, with its words or saying the same in other words."]
    how = HOW.get(ans["match_type"]) or "several ways: " + ", ".join(ans["match_types"])
    if ans.get("matched_predicates"):
        how += " (" + ", ".join(ans["matched_predicates"]) + ")"
    window = ""
    if ans.get("since") and ans.get("since") == ans.get("until"):
        window = f" in {ans['since']}"
    elif ans.get("since") or ans.get("until"):
        window = f" between {ans.get('since') or 'the beginning'} and {ans.get('until') or 'now'}"
    lines.append(f'Why you believe what you believe about "{q}"{window}{told} (matched by {how}; workspace '
                 f'{ans["workspace"]})')
    answers = ans.get("answers", [])
    contested = [a for a in answers if a["status"] == "contested"]
    held = [a for a in answers if a["status"] == "current" and a["matched"]]
    ended = [a for a in answers if a["status"] == "ended" and a["matched"]]
    replaced = [a for a in answers if a["status"] == "superseded" and a["matched"]]
    others = [a for a in answers if not a["matched"] and a["status"] != "contested"]
    at = ans.get("status_at")
    if at:   # statuses are taken at the window's end: what you believed then
        lines.append("")
        lines.append(f"On {_at(at)} you believed:" if held or contested else
                     f"On {_at(at)} you held no belief about this.")
    if contested:
        lines += ["", ("Contested then" if at else "Contested") + " — you have said both, and they cannot both hold:"]
        for n, cluster in enumerate(_clusters(contested)):
            if n:
                lines.append("")
            for i, a in enumerate(cluster):
                if i:
                    lines.append("    vs")
                lines.append(f"  • {a['statement']}{_said(a)}  [{_ids(a)}]")
                lines += _answer_sources(a, "      ", min(shown, 2))
        lines.append("  (if they do not conflict: kenning beliefs undispute ID --with OTHER --reason \"…\")")
    label = "Held then" if at else ("Still believed now" if window else "Now")
    for a in held:
        lines.append("")
        lines.append(f"{label}: {a['statement']}")
        meta = [f"believed since {_day(a['first_said'])}"]
        if a["occurrences"] > 1:
            meta.append(f"said {a['occurrences']} times, last "
                        + (_day(a["last_said"]) if a["last_said"] else "undated"))
        if a["source_valid_from"] or a["source_valid_to"]:
            meta.append(f"the source says it holds {_d(a['source_valid_from']) if a['source_valid_from'] else '…'} – "
                        f"{_d(a['source_valid_to']) if a['source_valid_to'] else '…'}")
        meta.append(a["wiki_page"])
        lines.append("  " + " · ".join(meta) + f"  [{_ids(a)}]")
        lines += _answer_sources(a, "  ", shown, "because ")
    if not held and not contested and not window:
        lines.append("")
        lines.append("You no longer hold a current belief about this.")
    if ended:
        lines.append("")
        lines.append("No longer held — the source says it ended:")
        for a in ended:
            lines.append(f"  {a['statement']}{_said(a)}  [{_ids(a)}]")
            if a["superseded_at"] and not a["supersession_reason"]:
                lines.append(f"    you said it in the past tense on {_day(a['superseded_at'])}")
            else:
                lines.append(f"    you said so on {_day(a['first_said'])}; the source says it held "
                             f"{_day(a['source_valid_from']) if a['source_valid_from'] else '…'} – "
                             f"{_day(a['source_valid_to'])}")
            lines += _answer_sources(a, "    ", min(shown, 1))
    if replaced and ans["history"]:
        lines.append("")
        lines.append("What it replaced:" if (held or contested) and not window else
                     "What you believed, and what replaced it:")
        for a in replaced:
            lines.append(f"  {a['statement']}{_said(a)}  [{_ids(a)}]")
            reason = REASON_TEXT.get(a["supersession_reason"] or "", a["supersession_reason"] or "no reason recorded")
            by = f" by {a['superseded_by_belief_id']}" if a["superseded_by_belief_id"] else ""
            lines.append(f"    believed {_day(a['first_said'])} → {_day(a['superseded_at'])}; replaced{by}: {reason}")
            lines += _answer_sources(a, "    ", shown)
    if others:
        lines.append("")
        lines.append("Beliefs that disagree:")
        for a in others:
            lines.append(f"  {a['statement']}  [{_ids(a)}, since {_day(a['first_said'])}, {a['status']}]")
    if len(ans["supersession_chain"]) > 1:
        lines.append("")
        lines.append("Chain: " + " → ".join(ans["supersession_chain"]))
    if ans["truncated"]:
        lines.append(f"(showing the newest of {ans['total_matches']} matches)")
    return lines


def why_command(
    query: Annotated[str, typer.Argument(help="A belief id, a subject, a topic, or a question in plain words.")],
    workspace: WorkspaceOpt = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only beliefs current at or after this date.")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Only beliefs current at or before this date.")] = None,
    no_history: Annotated[bool, typer.Option("--no-history", help="Leave out superseded beliefs.")] = False,
    predicate: Annotated[Optional[str], typer.Option("--predicate", help="With a subject: only this relation.")] = None,
    told_by: Annotated[Optional[str], typer.Option("--told-by", help="Answer as Kenning had been told by this date "
                                                   "(what it had imported then).")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Why do I believe this? The belief (current, contested, ended or replaced), its verbatim source quotes
    (re-verified now), when you said it, and its history. QUERY may be a question: "where do I live?"."""
    from kenning.beliefs.timeutil import TimeValueError
    from kenning.beliefs.why import WhyError

    with open_vault(db, config, readonly=True) as vault:
        try:
            ans = vault.why(query, workspace=workspace, since=since, until=until,
                            include_history=False if no_history else None, predicate=predicate, told_by=told_by)
        except (WhyError, TimeValueError) as e:
            fail(str(e))
        shown = vault.config.beliefs.why.sources_shown
    if json_out:
        print_json(ans)
    else:
        for line in render_why(ans, shown):
            _p(line)


@beliefs_app.command("list")
def beliefs_list(
    workspace: WorkspaceOpt = None,
    topic: Annotated[Optional[str], typer.Option("--topic", help="Only this topic.")] = None,
    current_only: Annotated[bool, typer.Option("--current-only", help="Only beliefs not superseded.")] = False,
    all_workspaces: Annotated[bool, typer.Option("--all-workspaces", help="Every workspace.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="At most this many, newest first.")] = 200,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Beliefs, newest first."""
    with open_vault(db, config, readonly=True) as vault:
        ws = None if all_workspaces else (workspace or vault.config.beliefs.default_workspace)
        items, total = vault.beliefs(workspace=ws, topic=topic, current_only=current_only, limit=limit)
    if json_out:
        print_json({"workspace": ws, "total": total, "beliefs": items})
        return
    t = Table(show_edge=False, title=f"{total} belief(s)" + (f" in {ws}" if ws else ""))
    for col in ("belief", "statement", "topic", "since", "until", "why replaced"):
        t.add_column(col, overflow="fold")
    for e in items:
        t.add_row(e["belief_id"], e["statement"], e["topic"], _d(e["asserted_at"]),
                  _d(e["superseded_at"]) if e["superseded_at"] else "current", e["supersession_reason"] or "")
    out.print(t)
    if len(items) < total:
        out.print(showing(len(items), total, "--limit N"), highlight=False, markup=False)


@beliefs_app.command("history")
def beliefs_history(
    belief_id: Annotated[str, typer.Argument(help="The belief.")],
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """A belief's supersession chain, oldest first, with the reason for every change."""
    with open_vault(db, config, readonly=True) as vault:
        hist = vault.belief_history(belief_id)
    if hist is None:
        fail(f"no belief {belief_id}")
    if json_out:
        print_json(hist)
        return
    for i, e in enumerate(hist["chain"]):
        here = "  ← this one" if e["belief_id"] == belief_id else ""
        _p(f"{i + 1}. {e['statement']}  [{e['belief_id']}]{here}")
        span = f"{_d(e['asserted_at'])} → {_d(e['superseded_at']) if e['superseded_at'] else 'now'}"
        _p(f"   believed {span} · asserted in run {e['asserted_in_run']}")
        if e["superseded_at"]:
            reason = REASON_TEXT.get(e["supersession_reason"] or "", e["supersession_reason"] or "no reason recorded")
            _p(f"   replaced{' by ' + e['superseded_by_belief_id'] if e['superseded_by_belief_id'] else ''}: "
               f"{reason} (run {e['superseded_in_run']})")
        for line in _source_lines(e["supporting_sources"], "   "):
            _p(line)


@beliefs_app.command("supersede")
def beliefs_supersede(
    old: Annotated[str, typer.Argument(help="The belief that stops being believed.")],
    new: Annotated[str, typer.Argument(help="The belief that replaces it.")],
    reason: Annotated[str, typer.Option("--reason", help="contradicted_by_new_source | elaborated | "
                                        "manual_correction | source_drifted")],
    note: Annotated[Optional[str], typer.Option("--note", help="Why, in your words.")] = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (the supersession time).")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Record by hand that NEW supersedes OLD (kept as your decision; reapplied after every import and rebuild)."""
    from kenning.beliefs.ledger import BeliefNotFound, BeliefPublishError
    from kenning.pipeline.runner import StageFailed

    with open_vault(db, config) as vault:
        try:
            r = vault.supersede(old, new, reason, as_of=as_of, note=note)
        except StageFailed as e:
            if isinstance(e.cause, (BeliefNotFound, BeliefPublishError)):
                fail(str(e.cause))
            raise
    if json_out:
        print_json({"run_id": r.run_id, **r.counts})
    else:
        console.print(f"{old} is now superseded by {new} ({reason}) as of {r.counts['superseded_at']}")


def _override_command(fn: Any) -> Any:
    from kenning.beliefs.ledger import BeliefNotFound, BeliefPublishError
    from kenning.pipeline.runner import StageFailed

    try:
        return fn()
    except StageFailed as e:
        if isinstance(e.cause, (BeliefNotFound, BeliefPublishError)):
            fail(str(e.cause))
        raise


@beliefs_app.command("restore")
def beliefs_restore(
    belief_id: Annotated[str, typer.Argument(help="The belief to hold again.")],
    reason: Annotated[str, typer.Option("--reason", help="Why, in your words (recorded).")],
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Undo your `supersede` or a drift mark: the belief is current again (recorded; reapplied after every
    import and rebuild)."""
    with open_vault(db, config) as vault:
        r = _override_command(lambda: vault.restore_belief(belief_id, reason, as_of=as_of))
    if json_out:
        print_json({"run_id": r.run_id, **r.counts})
    else:
        console.print(f"{belief_id} is held again (undid: {', '.join(r.counts['undid'])}); reason recorded",
                      highlight=False)


@beliefs_app.command("undispute")
def beliefs_undispute(
    belief_id: Annotated[str, typer.Argument(help="A belief `why` shows as contested.")],
    reason: Annotated[str, typer.Option("--reason", help="Why they do not conflict, in your words (recorded).")],
    other: Annotated[Optional[str], typer.Option("--with", help="Only with this belief (default: with any).")] = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Say that a contested belief does not conflict (with OTHER, or with anything): `why` shows it as held."""
    with open_vault(db, config) as vault:
        r = _override_command(lambda: vault.undispute_belief(belief_id, reason, other=other, as_of=as_of))
    if json_out:
        print_json({"run_id": r.run_id, **r.counts})
    else:
        console.print(f"{belief_id} is no longer contested" + (f" with {other}" if other else "") + "; reason recorded",
                      highlight=False)


@beliefs_app.command("export")
def beliefs_export(
    workspace: WorkspaceOpt = None,
    all_workspaces: Annotated[bool, typer.Option("--all-workspaces", help="Every workspace.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="json or csv.")] = "json",
    out_path: Annotated[Optional[Path], typer.Option("--out", help="Write here instead of stdout.")] = None,
    db: DbOpt = None, config: ConfigOpt = None,
) -> None:
    """Every wiki_beliefs row (the table's own columns), as JSON or CSV."""
    from kenning.store import beliefs as beliefs_sql

    if fmt not in ("json", "csv"):
        fail("--format must be json or csv")
    with open_vault(db, config, readonly=True) as vault:
        ws = None if all_workspaces else (workspace or vault.config.beliefs.default_workspace)
        rows = [{c: r[c] for c in beliefs_sql.BELIEF_COLUMNS} for r in beliefs_sql.iter_all_beliefs(vault.conn, ws)]
    if fmt == "json":
        for r in rows:
            for c in ("footnote_ids", "provenance_ids", "contradicting_belief_ids"):
                r[c] = orjson.loads(r[c]) if r[c] else ([] if c != "contradicting_belief_ids" else None)
        text = orjson.dumps({"workspace": ws, "beliefs": rows}, option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(beliefs_sql.BELIEF_COLUMNS), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    if out_path:
        from kenning.privatefs import write_private_text

        write_private_text(out_path, text)
        console.print(f"wrote {len(rows)} beliefs to {out_path}")
    else:
        sys.stdout.write(text)


@beliefs_app.command("verify")
def beliefs_verify(
    workspace: WorkspaceOpt = None,
    all_workspaces: Annotated[bool, typer.Option("--all-workspaces", help="Every workspace.")] = False,
    mark_drifted: Annotated[bool, typer.Option("--mark-drifted", help="Also mark every current belief citing a "
                                               "drifted quote as superseded (source_drifted).")] = False,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (with --mark-drifted).")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Re-hash every supporting quote against its live source; list drifted quotes (exit code 3 if any)."""
    with open_vault(db, config, readonly=not mark_drifted) as vault:
        ws = None if all_workspaces else (workspace or vault.config.beliefs.default_workspace)
        with user_errors():
            report = vault.verify_beliefs(workspace=ws, mark_drifted=mark_drifted, as_of=as_of)
    bad = report["drifted"] + report["source_missing"]
    if json_out:
        print_json(report)
    else:
        _p(f"{report['quotes_checked']:,} quotes checked in {report['seconds']:.3f}s: {report['verified']:,} verified, "
           f"{report['relocated']:,} moved within their file, {report['drifted']:,} drifted, "
           f"{report['source_missing']:,} with a missing source")
        for p in report["drifted_quotes"][:50]:
            where = p["raw_path"] or f"message {p['message_id']}"
            _p(f"  ✗ {p['status']}: {where} [{p['char_start']}:{p['char_end']}] \"{p['quote'][:90]}\"")
            _p(f"      cited by {', '.join(p['belief_ids']) or 'no belief'}")
        if mark_drifted:
            _p(f"{report['beliefs_marked_drifted']} belief(s) marked source_drifted")
        elif bad:
            _p("(beliefs are not changed; `kenning beliefs verify --mark-drifted` marks them source_drifted)")
    if bad:
        raise typer.Exit(3)


@beliefs_app.command("m1")
def beliefs_m1(
    workspace: WorkspaceOpt = None,
    sample: Annotated[Optional[int], typer.Option("--sample", help="How many current beliefs (default: config "
                                                  "beliefs.m1.sample_size, 50).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Sampling seed (default: config).")] = None,
    llm: LlmOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Citation fidelity M1 = supports / total over sampled current beliefs (hash check first, then the judge)."""
    from kenning.beliefs.judge import JudgeUnavailable, judge_for
    from kenning.cli.common import llm_mode

    with open_vault(db, config) as vault:  # writable: a model judge's calls are logged in the vault
        try:
            judge = judge_for(llm_mode(vault.config, llm) if llm else None, vault.config.beliefs.verifier.judge)
        except JudgeUnavailable as e:
            fail(str(e))
        with user_errors():
            report = vault.m1(judge, workspace=workspace, sample=sample, seed=seed)
    if json_out:
        print_json(report)
        return
    v = report["votes"]
    _p(f"M1 on {report['sample_size']} of {report['population']} current beliefs in {report['workspace']} "
       f"(judge: {report['judge']}):")
    _p(f"  hash gate failed: {report['hash_gate_failed']} (counted as does_not_support, no model call)")
    _p(f"  supports {v['supports']}, partially {v['partially_supports']}, does not {v['does_not_support']}, "
       f"not checked {v['not_checked']}")
    _p(f"  M1 = {report['m1']}" if report["m1"] is not None else f"  M1 = n/a: {report['m1_note']}")


def reindex_command(
    rebuild_beliefs: Annotated[bool, typer.Option("--rebuild-beliefs", help="Rebuild the belief ledger: every "
                                                  "workspace's *.beliefs.json sidecars, then the beliefs from your "
                                                  "chats and self-beliefs.")] = False,
    full: Annotated[bool, typer.Option("--full/--update", help="Rebuild the search index from scratch (default) or "
                                       "only bring it up to date.")] = True,
    vectors: Annotated[bool, typer.Option("--vectors", help="Only make the search vectors an import left to do "
                                          "(resumable; waits for a background fill if one runs). Nothing else is "
                                          "rebuilt.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    workspace: WorkspaceOpt = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Freeze the run clock.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Rebuild derived indexes: the search index (FTS5 + vectors), the belief FTS index, and with
    --rebuild-beliefs the ledger from the sidecars, stage 5's claims and the self-belief nodes (the same rows
    every time). Everything rebuilt comes from the raw layer and sidecars."""
    from kenning.store import beliefs as beliefs_sql
    from kenning.store.connection import transaction

    from kenning.cli.main import print_run_result
    from kenning.cli.vector_fill import fill_foreground

    if vectors:
        with open_vault(db, config) as vault, user_errors():
            done = fill_foreground(vault, as_of=as_of, quiet=quiet or json_out)
        if json_out:
            print_json(done)
            return
        lane = done["vector_lane"]
        console.print(f"vectors: {done['counts'].get('vectors_written', 0):,} written; {lane['embedded']:,} of "
                      f"{lane['total']:,} search documents have vectors", highlight=False)
        return
    with open_vault(db, config) as vault, user_errors():
        if rebuild_beliefs:
            results = _rejections(lambda: vault.rebuild_beliefs(workspace=workspace, as_of=as_of))
        else:
            with transaction(vault.conn):
                beliefs_sql.fts_rebuild(vault.conn)
            results = []
        n = beliefs_sql.count_beliefs(vault.conn)
        search = vault.reindex(full=full, as_of=as_of, defer_vectors=True)
        # a large rebuild leaves its vectors to the fill (issue 24 §1): make them now, with a progress bar
        filled = (fill_foreground(vault, as_of=as_of, quiet=quiet or json_out)
                  if not vault.vector_lane()["complete"] else None)
    if json_out:
        print_json({"runs": [{"stage": r.stage, "run_id": r.run_id, "counts": r.counts,
                              "warnings": [e[3] for e in r.events if e[2] == "WARN"]} for r in results],
                    "beliefs": n, "search_index": {"run_id": search.run_id, "counts": search.counts},
                    **({"vectors": filled} if filled else {})})
        return
    for r in results:
        print_run_result(r)
    console.print(f"belief index rebuilt: {n:,} beliefs")
    console.print(f"search index {'rebuilt' if full else 'updated'}: {search.counts}")


def _rejections(fn: Any) -> Any:
    """Run ``fn``; a verifier rejection becomes its list of reasons and exit code 2."""
    from kenning.beliefs.wiki_import import WikiRunRejected
    from kenning.pipeline.runner import StageFailed

    try:
        return fn()
    except StageFailed as e:
        if isinstance(e.cause, WikiRunRejected):
            print_rejection(e.cause, e.run_id)
            raise typer.Exit(2)
        raise


def print_rejection(rej: Any, run_id: str) -> None:
    console.print(f"[bold red]rejected:[/] {rej.root} — nothing was committed (run {run_id[:8]}, "
                  "`kenning runs --failed`):", highlight=False)
    from rich.markup import escape

    for f in rej.findings:
        console.print(f"  [yellow]{f.check}/{f.code}[/] {escape(f.message)}", highlight=False)
