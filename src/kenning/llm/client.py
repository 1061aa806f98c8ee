"""The LLM client: one OpenAI-compatible endpoint, structured output, every attempt logged, replayable.

Use from a stage (the usual way)::

    from kenning.llm import open_llm_run

    with open_llm_run(ctx, "atomizer", extractor_version=ev) as llm:   # ctx: the StageContext
        if llm.enabled:                                                # False under --llm none
            res = llm.structured("atomizer", {"candidates": cands}, AtomizerOutput,
                                 message_id=mid, item_key="0")
            if res.ok:
                use(res.value)                                          # a validated AtomizerOutput
            # else: already logged (call rows keep the raw output) and warned (run_events); carry on
        llm.run.add(messages_processed=1, assertions_extracted=n)

Modes (``resolve_mode``): ``none`` (rules only: ``enabled`` is False), ``live`` (HTTP calls), ``replay``
(answers only from stored responses with the same request hash; a missing one raises :class:`ReplayMissing`,
never a network call). Temperature/top_p/seed come from ``llm.*`` config.

Failure rules (issue 3): malformed or schema-invalid output gets exactly ``llm.max_json_repair_attempts``
(1) repair call with ``repair_json_v1``; after that the item is a ``Result(ok=False, error_code=
"MALFORMED_OUTPUT")`` with the raw output kept in the call rows, and the caller continues. 429/5xx/timeouts are
retried with backoff (``llm.max_retries``); an unreachable endpoint raises :class:`LLMUnavailable` naming the
URL; 401/403/404 raise :class:`LLMEndpointError`. Past the per-run budget, items return
``error_code="BUDGET_EXHAUSTED"`` without a call. The API key is never stored, logged or put in an error.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

from kenning.config import Config
from kenning.llm.errors import (LLMConfigError, LLMDisabled, LLMEndpointError, LLMUnavailable, ModelLayerError,
                                ReplayMissing)
from kenning.llm.prompts import Prompt, prompt_for
from kenning.llm.redact import Redactor, redact_url
from kenning.llm.transport import Attempt, Transport, backoff_delay
from kenning.pipeline.clock import Clock
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize, sha256_hex
from kenning.store import llm as llm_sql

T = TypeVar("T", bound=BaseModel)
MODES = ("none", "live", "replay")
# Per-call overrides a caller may pass as ``options`` (e.g. seed 000's separate atomizer / verifier models).
_BODY_OPTIONS = {"model", "temperature", "top_p", "seed", "max_tokens"}


def _sleep(seconds: float) -> None:
    """Backoff waits (module-level so tests can record them)."""
    time.sleep(seconds)


# -- settings -----------------------------------------------------------------------------------------------
def api_key(config: Config) -> str | None:
    return config.llm.api_key.get_secret_value() if config.llm.api_key is not None else None


def mode_is_explicit(config: Config, requested: str | None = None) -> bool:
    """Whether the user asked for this run's mode (``--llm``, ``KENNING_LLM_MODE``, ``llm.mode`` in a config)
    rather than ``llm.mode: auto`` finding an endpoint (M30: stages whose seed switch is off use a model only
    when asked)."""
    return requested is not None or config.llm.mode.lower() != "auto"


def resolve_mode(config: Config, requested: str | None = None) -> str:
    """``--llm`` (or ``llm.mode``) → none | live | replay. ``auto`` is live when an endpoint is configured."""
    mode = (requested or config.llm.mode).lower()
    if mode not in (*MODES, "auto"):
        raise LLMConfigError(f"--llm must be one of none, live, replay (got {requested!r})")
    configured = bool(config.llm.base_url and config.llm.model)
    if mode == "auto":
        return "live" if configured else "none"
    if mode == "live" and not configured:
        raise LLMConfigError("--llm live needs an endpoint: set KENNING_LLM_BASE_URL and KENNING_LLM_MODEL "
                             "(or llm.base_url and llm.model in your config), or use --llm none")
    if mode == "replay" and not config.llm.model:
        raise LLMConfigError("--llm replay needs the model name the responses were recorded with: set "
                             "KENNING_LLM_MODEL (or llm.model)")
    return mode


# -- results ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Result(Generic[T]):
    """The outcome of one structured request (one item). ``ok`` ⇔ ``value`` is a validated model."""

    ok: bool
    value: T | None
    error_code: str | None = None     # MALFORMED_OUTPUT | BUDGET_EXHAUSTED | HTTP_400 | TIMEOUT | REFUSED | …
    error: str | None = None
    raw_output: str | None = None     # the last content the model returned (also in the call rows)
    repaired: bool = False
    attempts: int = 0
    call_ids: tuple[str, ...] = ()
    prompt_version: str = ""
    model: str = ""
    usage: Mapping[str, int] = field(default_factory=dict)


class _ItemFailed(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def schema_error_text(e: ValidationError) -> str:
    """Pydantic's errors without its version-specific URLs, so repair requests (and replay) stay stable."""
    parts = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {err.get('msg')}")
    return "does not match the schema: " + "; ".join(parts)


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.S)


