"""``kenning eval locomo``: retrieval on LoCoMo for Kenning and the baselines, side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from kenning.cli.common import ConfigOpt, JsonOpt, console, fail, out, print_json

eval_app = typer.Typer(help="Evaluations on public benchmarks.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")


@eval_app.command("locomo")
def locomo(
    split: Annotated[str, typer.Option("--split", help="dev (26, 30, 41, 42, 43) or test (44, 47, 48, 49, 50).")] = "dev",
    data: Annotated[Optional[Path], typer.Option("--data", help="Folder with the LoCoMo files (default: "
                                                 "../shared/data/locomo or KENNING_LOCOMO).")] = None,
    conversations: Annotated[Optional[str], typer.Option("--conversations", help="Only these files, e.g. '26,30' "
                                                         "(overrides --split's list).")] = None,
    max_questions: Annotated[Optional[int], typer.Option("--max-questions", help="Only the first N questions of "
                                                         "each conversation (quick checks).")] = None,
    systems: Annotated[Optional[str], typer.Option("--systems", help="Comma list of kenning,bm25,dense,rrf.")] = None,
    workdir: Annotated[Optional[Path], typer.Option("--workdir", help="Keep the per-conversation vaults here.")] = None,
    reuse: Annotated[bool, typer.Option("--reuse", help="Reuse the vaults already in --workdir (re-run only the "
                                        "search-index stage): for tuning query-time settings.")] = False,
    lanes: Annotated[int, typer.Option("--lanes", help="Dev only, with --workdir: write Kenning's top N hits with "
                                       "every lane's rank per question into questions.jsonl (for tuning replays; "
                                       "N ≥ 300 holds every lane's top 50).")] = 0,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Each conversation into a fresh vault; every question; hit@5/hit@10/recall@10 per category."""
    from kenning.bench.locomo_eval import EvalError, run_eval

    try:
        report = run_eval(split=split, data_dir=data, conversations=conversations, max_questions=max_questions,
                          systems=systems.split(",") if systems else None, workdir=workdir, config_path=config, reuse=reuse,
                          lanes_top=lanes,
                          progress=None if json_out else (lambda msg: console.print(msg)))
    except EvalError as e:
        fail(str(e))
    if json_out:
        print_json(report)
        return
    t = Table(title=f"LoCoMo {report['split']} ({', '.join(report['conversations'])}) — turn retrieval",
              show_edge=False)
    for col in ("system", "hit@5", "hit@10", "recall@10", "hit@10 c1", "c2", "c3", "c4", "c5 (adv.)"):
        t.add_column(col, justify="right")
    for name, s in report["systems"].items():
        bc = s["by_category"]
        t.add_row(name, f"{s['overall']['hit@5']:.3f}", f"{s['overall']['hit@10']:.3f}",
                  f"{s['overall']['recall@10']:.3f}",
                  *[f"{bc[c]['hit@10']:.3f}" if c in bc else "-" for c in ("1", "2", "3", "4", "5")])
    out.print(t)
    ta = report.get("temporal_accuracy")
    if ta is not None:
        d = report["temporal_detail"]
        out.print(f"category-2 temporal accuracy: {ta:.3f} (resolved time of the best-ranked evidence turn in the "
                  f"top 10 vs the gold date, {d['n']} dated questions; no evidence turn = wrong); given an evidence "
                  f"turn in the top 10: {d['given_evidence_in_top10']:.3f}; top hit's time: {d['top_hit']:.3f}")
    out.print("overall = categories 1–4; category 5 (adversarial) is reported separately.")
