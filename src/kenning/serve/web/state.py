"""What every page shares: the vault path, the per-thread read-only vault, the CSRF and access tokens, the
template environment and the in-process caches keyed on the vault's version."""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from kenning.api import Vault
from kenning.pipeline.clock import Clock


def highlight(text: str | None, spans: list[tuple[int, int, str]] | None = None) -> Markup:
    """``text`` escaped, with each (start, end, css-class) span wrapped in <mark>. Spans that overlap an earlier one
    are dropped (the first, longest wins) so the markup always nests."""
    text = text or ""
    out, pos = [], 0
    for start, end, cls in sorted(spans or [], key=lambda s: (s[0], -s[1])):
        if start is None or end is None or start < pos or end > len(text) or end <= start:
            continue
        out.append(escape(text[pos:start]))
        out.append(Markup('<mark class="%s">') % cls)
        out.append(escape(text[start:end]))
        out.append(Markup("</mark>"))
        pos = end
    out.append(escape(text[pos:]))
    return Markup("").join(out)


def day(ts: str | None) -> str:
    return (ts or "")[:10]


def when(ts: str | None) -> str:
    """2024-12-31T07:02:39.311Z → 2024-12-31 07:02 (UTC)."""
    return (ts or "")[:16].replace("T", " ")


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


@dataclass
class WebState:
    db: Path
    config_path: str | None = None
    access_token: str | None = None          # required on every request when bound beyond loopback
    now: str | None = None                   # a frozen "now" (tests, benchmarks); None = wall clock
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    _local: threading.local = field(default_factory=threading.local)
    _cache: dict[Any, Any] = field(default_factory=dict)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)
    env: Environment = field(init=False)
    # one worker for work too slow for a request (an entity's month windows computed from the whole graph, U6)
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="kenning-ui"))
    _inflight: dict[Any, Future] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = Environment(loader=PackageLoader("kenning.serve.web", "templates"),
                               autoescape=select_autoescape(["html"], default=True), trim_blocks=True,
                               lstrip_blocks=True)
        self.env.filters.update(day=day, pct=pct, when=when)
        self.env.globals.update(highlight=highlight)

    def clock_now(self) -> str:
        return Clock(self.now).now()

    def reader(self) -> Vault:
        """This thread's read-only vault: pages that only read never hold a write handle (opened once per thread)."""
        v = getattr(self._local, "vault", None)
        if v is None:
            v = Vault.open(self.db, config_path=self.config_path, readonly=True)
            self._local.vault = v
        return v

    def writer(self) -> Vault:
        """A writable vault for one POST; the caller closes it."""
        return Vault.open(self.db, config_path=self.config_path)

    def cached(self, key: Any, version: Any, fn: Callable[[], Any]) -> Any:
        """``fn()`` once per (key, vault version); older versions of the same key are dropped."""
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]
        value = fn()
        with self._cache_lock:
            self._cache[key] = (version, value)
        return value

    def cached_or_background(self, key: Any, version: Any, fn: Callable[[], Any],
                             wait_s: float) -> tuple[bool, Any]:
        """(True, value) when ``fn()`` is cached or finishes within ``wait_s``; else (False, None) while it goes
        on in the background worker (the page says so and reloads). Exceptions come back to the caller."""
        done, value = self.peek(key, version)
        if done:
            return True, value
        with self._cache_lock:
            fut = self._inflight.get((key, version))
            if fut is None:
                fut = self._inflight[(key, version)] = self._pool.submit(self._fill, key, version, fn)
        try:
            return True, fut.result(timeout=wait_s)
        except TimeoutError:
            return False, None

    def _fill(self, key: Any, version: Any, fn: Callable[[], Any]) -> Any:
        try:
            value = fn()
            with self._cache_lock:
                self._cache[key] = (version, value)
            return value
        finally:
            with self._cache_lock:
                self._inflight.pop((key, version), None)

    def warm(self) -> None:
        """Load what the first search would (the vector mirror, the embedder) before anyone asks; errors are the
        first real search's to report."""
        try:
            # a time expression too: the first one loads the date parser (~0.25 s)
            self.reader().search("what did I say last winter about work", k=1)
        except Exception:
            pass

    def peek(self, key: Any, version: Any) -> tuple[bool, Any]:
        with self._cache_lock:
            hit = self._cache.get(key)
        return (True, hit[1]) if hit is not None and hit[0] == version else (False, None)

    def render(self, name: str, **ctx: Any) -> str:
        return self.env.get_template(name).render(csrf_token=self.csrf_token, **ctx)
