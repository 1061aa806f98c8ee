"""One HTTP attempt against an OpenAI-compatible endpoint, through the ``openai`` SDK, classified.

The SDK's own retries are off (``max_retries=0``): Kenning retries itself so that every attempt can be logged
(seed 001 §4.4.4 "Every attempt is logged"). The raw body is kept exactly as received; Kenning parses it, so
servers whose answers the SDK's types would reject (older Ollama, llama.cpp) still work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from kenning.llm.errors import ModelLayerError
from kenning.llm.redact import Redactor, protect_logs, redact_url

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529}
FATAL_STATUS = {401, 403, 404}
_KEPT_HEADERS = ("x-request-id", "request-id", "retry-after", "openai-processing-ms", "x-ratelimit-remaining-requests",
                 "x-ratelimit-remaining-tokens")


@dataclass
class Attempt:
    """What one HTTP attempt produced."""

    status: int | None                 # HTTP status; None when no HTTP answer came back
    body_text: str | None              # the raw body (redacted)
    data: Any = None                   # the body parsed as JSON, when it is JSON
    headers: dict[str, str] = field(default_factory=dict)
    latency_ms: float = 0.0
    error_kind: str | None = None      # None | timeout | connection | http | bad_body
    error: str | None = None           # redacted, one line
    retry_after_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def retryable(self) -> bool:
        if self.error_kind in ("timeout", "connection", "bad_body"):
            return True
        return self.error_kind == "http" and (self.status in RETRYABLE_STATUS or (self.status or 0) >= 500)

    @property
    def fatal(self) -> bool:
        return self.error_kind == "http" and self.status in FATAL_STATUS

    def error_code(self) -> str:
        if self.error_kind == "http":
            return f"HTTP_{self.status}"
        return {"timeout": "TIMEOUT", "connection": "CONNECTION", "bad_body": "BAD_RESPONSE_BODY"}.get(
            self.error_kind or "", "ERROR")


def backoff_delay(retry_index: int, retry_after_s: float | None, initial: float, factor: float, cap: float) -> float:
    """Seconds to wait before retry number ``retry_index`` (0-based): exponential, capped; Retry-After wins."""
    if retry_after_s is not None and retry_after_s >= 0:
        return min(cap, retry_after_s)
    return min(cap, initial * (factor ** retry_index))


def _retry_after(headers: dict[str, str]) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


class Transport:
    """An OpenAI-compatible endpoint: ``chat(body)``, ``embeddings(body)``, ``models()`` → :class:`Attempt`."""

    def __init__(self, base_url: str, api_key: str | None, timeout_s: float, redactor: Redactor | None = None):
        try:
            from openai import OpenAI
        except ImportError as e:  # pragma: no cover - the models extra is part of `make setup`
            raise ModelLayerError("the openai package is not installed; run `make setup` "
                                 "(or `pip install openai`)") from e
        self.base_url = base_url.rstrip("/")
        self.endpoint = redact_url(self.base_url) or ""
        self.redactor = redactor or Redactor([api_key])
        protect_logs(api_key, *self.redactor.secrets)
        # Local servers need no key, but the SDK wants one; this placeholder is not a secret.
        self._client = OpenAI(base_url=self.base_url, api_key=api_key or "no-key-configured", timeout=timeout_s,
                              max_retries=0)

    def close(self) -> None:
        self._client.close()

    # -- one attempt ----------------------------------------------------------------------------------------
    def _call(self, fn, **kwargs: Any) -> Attempt:
        import openai

        t0 = time.perf_counter()
        try:
            raw = fn(**kwargs)
        except openai.APITimeoutError:
            return Attempt(None, None, latency_ms=(time.perf_counter() - t0) * 1000, error_kind="timeout",
                           error=f"no answer from {self.endpoint} within the timeout")
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e.__context__
            detail = f": {type(cause).__name__}" if cause is not None else ""
            return Attempt(None, None, latency_ms=(time.perf_counter() - t0) * 1000, error_kind="connection",
                           error=self.redactor.text(f"cannot connect to {self.endpoint}{detail}"))
        except openai.APIStatusError as e:
            resp = e.response
            headers = {k: resp.headers[k] for k in _KEPT_HEADERS if k in resp.headers}
            body = self.redactor.text(resp.text)
            return Attempt(resp.status_code, body, _json_or_none(body), headers,
                           (time.perf_counter() - t0) * 1000, "http",
                           self.redactor.text(f"{self.endpoint} answered HTTP {resp.status_code}: "
                                              f"{_short(_error_message(body))}"),
                           _retry_after(headers))
        latency = (time.perf_counter() - t0) * 1000
        headers = {k: raw.headers[k] for k in _KEPT_HEADERS if k in raw.headers}
        body = self.redactor.text(raw.content.decode("utf-8", errors="replace"))
        data = _json_or_none(body)
        if data is None or not isinstance(data, dict):
            return Attempt(raw.status_code, body, None, headers, latency, "bad_body",
                           f"{self.endpoint} answered HTTP {raw.status_code} with a body that is not a JSON object: "
                           f"{_short(body)}")
        return Attempt(raw.status_code, body, data, headers, latency)

    def chat(self, body: dict[str, Any]) -> Attempt:
        a = self._call(self._client.chat.completions.with_raw_response.create, **body)
        if a.ok and not isinstance(a.data.get("choices"), list):
            a.error_kind, a.error = "bad_body", f"{self.endpoint} answered without a 'choices' list: {_short(a.body_text)}"
        return a

    def embeddings(self, body: dict[str, Any]) -> Attempt:
        a = self._call(self._client.embeddings.with_raw_response.create, **body)
        if a.ok and not isinstance(a.data.get("data"), list):
            a.error_kind, a.error = "bad_body", f"{self.endpoint} answered without a 'data' list: {_short(a.body_text)}"
        return a

    def models(self) -> Attempt:
        return self._call(self._client.models.with_raw_response.list)


def _json_or_none(text: str | None) -> Any:
    if not text:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _error_message(body: str | None) -> str:
    data = _json_or_none(body)
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return body or "(empty body)"


def _short(text: str | None, n: int = 300) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= n else text[:n] + "…"