def parse_structured(content: str | None, schema: type[T]) -> tuple[T | None, str | None]:
    """Model output → (validated value, None) or (None, why not). Accepts a JSON object optionally wrapped in a
    Markdown fence or surrounded by prose (the outermost ``{…}``); anything else is malformed."""
    if content is None or not content.strip():
        return None, "the model returned no content"
    text = content.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        start, end = text.find("{"), text.rfind("}")
        data = None
        if 0 <= start < end:
            try:
                data = json.loads(text[start:end + 1])
            except json.JSONDecodeError:
                data = None
        if data is None:
            return None, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    try:
        return schema.model_validate(data), None
    except ValidationError as e:
        return None, schema_error_text(e)


# -- the run row --------------------------------------------------------------------------------------------
class LLMRun:
    """One ``llm_extraction_runs`` row, opened by a stage; its calls are written through the stage's
    connection, so they commit or roll back with the stage (seed 001 §4.1, §4.8.1)."""

    def __init__(self, conn, config: Config, *, name: str, mode: str, clock: Clock | None = None,
                 ids: IdFactory | None = None, stage_run_id: str | None = None,
                 extractor_version: str | None = None, warn: Callable[..., None] | None = None):
        if mode not in ("live", "replay"):
            raise LLMConfigError(f"an LLM run needs mode live or replay, not {mode!r}")
        self.conn, self.config, self.name, self.mode = conn, config, name, mode
        self.clock = clock or Clock()
        self.ids = ids or IdFactory(config.ids.id_namespace)
        self.stage_run_id, self.extractor_version, self.warn = stage_run_id, extractor_version, warn
        self.model_name = config.llm.model or ""
        self.model_version: str | None = None
        self.started_at_utc = self.clock.now()
        self.run_id = self.ids.make("llm_run", self.started_at_utc, self.model_name, stage_run_id, name)
        self.prompts_used: dict[str, str] = {}
        self.messages_processed: int | None = None
        self.assertions_extracted = 0
        self.calls_total = self.calls_succeeded = self.calls_failed = 0
        self.latencies: list[float] = []
        self.attempts_per_item: Counter = Counter()
        self.items: Counter = Counter()
        self.error_codes: Counter = Counter()
        self.tokens: Counter = Counter()
        self.messages_seen: set[str] = set()
        self.budget_exhausted = False
        self.finished = False
        cfg = config.llm.model_dump(mode="json")
        cfg.pop("api_key", None)
        cfg["base_url"] = redact_url(cfg.get("base_url"))
        llm_sql.insert_run(conn, {
            "run_id": self.run_id, "model_name": self.model_name, "model_version": None,
            "config_json": canonicalize(cfg), "started_at_utc": self.started_at_utc, "completed_at_utc": None,
            "messages_processed": 0, "assertions_extracted": 0, "raw_stats_json": None,
            "stage_run_id": stage_run_id, "name": name, "mode": mode,
            "endpoint": redact_url(config.llm.base_url) if mode == "live" else None,
            "extractor_version": extractor_version, "prompt_versions_json": None, "status": "running",
        })

    # budget (seed-less; issue 3 "a per-run token and call budget")
    def budget_left(self) -> bool:
        b = self.config.llm.budget
        if self.calls_total >= b.max_calls_per_run or self.tokens["total"] >= b.max_tokens_per_run:
            self.budget_exhausted = True
        return not self.budget_exhausted

    def add(self, *, messages_processed: int = 0, assertions_extracted: int = 0) -> None:
        """Count what the stage did with the answers (seed 001 §4.8.1)."""
        self.messages_processed = (self.messages_processed or 0) + messages_processed
        self.assertions_extracted += assertions_extracted

    def stats(self) -> dict[str, Any]:
        return {
            "calls_total": self.calls_total, "calls_succeeded": self.calls_succeeded,
            "calls_failed": self.calls_failed,
            "avg_latency_ms": round(sum(self.latencies) / len(self.latencies), 3) if self.latencies else None,
            "retry_distribution": {str(k): v for k, v in sorted(self.attempts_per_item.items())},
            "items": dict(sorted(self.items.items())), "error_codes": dict(sorted(self.error_codes.items())),
            "tokens": {k: self.tokens[k] for k in ("prompt", "completion", "total")},
            "budget": {"max_calls_per_run": self.config.llm.budget.max_calls_per_run,
                       "max_tokens_per_run": self.config.llm.budget.max_tokens_per_run,
                       "exhausted": self.budget_exhausted},
        }

    def finish(self, status: str | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        llm_sql.finish_run(
            self.conn, self.run_id, completed_at_utc=self.clock.now(),
            status=status or ("budget_exhausted" if self.budget_exhausted else "ok"),
            model_version=self.model_version,
            messages_processed=self.messages_processed if self.messages_processed is not None
            else len(self.messages_seen),
            assertions_extracted=self.assertions_extracted, raw_stats_json=canonicalize(self.stats()),
            prompt_versions_json=canonicalize(dict(sorted(self.prompts_used.items()))),
            extractor_version=self.extractor_version,
        )


# -- the client ---------------------------------------------------------------------------------------------
class LLMClient:
    """Structured calls to the configured endpoint. ``run`` (an :class:`LLMRun`) logs every attempt; without
    one (``kenning llm ping``) nothing is stored. Replay needs ``conn``; it never touches the network."""

    def __init__(self, config: Config, conn=None, run: LLMRun | None = None, *, mode: str | None = None,
                 sleep: Callable[[float], None] | None = None, replay_from_run: str | None = None):
        self.config, self.conn, self.run = config, conn, run
        self.mode = resolve_mode(config, mode or (run.mode if run else None))
        if run is not None and run.mode != self.mode:
            raise LLMConfigError(f"the LLM run is {run.mode} but the client was asked for {self.mode}")
        if self.mode == "replay" and conn is None:
            raise LLMConfigError("--llm replay reads stored responses from the vault; it needs a connection")
        self.model = config.llm.model or ""
        self._key = api_key(config)
        self.redactor = Redactor([self._key])
        self.endpoint = redact_url(config.llm.base_url)
        self._sleep = sleep
        self._transport: Transport | None = None
        self.replay_from_run = replay_from_run
        self.consecutive_failures = 0

    @property
    def enabled(self) -> bool:
        return self.mode != "none"

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def transport(self) -> Transport:
        if self._transport is None:
            self._transport = Transport(self.config.llm.base_url or "", self._key, self.config.llm.timeout_s,
                                        self.redactor)
        return self._transport

    # -- requests -----------------------------------------------------------------------------------------
    def build_request(self, prompt: Prompt, variables: Mapping[str, Any], schema: type[BaseModel],
                      options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The exact body sent (and logged, and hashed for replay): model, messages, sampling, format."""
        c = self.config.llm
        messages = prompt.render(variables)
        json_schema = schema.model_json_schema()
        if c.response_format != "json_schema":
            note = ("Answer with a single JSON object that validates against this JSON Schema:\n"
                    + json.dumps(json_schema, ensure_ascii=False, sort_keys=True))
            if messages[0]["role"] == "system":
                messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + note}
            else:
                messages.insert(0, {"role": "system", "content": note})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": c.temperature,
                                "top_p": c.top_p, "max_tokens": c.max_output_tokens}
        if c.seed is not None:
            body["seed"] = c.seed
        if c.response_format == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": schema.__name__, "schema": json_schema}}
        elif c.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        for k, v in (options or {}).items():
            if k not in _BODY_OPTIONS:
                raise LLMConfigError(f"unknown request option {k!r}; allowed: {', '.join(sorted(_BODY_OPTIONS))}")
            body[k] = v
        return body

    def structured(self, prompt_name: str, variables: Mapping[str, Any], schema: type[T], *,
                   message_id: str | None = None, item_key: str | None = None,
                   options: Mapping[str, Any] | None = None) -> Result[T]:
        """Ask for one JSON object validated by ``schema``. Never raises for a bad answer: see the module doc."""
        if not self.enabled:
            raise LLMDisabled("the LLM is off (--llm none); check `client.enabled` before calling structured()")
        prompt = prompt_for(self.config, prompt_name)
        body = self.build_request(prompt, variables, schema, options)
        item_sha = sha256_hex(canonicalize(self.redactor.obj(body)))
        if self.run is not None:
            self.run.prompts_used[prompt.name] = prompt.ref
            if message_id:
                self.run.messages_seen.add(message_id)
        ctx = _Item(self, prompt, schema, message_id, item_key, item_sha)
        if self.mode == "live" and self.run is not None and not self.run.budget_left():
            ctx.log_skip(body, prompt)
            return ctx.finish(None, "BUDGET_EXHAUSTED",
                              f"the per-run LLM budget is spent ({self.run.calls_total} calls, "
                              f"{self.run.tokens['total']} tokens); item not sent")
        try:
            content = ctx.send(body, "initial", prompt)
            value, problem = parse_structured(content, schema)
            ctx.mark_parse(value, problem)
            repairs = 0
            while value is None and repairs < self.config.llm.max_json_repair_attempts:
                repairs += 1
                repair = prompt_for(self.config, "repair_json")
                if self.run is not None:
                    self.run.prompts_used[repair.name] = repair.ref
                repair_body = self.build_request(
                    repair, {"schema": json.dumps(schema.model_json_schema(), ensure_ascii=False, sort_keys=True),
                             "error": problem, "output": content or ""}, schema, options)
                if self.mode == "live" and self.run is not None and not self.run.budget_left():
                    ctx.log_skip(repair_body, repair)
                    return ctx.finish(None, "BUDGET_EXHAUSTED", f"output invalid ({problem}) and the budget is "
                                      "spent, so it was not repaired", raw=content)
                content = ctx.send(repair_body, "repair", repair)
                value, problem = parse_structured(content, schema)
                ctx.mark_parse(value, problem)
                ctx.repaired = value is not None
            if value is None:
                return ctx.finish(None, "MALFORMED_OUTPUT", f"model output {problem}", raw=content)
            return ctx.finish(value, None, None, raw=content)
        except _ItemFailed as f:
            return ctx.finish(None, f.code, f.message, raw=ctx.last_content)

    # -- checks ---------------------------------------------------------------------------------------------
    def ping(self) -> dict[str, Any]:
        """One tiny structured call (``kenning llm ping``): which structured-output form the endpoint honours,
        the model it reports and the latency. Nothing is stored."""
        if self.mode != "live":
            raise LLMConfigError("`kenning llm ping` needs an endpoint: set KENNING_LLM_BASE_URL and "
                                 "KENNING_LLM_MODEL (or llm.base_url / llm.model)")

        class Pong(BaseModel):
            ok: bool
            echo: str

        prompt = prompt_for(self.config, "ping")
        report: dict[str, Any] = {"endpoint": self.endpoint, "model": self.model, "tries": []}
        for fmt in ("json_schema", "json_object", "none"):
            cfg = self.config.model_copy(update={"llm": self.config.llm.model_copy(update={"response_format": fmt})})
            body = LLMClient(cfg, mode="live").build_request(prompt, {"word": "kenning"}, Pong)
            a = self.transport().chat(body)
            if a.error_kind == "connection":
                raise LLMUnavailable(f"cannot reach the LLM endpoint at {self.endpoint} ({a.error})")
            if a.fatal:
                raise LLMEndpointError(_fatal_message(self.endpoint, a))
            try_ = {"response_format": fmt, "http_status": a.status, "latency_ms": round(a.latency_ms, 1)}
            if a.ok:
                content, _ = _content_of(a.data)
                value, problem = parse_structured(content, Pong)
                try_.update(json_ok=value is not None and value.ok and value.echo.lower() == "kenning",
                            problem=problem, reported_model=a.data.get("model"),
                            usage=a.data.get("usage"))
            else:
                try_.update(json_ok=False, problem=a.error)
            report["tries"].append(try_)
            if try_["json_ok"]:
                break
        good = next((t for t in report["tries"] if t["json_ok"]), None)
        report["json_mode"] = good["response_format"] if good else None
        report["reported_model"] = next((t.get("reported_model") for t in report["tries"] if t.get("reported_model")),
                                        None)
        report["latency_ms"] = report["tries"][0]["latency_ms"]
        return report


def _content_of(data: Any) -> tuple[str | None, str | None]:
    """(content, refusal) of the first choice of a chat completion body."""
    try:
        msg = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None, None
    if not isinstance(msg, dict):
        return None, None
    content = msg.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return (content if isinstance(content, str) else None), msg.get("refusal")


def _fatal_message(endpoint: str | None, a: Attempt) -> str:
    what = {401: "refused the API key (set KENNING_LLM_API_KEY)", 403: "denied access (check the key's permissions)",
            404: "does not know this model or path (check KENNING_LLM_MODEL and that the base URL ends in /v1)"}
    return f"the LLM endpoint at {endpoint} {what.get(a.status or 0, 'failed')}: HTTP {a.status}: {a.error}"


def _usage(data: Any) -> dict[str, int]:
    u = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(u, dict):
        return {}
    out = {}
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        if isinstance(u.get(k), int):
            out[k] = u[k]
    if "total_tokens" not in out and out:
        out["total_tokens"] = out.get("prompt_tokens", 0) + out.get("completion_tokens", 0)
    return out


class _Item:
    """Bookkeeping for one ``structured()`` request: attempts, logging, result."""

    def __init__(self, client: LLMClient, prompt: Prompt, schema: type[BaseModel], message_id: str | None,
                 item_key: str | None, item_sha: str):
        self.c, self.prompt, self.schema = client, prompt, schema
        self.message_id, self.item_key, self.item_sha = message_id, item_key, item_sha
        self.attempt = 0
        self.call_ids: list[str] = []
        self.last_content: str | None = None
        self.last_row: dict[str, Any] | None = None
        self.repaired = False
        self.usage: Counter = Counter()
        self.prompt_ref = prompt.ref

    # one logged row per attempt
    def _log(self, body: dict, kind: str, prompt: Prompt, a: Attempt | None, *, replayed_from: str | None = None,
             error_code: str | None = None, error: str | None = None, stored: dict | None = None) -> None:
        c, run = self.c, self.c.run
        request_json = canonicalize(c.redactor.obj(body))
        usage = _usage(a.data) if a is not None and a.data is not None else {}
        row = {
            "request_json": request_json,
            "response_json": None, "http_status": a.status if a else None,
            "latency_ms": round(a.latency_ms, 3) if (a is not None and c.mode == "live") else None,
            "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
            "total_tokens": usage.get("total_tokens"), "parse_success": 0, "parsed_json": None,
            "error": c.redactor.text(error if error is not None else (a.error if a else None)),
            "error_code": error_code or (a.error_code() if a is not None and not a.ok else None),
        }
        if a is not None and a.body_text is not None:
            row["response_json"] = canonicalize(a.data) if a.data is not None else canonicalize(a.body_text)
        self.usage.update({k: v for k, v in usage.items()})
        if a is not None and c.mode == "live":
            if run is not None:
                run.calls_total += 1
                if not a.ok:
                    run.calls_failed += 1
                run.latencies.append(a.latency_ms)
                for k, v in usage.items():
                    run.tokens[k.replace("_tokens", "")] += v
                if not usage and a.ok:  # no usage reported: estimate (~4 characters a token) to keep the budget
                    est = (len(row["request_json"]) + len(a.body_text or "")) // 4
                    run.tokens["total"] += est
        if run is None:
            self.last_row = row
            self.attempt += 1
            return
        call_id = run.ids.make("llm_call", run.run_id, self.message_id, self.attempt, self.item_sha, self.item_key)
        row.update({
            "call_id": call_id, "run_id": run.run_id, "message_id": self.message_id,
            "call_timestamp_utc": run.clock.now(), "retry_count": self.attempt, "seed_honored": None,
            "raw_io_json": canonicalize({
                "attempt_kind": kind, "endpoint": c.endpoint if c.mode == "live" else None,
                "http_status": a.status if a else None, "headers": a.headers if a else {},
                "latency_ms": row["latency_ms"], "error_kind": a.error_kind if a else None,
                "error_code": row["error_code"], "mode": c.mode, "replayed_from_call_id": replayed_from,
                "stored_run_id": stored.get("run_id") if stored else None,
            }),
            "item_key": self.item_key, "prompt_name": prompt.name, "prompt_version": prompt.ref,
            "schema_name": self.schema.__name__, "model": body.get("model") or c.model, "attempt_kind": kind,
            "request_sha256": sha256_hex(request_json), "mode": c.mode,
            "replayed_from_call_id": replayed_from,
        })
        self.last_row = row
        llm_sql.insert_call(run.conn, row)
        self.call_ids.append(call_id)
        self.attempt += 1

    def log_skip(self, body: dict, prompt: Prompt) -> None:
        self._log(body, "skipped", prompt, None, error_code="BUDGET_EXHAUSTED",
                  error="not sent: the per-run LLM budget is spent")

    def mark_parse(self, value: BaseModel | None, problem: str | None) -> None:
        row = self.last_row
        if row is None:
            return
        row["parse_success"] = 1 if value is not None else 0
        row["parsed_json"] = canonicalize(value.model_dump(mode="json")) if value is not None else None
        if value is None:
            row["error"] = self.c.redactor.text(f"model output {problem}")
            row["error_code"] = "MALFORMED_OUTPUT"
        run = self.c.run
        if run is not None:
            llm_sql.update_call_parse(run.conn, row["call_id"], row["parse_success"], row["parsed_json"],
                                      row["error"], row["error_code"])
            if value is not None:
                run.calls_succeeded += 1
            else:
                run.calls_failed += 1

    # sending: live with retries, or replay from the log
    def send(self, body: dict, kind: str, prompt: Prompt) -> str | None:
        return self._replay(body, kind, prompt) if self.c.mode == "replay" else self._live(body, kind, prompt)

    def _live(self, body: dict, kind: str, prompt: Prompt) -> str | None:
        c, cfg = self.c, self.c.config.llm
        t = c.transport()
        last: Attempt | None = None
        for i in range(cfg.max_retries + 1):
            if i > 0:
                (c._sleep or _sleep)(backoff_delay(i - 1, last.retry_after_s if last else None, cfg.backoff_initial_s,
                                       cfg.backoff_factor, cfg.backoff_max_s))
            a = t.chat(body)
            last = a
            self._log(body, kind if i == 0 else "retry", prompt, a)
            if a.ok:
                c.consecutive_failures = 0
                if c.run is not None and c.run.model_version is None and isinstance(a.data.get("model"), str):
                    c.run.model_version = a.data["model"]
                content, refusal = _content_of(a.data)
                self.last_content = content
                if content is None and refusal:
                    raise _ItemFailed("REFUSED", c.redactor.text(f"the model refused: {refusal}"))
                return content
            if a.fatal:
                raise LLMEndpointError(_fatal_message(c.endpoint, a))
            if not a.retryable:
                c.consecutive_failures = 0
                raise _ItemFailed(a.error_code(), a.error or a.error_code())
            if c.run is not None and not c.run.budget_left():
                self.log_skip(body, prompt)
                raise _ItemFailed("BUDGET_EXHAUSTED", f"{a.error}; the budget is spent, so it was not retried")
        assert last is not None
        if last.error_kind == "connection":
            raise LLMUnavailable(f"cannot reach the LLM endpoint at {c.endpoint} after {cfg.max_retries + 1} "
                                 f"attempts ({last.error}). Start the server, fix KENNING_LLM_BASE_URL, or run "
                                 "with --llm none")
        c.consecutive_failures += 1
        if c.consecutive_failures >= cfg.max_consecutive_failures:
            raise LLMUnavailable(f"the LLM endpoint at {c.endpoint} failed {c.consecutive_failures} items in a row "
                                 f"(last: {last.error}); stopping. Try later, or run with --llm none")
        raise _ItemFailed(last.error_code(), f"{last.error} (after {cfg.max_retries + 1} attempts)")

    def _replay(self, body: dict, kind: str, prompt: Prompt) -> str | None:
        c = self.c
        sha = sha256_hex(canonicalize(c.redactor.obj(body)))
        stored = llm_sql.stored_answer(c.conn, sha, c.replay_from_run)
        if stored is None:
            failure = llm_sql.stored_failure(c.conn, sha, c.replay_from_run)
            if failure is not None:  # the live run got no answer for this request: reproduce its outcome
                self._log(body, kind, prompt, None, replayed_from=failure["call_id"], error_code=failure["error_code"],
                          error=failure["error"], stored=failure)
                raise _ItemFailed(failure["error_code"] or "ERROR", failure["error"] or "failed when recorded")
            raise ReplayMissing(
                f"--llm replay: no stored response for prompt {self.prompt_ref} (message {self.message_id}, "
                f"item {self.item_key}, request sha256 {sha[:16]}…). Replay never calls the model: run this "
                "stage with --llm live first, or check that the model and prompt versions match the recording")
        data = json.loads(stored["response_json"])
        a = Attempt(200, stored["response_json"], data)
        self._log(body, kind, prompt, a, replayed_from=stored["call_id"], stored=stored)
        content, refusal = _content_of(data)
        self.last_content = content
        if content is None and refusal:
            raise _ItemFailed("REFUSED", c.redactor.text(f"the model refused: {refusal}"))
        return content

    def finish(self, value: BaseModel | None, code: str | None, message: str | None,
               raw: str | None = None) -> Result:
        c, run = self.c, self.c.run
        ok = value is not None
        if run is not None:
            run.attempts_per_item[self.attempt] += 1
            run.items["ok" if ok else "failed"] += 1
            if self.repaired and ok:
                run.items["repaired"] += 1
            if code:
                run.error_codes[code] += 1
                if code == "BUDGET_EXHAUSTED":
                    run.items["skipped_budget"] += 1
                if run.warn is not None:
                    run.warn(f"LLM_{code}", f"{self.prompt_ref}: {message}", message_id=self.message_id,
                             item_key=self.item_key, call_ids=list(self.call_ids))
        return Result(ok=ok, value=value, error_code=code, error=c.redactor.text(message),
                      raw_output=c.redactor.text(raw), repaired=self.repaired and ok, attempts=self.attempt,
                      call_ids=tuple(self.call_ids), prompt_version=self.prompt_ref, model=c.model,
                      usage=dict(self.usage))


class _NullRun:
    """``llm.run`` under ``--llm none``: counts nothing, writes nothing."""

    run_id = None
    mode = "none"

    def add(self, **_: int) -> None:
        return None


# -- stage helper -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def open_llm_run(ctx, name: str, *, extractor_version: str | None = None,
                 replay_from_run: str | None = None) -> Iterator[LLMClient]:
    """Open an LLM run inside a stage (``ctx`` = StageContext). Yields an :class:`LLMClient`; under
    ``--llm none`` it is disabled and no row is written. The run row is finished on a normal exit."""
    mode = getattr(ctx, "llm_mode", "none")
    if mode not in MODES:
        raise LLMConfigError(f"stage context has an unresolved LLM mode {mode!r}")
    if mode == "none":
        client = LLMClient(ctx.config, ctx.conn, None, mode="none")
        client.run = _NullRun()  # type: ignore[assignment]  # so `llm.run.add(...)` needs no guard
        yield client
        return
    run = LLMRun(ctx.conn, ctx.config, name=name, mode=mode, clock=ctx.clock, ids=ctx.ids,
                 stage_run_id=ctx.run_id, extractor_version=extractor_version, warn=ctx.warn)
    client = LLMClient(ctx.config, ctx.conn, run, replay_from_run=replay_from_run)
    try:
        yield client
    finally:
        client.close()
    run.finish()


__all__ = ["LLMClient", "LLMRun", "Result", "mode_is_explicit", "open_llm_run", "parse_structured", "resolve_mode",
           "ModelLayerError"]
