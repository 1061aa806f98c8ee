"""Seed 003 §41.6 Text-to-SQL: a question in words → one read-only SELECT written by the configured model → rows.

The model sees a schema card (the configured tables with their columns as the vault has them, plus the curated
meanings in ``schema_card.yaml``) in the versioned prompt ``text_to_sql``; the call goes through the model layer
as the side stage ``ask`` (logged in llm_extraction_calls, replayable with ``--llm replay``). Kenning then runs
the SQL through the read-only runner, which refuses anything but one reading statement (D37–D40).
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from typing import Any

import apsw
import orjson
import yaml
from pydantic import BaseModel

from kenning.config import Config
from kenning.store.readonly_sql import SqlRefused, describe_schema, run_readonly_sql

PROMPT = "text_to_sql"


class AskError(ValueError):
    """The question cannot be asked (empty, or the model wrote no usable SQL); the message says why."""


class SqlAnswer(BaseModel):
    sql: str
    explanation: str = ""


@functools.cache
def curated_card() -> dict[str, Any]:
    return yaml.safe_load(resources.files("kenning.knowledge").joinpath("schema_card.yaml").read_text("utf-8"))


def schema_card(conn: apsw.Connection, config: Config) -> dict[str, Any]:
    """Tables (in the configured order) with their columns and meanings, and the curated notes."""
    curated = curated_card()
    wanted = config.inspect.text_to_sql.tables
    have = {t["table"]: t for t in describe_schema(conn, wanted)}
    tables = []
    for name in wanted:
        if name not in have:
            continue   # a table a migration has not created in this vault
        about = (curated.get("tables") or {}).get(name) or {}
        meanings = about.get("columns") or {}
        tables.append({"table": name, "meaning": about.get("meaning", ""),
                       "columns": [{**c, **({"meaning": meanings[c["name"]]} if c["name"] in meanings else {})}
                                   for c in have[name]["columns"]]})
    return {"dialect": "SQLite", "tables": tables, "notes": curated.get("notes") or []}


class AskStage:
    """Side stage ``ask``: one model call that writes SQL for one question (its call logged in this run)."""

    name = "ask"
    title = "Text-to-SQL (§41.6)"

    def run(self, ctx: Any) -> dict[str, Any]:
        from kenning.llm.client import open_llm_run
        from kenning.llm.version import extractor_version

        i = ctx.inputs
        card = orjson.dumps(schema_card(ctx.conn, ctx.config), option=orjson.OPT_INDENT_2).decode()
        ev = extractor_version(ctx.config, prompts=[PROMPT], llm_mode=ctx.llm_mode)
        key = hashlib.sha256(i["question"].encode("utf-8")).hexdigest()[:16]
        with open_llm_run(ctx, "text_to_sql", extractor_version=ev) as llm:
            if not llm.enabled:
                raise AskError("no model is configured to write the SQL")
            res = llm.structured(PROMPT, {"schema": card, "question": i["question"], "max_rows": i["max_rows"]},
                                 SqlAnswer, item_key=key)
        i["answer"] = res.value if res.ok else None
        i["problem"] = None if res.ok else (res.error_code or "no answer")
        return {"answered": int(res.ok)}


def ask(conn: apsw.Connection, config: Config, question: str, *, llm_mode: str,
        max_rows: int | None = None, clock: Any = None) -> dict[str, Any]:
    """Ask the model for SQL, then run it read-only. A refused or failing statement comes back as ``error``
    (with the SQL, so a person sees what the model wrote)."""
    from kenning.store.readonly_sql import limits_of as sql_limits
    from kenning.pipeline.clock import Clock
    from kenning.pipeline.runner import run_stage
    from kenning.store.readonly_sql import effective_limits

    if not question.strip():
        raise AskError("ask a question, e.g. kenning ask \"who are my sisters?\"")
    limits = sql_limits(config)
    try:
        rows, _ = effective_limits(limits, max_rows, None)
    except SqlRefused as e:
        raise AskError(str(e)) from e
    inputs: dict[str, Any] = {"question": question, "max_rows": rows}
    run = run_stage(conn, AskStage(), config, clock or Clock.from_option(None), inputs=inputs,
                    args={"question": question, "llm": llm_mode}, llm_mode=llm_mode, llm_explicit=True)
    answer: SqlAnswer | None = inputs.get("answer")
    if answer is None:
        raise AskError(f"the model gave no usable SQL ({inputs.get('problem')}); details: `kenning runs` "
                       f"(run {run.run_id})")
    out: dict[str, Any] = {"question": question, "sql": answer.sql, "explanation": answer.explanation,
                           "run_id": run.run_id, "result": None, "error": None}
    if len(answer.sql) > config.inspect.text_to_sql.max_sql_chars:
        out["error"] = f"the model's SQL is longer than {config.inspect.text_to_sql.max_sql_chars} characters; refused"
        return out
    try:
        out["result"] = run_readonly_sql(conn, answer.sql, limits, max_rows=rows).as_dict()
    except SqlRefused as e:
        out["error"] = f"the model's SQL was refused: {e}"
    return out
