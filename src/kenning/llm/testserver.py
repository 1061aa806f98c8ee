"""A real OpenAI-compatible HTTP server with scripted answers, for tests (and manual checks).

It listens on 127.0.0.1 (random port by default) in a background thread and serves
``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models`` — so tests exercise the real
``openai`` client, real sockets, real timeouts. Faults are scripted per request::

    from kenning.llm.testserver import Answer, OpenAITestServer

    with OpenAITestServer(api_key="sk-test") as srv:            # srv.base_url = "http://127.0.0.1:PORT/v1"
        srv.script_chat(Answer.status(429, retry_after=0),     # then a 500, then malformed JSON, then good
                        Answer.status(500),
                        Answer.text('{"atoms": [ {"atom_text": "i am'),
                        Answer.json({"atoms": []}))
        srv.on_chat("mornings", Answer.json({...}))            # a standing rule: last user message contains…
        srv.default_chat = lambda body: {...}                  # or compute an answer from the request
        ... srv.chat_requests[0]["body"] ...                   # what the client sent (headers, lowercased)

Answers are taken in order: a matching rule (``on_chat``), else the next scripted answer, else
``default_chat``, else HTTP 500 "no scripted answer". ``Answer.slow(seconds, ...)`` delays the response (for
client timeouts); ``Answer.raw(...)`` replaces the whole HTTP body (a body that is not JSON). Embeddings are
answered with deterministic feature-hashing vectors of the requested ``dimensions`` unless scripted.

Run one by hand: ``python -m kenning.llm.testserver --port 8765`` (answers ``kenning llm ping``).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Content = str | dict | list | None
Responder = Callable[[dict], Any]


@dataclass
class Answer:
    """One scripted HTTP answer."""

    content: Content | Responder = None   # chat: the assistant message content (dict/list → JSON text)
    http_status: int = 200
    delay_s: float = 0.0
    raw_body: str | bytes | None = None   # replaces the whole body (e.g. not JSON at all)
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = None
    model: str | None = None
    refusal: str | None = None
    error_message: str | None = None      # the error body's message for status >= 400
    vectors: list[list[float]] | None = None  # embeddings: explicit vectors

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> "Answer":
        return cls(content=json.dumps(obj, ensure_ascii=False), **kw)

    @classmethod
    def text(cls, content: str, **kw: Any) -> "Answer":
        return cls(content=content, **kw)

    @classmethod
    def status(cls, code: int, *, retry_after: float | None = None, message: str | None = None,
               **kw: Any) -> "Answer":
        headers = dict(kw.pop("headers", {}))
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return cls(http_status=code, headers=headers, error_message=message or f"scripted HTTP {code}", **kw)

    @classmethod
    def slow(cls, seconds: float, content: Content | Responder = None, **kw: Any) -> "Answer":
        return cls(content=content, delay_s=seconds, **kw)

    @classmethod
    def raw(cls, body: str | bytes, status: int = 200, **kw: Any) -> "Answer":
        return cls(raw_body=body, http_status=status, **kw)


def ping_responder(body: dict) -> dict:
    """Answers the ``ping`` prompt correctly (used by the standalone server)."""
    return {"ok": True, "echo": "kenning"}


def _lower(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def _last_user_text(body: dict) -> str:
    for m in reversed(body.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


class OpenAITestServer:
    """See the module docstring."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, model: str = "kenning-test-model",
                 api_key: str | None = None, echo_auth_in_errors: bool = False, embedding_dim: int = 384):
        self.host, self.port, self.model = host, port, model
        self.api_key, self.echo_auth_in_errors, self.embedding_dim = api_key, echo_auth_in_errors, embedding_dim
        self.chat_queue: deque[Answer] = deque()
        self.embed_queue: deque[Answer] = deque()
        self.rules: list[tuple[Callable[[dict], bool], Answer | Responder, list[int]]] = []
        self.default_chat: Answer | Responder | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._hasher = None

    # -- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> "OpenAITestServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "OpenAITestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # -- scripting --------------------------------------------------------------------------------------------
    def script_chat(self, *answers: Answer | Content) -> None:
        with self._lock:
            self.chat_queue.extend(a if isinstance(a, Answer) else Answer(content=a) for a in answers)

    def script_embeddings(self, *answers: Answer) -> None:
        with self._lock:
            self.embed_queue.extend(answers)

    def on_chat(self, match: str | Callable[[dict], bool], answer: Answer | Responder,
                times: int | None = None) -> None:
        """A standing rule: when the last user message contains ``match`` (or ``match(body)`` is true)."""
        pred = (lambda body, s=match: s in _last_user_text(body)) if isinstance(match, str) else match
        with self._lock:
            self.rules.append((pred, answer, [times if times is not None else -1]))

    def clear(self) -> None:
        with self._lock:
            self.chat_queue.clear()
            self.embed_queue.clear()
            self.rules.clear()
            self.requests.clear()
            self.default_chat = None

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/embeddings")]

    # -- answering ----------------------------------------------------------------------------------------------
    def _next_chat(self, body: dict) -> Answer:
        with self._lock:
            for pred, answer, left in self.rules:
                if left[0] != 0 and pred(body):
                    if left[0] > 0:
                        left[0] -= 1
                    return answer if isinstance(answer, Answer) else Answer(content=answer)
            if self.chat_queue:
                return self.chat_queue.popleft()
            default = self.default_chat
        if default is None:
            return Answer.status(500, message="the test server has no scripted answer left for this request")
        return default if isinstance(default, Answer) else Answer(content=default)

    def _next_embedding(self) -> Answer | None:
        with self._lock:
            return self.embed_queue.popleft() if self.embed_queue else None

    def chat_body(self, answer: Answer, request: dict) -> dict:
        content = answer.content(request) if callable(answer.content) else answer.content
        if isinstance(content, (dict, list)):
            content = json.dumps(content, ensure_ascii=False)
        prompt_chars = sum(len(str(m.get("content", ""))) for m in request.get("messages") or [])
        usage = answer.usage or {"prompt_tokens": max(1, prompt_chars // 4),
                                 "completion_tokens": max(1, len(content or "") // 4)}
        usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if answer.refusal is not None:
            message["refusal"] = answer.refusal
        return {
            "id": f"chatcmpl-test-{len(self.requests)}", "object": "chat.completion", "created": 1700000000,
            "model": answer.model or request.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage, "system_fingerprint": "fp_kenning_test",
        }

    def embeddings_body(self, answer: Answer | None, request: dict) -> dict:
        inputs = request.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        if answer is not None and answer.vectors is not None:
            vectors = answer.vectors
        else:
            dim = int(request.get("dimensions") or self.embedding_dim)
            if self._hasher is None or self._hasher.dimension != dim:
                from kenning.llm.embed import HashEmbedder

                self._hasher = HashEmbedder(dim)
            vectors = self._hasher.embed([str(t) for t in texts]).tolist()
        return {"object": "list", "model": request.get("model") or self.model,
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": sum(len(str(t)) // 4 + 1 for t in texts),
                          "total_tokens": sum(len(str(t)) // 4 + 1 for t in texts)}}


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAITestServer
    protocol_version = "HTTP/1.1"
    server_version = "KenningOpenAITestServer/1"

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        return None

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): fine
            pass

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        body = json.dumps({"error": {"message": message, "type": "test_server_error", "code": status}})
        self._send(status, body.encode(), headers)

    def _auth_ok(self) -> bool:
        srv = self.owner
        if srv.api_key is None:
            return True
        got = self.headers.get("Authorization", "")
        if got == f"Bearer {srv.api_key}":
            return True
        shown = got if srv.echo_auth_in_errors else "(hidden)"
        self._error(401, f"Incorrect API key provided: {shown}")
        return False

    def do_GET(self) -> None:  # noqa: N802
        srv = self.owner
        srv.requests.append({"path": self.path, "method": "GET", "headers": _lower(self.headers), "body": None})
        if not self._auth_ok():
            return
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [
                {"id": srv.model, "object": "model", "created": 1700000000, "owned_by": "kenning-test"}]}).encode())
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        srv = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparseable": raw.decode("utf-8", "replace")}
        srv.requests.append({"path": self.path, "method": "POST", "headers": _lower(self.headers), "body": body})
        if not self._auth_ok():
            return
        path = self.path.rstrip("/")
        if path.endswith("/chat/completions"):
            answer = srv._next_chat(body)
            make = lambda: srv.chat_body(answer, body)  # noqa: E731
        elif path.endswith("/embeddings"):
            answer = srv._next_embedding()
            make = lambda: srv.embeddings_body(answer, body)  # noqa: E731
            if answer is None:
                answer = Answer()
        else:
            self._error(404, f"no route {self.path}")
            return
        if answer.delay_s:
            time.sleep(answer.delay_s)
        if answer.raw_body is not None:
            data = answer.raw_body.encode() if isinstance(answer.raw_body, str) else answer.raw_body
            self._send(answer.http_status, data, answer.headers)
        elif answer.http_status >= 400:
            message = answer.error_message or f"HTTP {answer.http_status}"
            if srv.echo_auth_in_errors:
                message += f" (request had Authorization: {self.headers.get('Authorization', '')})"
            self._error(answer.http_status, message, answer.headers)
        else:
            try:
                data = json.dumps(make(), ensure_ascii=False).encode()
            except Exception as e:  # noqa: BLE001 - a broken responder is a 500, not a dropped connection
                self._error(500, f"test server responder failed: {type(e).__name__}: {e}")
                return
            self._send(answer.http_status, data, answer.headers)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Run Kenning's scripted OpenAI-compatible test server.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model", default="kenning-test-model")
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--reply", default=None, help="A fixed JSON reply for every chat request (default: answers ping).")
    args = ap.parse_args(argv)
    srv = OpenAITestServer(port=args.port, model=args.model, api_key=args.api_key)
    srv.default_chat = Answer.text(args.reply) if args.reply else ping_responder
    srv.start()
    print(f"OpenAI-compatible test server at {srv.base_url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
