"""`kenning review`: the §42A.2 back-link review queue and its verdicts (issue 20 part 3; decisions G15–G22).

Every verdict is one knowledge commit that moves α/β of the node it concerns and changes the edge; `kenning
rollback <commit>` undoes it, and the next run forgets the verdict."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, LlmOpt, fail, llm_mode, open_vault, out, print_json
from kenning.cli.knowledge import AsOfOpt, knowledge_errors

review_app = typer.Typer(
    help="Review what the back-link pipeline found: candidate relations and new-entity candidates, most useful "
         "first (impact × uncertainty × recency). Run with no subcommand to see a page of the queue.",
    invoke_without_command=True)


def _receipt(res: dict, as_json: bool, what: str) -> None:
    if as_json:
        print_json(res)
    elif res.get("created"):
        out.print(f"{what}: commit {res['commit_id']} (undo: kenning rollback {res['commit_id'][:12]})")
    else:
        out.print(f"{what}: already so; nothing changed")


@review_app.callback()
def review_queue(
    ctx: typer.Context,
    page: Annotated[int, typer.Option("--page", min=1, help="Page number (1 = the most useful items).")] = 1,
    page_size: Annotated[Optional[int], typer.Option("--page-size", min=1, max=100,
                                                     help="Items per page (default 25, at most 100).")] = None,
    kind: Annotated[Optional[str], typer.Option("--kind", help="Only candidate_relation or "
                                                               "entity_creation_candidate items.")] = None,
    db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """Show a page of the pending review queue."""
    if ctx.invoked_subcommand is not None:
        return
    with open_vault(db, config, readonly=True) as vault:
        res = vault.review_queue(page=page, page_size=page_size, item_kind=kind)
    if as_json:
        print_json(res)
        return
    if not res["items"]:
        out.print("nothing to review" + (f" on page {page}" if page > 1 else "") +
                  " (the queue fills when `kenning ingest` finds relations it is unsure of)")
        return
    t = Table(title=f"review queue — page {res['page']} of {max(1, -(-res['total_items'] // res['page_size']))} "
                    f"({res['total_items']} pending)")
    for col in ("ref", "kind", "item", "why", "score", "actions"):
        t.add_column(col)
    for i in res["items"]:
        t.add_row(i["primary_ref"][:12], i["item_kind"].replace("_", " "), i["title"], i["description"],
                  f"{i['sort_score']:.3f}", " ".join(i["available_actions"]))
    out.print(t)
    out.print("act on an item: kenning review approve|reject|correct <ref> …, kenning review entity <ref> --action …; "
              "details: kenning review show <ref>")


@review_app.command("show")
def show(ref: Annotated[str, typer.Argument(help="Bundle id (or its first 6+ characters).")],
         db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """One evidence bundle: its counts, scores, verdict and supporting mentions."""
    with open_vault(db, config, readonly=True) as vault:
        b = vault.review_bundle(ref)
    if b is None:
        fail(f"no evidence bundle {ref!r} (see `kenning review`)", code=2)
    if as_json:
        print_json(b)
        return
    out.print(f"{b['source_name']} —{b['relation_type']}→ {b['target_name']}  [{b['promotion_state']}, "
              f"verdict {b['user_verdict']}]")
    out.print(f"support {b['support_count']} in {b['distinct_observation_count']} message(s), "
              f"{b['distinct_surface_count']} surface(s), {b['distinct_work_context_count']} conversation(s); "
              f"contradictions {b['contradiction_count']}; salience {b['salience_score']:.2f}, hub penalty "
              f"{b['hub_penalty']:.2f}, evidence {b['evidence_score']:.3f}")
    for m in b["mentions"][:10]:
        out.print(f"  {m['mention_id'][:12]} “{m['mention_text']}” ({m['resolution_method']}, "
                  f"{m['polarity']}): {m['context_window'][:120]}")


def _verdict(action: str, ref: str, as_of: str | None, db, config, as_json: bool, what: str, **args) -> None:
    with open_vault(db, config) as vault, knowledge_errors():
        res = vault.review(action, ref, as_of=as_of, **args)
    _receipt(res, as_json, what)


@review_app.command("approve")
def approve(ref: Annotated[str, typer.Argument(help="Bundle id (or its first 6+ characters).")],
            as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Approve a candidate relation: the edge becomes active and the target's α grows by 1.0."""
    _verdict("approve", ref, as_of, db, config, as_json, "approved")


