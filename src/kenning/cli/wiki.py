"""`kenning wiki stage | verify | commit`: seed 002's write path on the command line."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer

from kenning.cli.common import ConfigOpt, DbOpt, JsonOpt, LlmOpt, console, fail, llm_mode, open_vault, out, print_json

wiki_app = typer.Typer(help="Write path for a wiki workspace: stage a new source, verify the run, commit it.",
                       no_args_is_help=True)
AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Freeze the clock (run ids and times).")]


def _p(line: str = "") -> None:
    out.print(line, markup=False, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def _write_path_errors() -> Iterator[None]:
    """A refused or rejected step is one line (or the verifier's list) — never a traceback."""
    from kenning.beliefs.wiki_commit import CommitRefused
    from kenning.beliefs.wiki_import import WikiRunRejected
    from kenning.beliefs.wiki_run import RunFolderError
    from kenning.beliefs.wiki_stage import StageError
    from kenning.cli.beliefs import print_rejection
    from kenning.pipeline.runner import StageFailed

    try:
        yield
    except CommitRefused as e:
        fail(f"not committed: {e}", 2)
    except (RunFolderError, StageError) as e:
        fail(str(e))
    except StageFailed as e:
        if isinstance(e.cause, CommitRefused):
            fail(f"not committed: {e.cause}", 2)
        if isinstance(e.cause, (RunFolderError, StageError)):
            fail(str(e.cause))
        if isinstance(e.cause, WikiRunRejected):
            print_rejection(e.cause, e.run_id)
            raise typer.Exit(2)
        raise


@wiki_app.command("stage")
def wiki_stage(
    workspace_root: Annotated[Path, typer.Argument(help="The wiki workspace (the folder holding wiki/ and raw/).")],
    source: Annotated[Path, typer.Option("--source", help="The new raw source to take in.")],
    manual: Annotated[bool, typer.Option("--manual", help="Make the run folder with copies of the pages for you "
                                         "to edit (no model). Implied when no model is configured.")] = False,
    page: Annotated[Optional[list[str]], typer.Option("--page", help="With --manual: only this page (repeat).")]
    = None,
    workspace: Annotated[Optional[str], typer.Option("--workspace", "-w", help="Workspace slug in the vault "
                                                     "(default: beliefs.default_workspace).")] = None,
    llm: LlmOpt = None, as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Take a new raw source into runs/<run_id>/: the guardian drafts the page edits and sidecars (with a model),
    or you edit the staged copies by hand (--manual)."""
    from kenning.beliefs.wiki_commit import stage

    with open_vault(db, config) as vault, _write_path_errors():
        mode = "none" if manual else llm_mode(vault.config, llm)
        r = stage(vault.conn, vault.config, workspace_root, source, workspace=workspace,
                  manual=manual or mode == "none", pages=page, llm_mode=mode, as_of=as_of)
    c = r.counts
    if json_out:
        print_json({"vault_run_id": r.run_id, **c})
        return
    if c.get("already_staged"):
        _p(f"already staged: {c['run_dir']}")
    elif c["mode"] == "manual":
        _p(f"staged {c['run_id']} for editing by hand: {c['run_dir']}")
        _p(f"  edit the pages and .beliefs.json sidecars under {c['run_dir']}/staged/, citing the new source as "
           f"{c['source_raw_path']} (a footnote quoting it verbatim), then:")
    else:
        dropped = f", dropped {c['claims_dropped']}" if c["claims_dropped"] else ""
        _p(f"staged {c['run_id']}: the guardian drafted {c['claims_staged']} claim(s) on {c['staged_files'] // 2} "
           f"page(s){dropped}: {c['run_dir']}")
    _p(f"  kenning wiki verify {c['run_dir']}")
    for e in r.events:
        if e[2] == "WARN":
            _p(f"  ! {e[4]}")


def render_verdict(v: dict) -> list[str]:
    lines = [f"verdict for {v['run_id']}: {v['verdict'].upper()}"
             + (f" ({', '.join(v['reasons'])})" if v["reasons"] else "")]
    for check, state in v["checks"].items():
        note = ""
        if check == "statement_support" and state == "not_checked":
            note = " — no model configured; the quotes were checked, not what they support"
        lines.append(f"  {check:<20} {state}{note}")
    for f in v["findings"]:
        lines.append(f"  ✗ {f['check']}/{f['code']}: {f['message']}")
    for x in v["revise"]:
        lines.append(f"  ~ {x['code']}: {x['message']}")
    for b in v["beliefs"]:
        s = b.get("statement_support") or {}
        vote = f" ({s['vote']})" if s.get("vote") else ""
        lines.append(f"  · {b['belief_id']}: statement support {s.get('outcome', 'n/a')}{vote}"
                     + (" [earlier verdict]" if s.get("earlier") else ""))
    return lines


@wiki_app.command("verify")
def wiki_verify(
    run: Annotated[Path, typer.Argument(help="The run folder (WORKSPACE/runs/<run_id>).")],
    llm: LlmOpt = None, as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """The hostile verifier over a staged run: coverage, provenance link, supersession sanity, statement support,
    convergence. Verdict commit / reject / revise (exit 0 / 2 / 3), saved in the run folder and the vault."""
    from kenning.beliefs.wiki_commit import verify

    with open_vault(db, config) as vault, _write_path_errors():
        v = verify(vault.conn, vault.config, run, llm_mode=llm_mode(vault.config, llm), as_of=as_of)
    if json_out:
        print_json(v)
    else:
        for line in render_verdict(v):
            _p(line)
        if v["verdict"] == "commit":
            _p(f"  next: kenning wiki commit {run}")
    if v["verdict"] != "commit":
        raise typer.Exit(2 if v["verdict"] == "reject" else 3)


@wiki_app.command("commit")
def wiki_commit(
    run: Annotated[Path, typer.Argument(help="The run folder (WORKSPACE/runs/<run_id>).")],
    as_of: AsOfOpt = None,
    db: DbOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Move a verified run's pages and sidecars into wiki/ and its beliefs into the ledger (one transaction).
    A rejected, unrevised, unverified or since-changed run changes nothing (exit 2)."""
    from kenning.beliefs.wiki_commit import commit

    with open_vault(db, config) as vault, _write_path_errors():
        r = commit(vault.conn, vault.config, run, as_of=as_of)
    if json_out:
        print_json(r)
    elif r["already_committed"]:
        console.print(f"{r['run_id']} was already committed ({r['committed_at']}); nothing to do")
    else:
        c = r["counts"]
        _p(f"committed {r['run_id']}: {len(r['files'])} file(s) written; beliefs {c['beliefs_new']} new, "
           f"{c['beliefs_updated']} updated ({c['beliefs_current']} current in {c['workspace']})")