@review_app.command("reject")
def reject(ref: Annotated[str, typer.Argument(help="Bundle id (or its first 6+ characters).")],
           reason: Annotated[str, typer.Option("--reason", help="wrong_entity | no_relationship | "
                                                                "wrong_relation_type | spurious_mention")] = "no_relationship",
           as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Reject a candidate relation: never promoted, its edge ended, the target's β grows by 1.0."""
    _verdict("reject", ref, as_of, db, config, as_json, "rejected", reason=reason)


@review_app.command("correct")
def correct(ref: Annotated[str, typer.Argument(help="Bundle id (or its first 6+ characters).")],
            to: Annotated[str, typer.Option("--to", help="The right relation type (e.g. collaborated_with).")],
            as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Correct a candidate's relation type: its mentions move to the corrected (approved) relation."""
    _verdict("correct", ref, as_of, db, config, as_json, f"relation corrected to {to}", to_relation=to)


@review_app.command("retarget")
def retarget(mention: Annotated[str, typer.Argument(help="Mention id (see `kenning review show <ref>`).")],
             to: Annotated[str, typer.Option("--to", help="The node the mention really names.")],
             reason: Annotated[str, typer.Option("--reason", help="wrong_entity | merge_to_existing | "
                                                                  "reviewer_correction")] = "wrong_entity",
             as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Point a mention at the right node (β to the old target, α to the new one)."""
    _verdict("retarget", mention, as_of, db, config, as_json, "retargeted", new_target=to, reason=reason)


@review_app.command("suppress")
def suppress(text: Annotated[str, typer.Argument(help="The mention text to stop treating as evidence.")],
             span_class: Annotated[str, typer.Option("--class", help="Its span class (canonical_alias, "
                                                                     "organization_name, …).")] = "canonical_alias",
             scope: Annotated[str, typer.Option("--scope", help="global | work_context | surface_specific")] = "global",
             reason: Annotated[str, typer.Option("--reason", help="Why (kept with the verdict).")] = "noise",
             as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Suppress a mention pattern: matching mentions stop counting as evidence."""
    _verdict("suppress", text, as_of, db, config, as_json, f"suppressed “{text}”", span_class=span_class,
             scope=scope, reason=reason)


@review_app.command("entity")
def entity(ref: Annotated[str, typer.Argument(help="Entity-candidate id (or its first characters).")],
           action: Annotated[str, typer.Option("--action", help="create_new | link_existing | dismiss")],
           name: Annotated[Optional[str], typer.Option("--name", help="create_new: the name to use.")] = None,
           node: Annotated[Optional[str], typer.Option("--node", help="link_existing: the node it names.")] = None,
           reason: Annotated[str, typer.Option("--reason", help="dismiss: noise | duplicate_of_existing | "
                                                                "generic_reference | not_durable")] = "noise",
           as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Resolve a new-entity candidate: create it (an existing name match links instead), link it to a node (its
    text becomes an alias), or dismiss it."""
    _verdict("entity", ref, as_of, db, config, as_json, action.replace("_", " "), resolution=action,
             canonical_name=name, existing_node_id=node, reason=reason)


@review_app.command("merges")
def merges(page: Annotated[int, typer.Option("--page", min=1, help="Page number (1 = strongest evidence).")] = 1,
           page_size: Annotated[int, typer.Option("--page-size", min=1, max=100, help="Items per page.")] = 25,
           db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Show the merge queue: pairs `kenning maintain` thinks may be one person or thing (a typo, a nickname, a
    first name only …) with the evidence. Answer each with `kenning review merge <ref>` or `keep-apart <ref>`."""
    with open_vault(db, config, readonly=True) as vault:
        res = vault.merge_candidates(page=page, page_size=page_size)
    if as_json:
        print_json(res)
        return
    if not res["items"]:
        out.print("no merge candidates" + (f" on page {page}" if page > 1 else "")
                  + " (`kenning maintain` finds them)")
        return
    t = Table(title=f"merge candidates — page {res['page']} ({res['total_items']} pending)")
    for col in ("ref", "evidence", "names", "why"):
        t.add_column(col)
    for i in res["items"]:
        a, b = i["nodes"]
        t.add_row(i["ref"][:12], i["evidence"] or "", f"{a['name']} ↔ {b['name']}", i["reason"])
    out.print(t)
    out.print("answer: kenning review merge <ref> (undo: kenning rollback <commit>) | kenning review keep-apart <ref>")


def _merge_answer(ref: str, action: str, as_of, db, config, as_json: bool) -> None:
    with open_vault(db, config) as vault, knowledge_errors():
        res = vault.resolve_merge(ref, action, as_of=as_of)
    if as_json:
        print_json(res)
    elif res["status"] == "unchanged":
        out.print(f"{res['ref'][:12]}: {res['detail']}; nothing changed")
    elif res["commit_id"]:
        out.print(f"{res['detail']}: commit {res['commit_id']} (undo: kenning rollback {res['commit_id'][:12]})")
    else:
        out.print(f"{res['ref'][:12]}: {res['detail']}")


@review_app.command("merge")
def merge(ref: Annotated[str, typer.Argument(help="Merge-candidate ref (its first 6+ characters).")],
          as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Merge a candidate pair into one node (the stronger one stays; names become aliases, edges move over)."""
    _merge_answer(ref, "merge", as_of, db, config, as_json)


@review_app.command("keep-apart")
def keep_apart(ref: Annotated[str, typer.Argument(help="Merge-candidate ref (its first 6+ characters).")],
               as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Two different people or things: never propose or fold this pair again."""
    _merge_answer(ref, "keep_apart", as_of, db, config, as_json)


@review_app.command("run")
def run(sweep: Annotated[bool, typer.Option("--sweep", help="Historical sweep: scan every message again (new "
                                                             "aliases find old mentions; 500-candidate cap).")] = False,
        as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Run the back-link stage now (scan new messages, aggregate, promote, refresh the queue)."""
    with open_vault(db, config) as vault:
        res = vault.backlinks(as_of=as_of, sweep=sweep)
    if as_json:
        print_json(res.counts)
        return
    c = res.counts
    out.print(f"back-links: {c.get('observations_scanned', 0)} message(s) scanned, {c.get('mentions_recorded', 0)} "
              f"mention(s), {c.get('edges_promoted', 0)} edge(s) promoted, {c.get('review_items', 0)} to review")


@review_app.command("tier4")
def tier4(limit: Annotated[int, typer.Option("--limit", min=1, help="Queue items to resolve now.")] = 50,
          llm: LlmOpt = None, as_of: AsOfOpt = None, db: DbOpt = None, config: ConfigOpt = None,
          as_json: JsonOpt = False) -> None:
    """Resolve queued unresolved mentions with the configured model (closed candidate set, strict JSON; an item
    failing 5 times is dead-lettered). Every call is logged in the vault and replayable with --llm replay.
    Then run `kenning review run` to aggregate what resolved."""
    from kenning.llm.errors import ModelLayerError
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import StageFailed
    from kenning.upkeep.tier4 import run_tier4_queue

    with open_vault(db, config) as vault:
        mode = llm_mode(vault.config, llm or "auto")
        try:
            counts = run_tier4_queue(vault.conn, vault.config, now=Clock.from_option(as_of).now(), mode=mode,
                                     limit=limit)
        except StageFailed as e:
            fail(f"{e.cause}\nNothing was changed (the batch was rolled back).", code=2)
        except (ValueError, ModelLayerError) as e:
            fail(str(e), code=2)
    if as_json:
        print_json(counts)
    else:
        out.print(", ".join(f"{k.removeprefix('tier4_').replace('_', ' ')} {v}" for k, v in counts.items()
                            if k != "llm_run_id") + f" (model run {counts['llm_run_id'][:12]})")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
