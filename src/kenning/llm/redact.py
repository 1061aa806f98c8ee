"""Keep secrets out of everything Kenning stores, logs or raises (issue 3 "API keys never appear")."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_SECRET_QUERY_KEYS = {"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "password", "secret"}
# Things shaped like bearer credentials, masked even when we were never told the key (e.g. a proxy's echo).
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def redact_url(url: str | None) -> str | None:
    """Drop ``user:pass@`` and mask credential-like query parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = [(k, MASK if k.lower() in _SECRET_QUERY_KEYS else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class Redactor:
    """Replaces every known secret (and anything shaped like a bearer token) with ``***``."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def text(self, s: str | None) -> str | None:
        if s is None:
            return None
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, MASK)
        return _BEARER.sub(lambda m: m.group(1) + MASK, s)

    def obj(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.obj(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.obj(v) for v in value]
        return value


# -- logging ------------------------------------------------------------------------------------------------
_LOG_SECRETS: set[str] = set()
_LOG_LOCK = threading.Lock()
# The loggers of the HTTP stack under the openai SDK: at DEBUG they print URLs and request options.
HTTP_LOGGERS = ("openai", "httpx", "httpx2", "httpcore", "httpcore2")


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        with _LOG_LOCK:
            secrets = list(_LOG_SECRETS)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not ours to fix
            return True
        clean = Redactor(secrets).text(message) or ""
        clean = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, clean)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


_QUERY_SECRET = re.compile(r"(?i)([?&](?:key|api_key|apikey|api-key|token|access_token|password|secret)=)[^&\s'\"]+")
_FILTER = _RedactingFilter()


def protect_logs(*secrets: str | None) -> None:
    """Make sure ``secrets`` never reach a log line of the HTTP stack (even at DEBUG)."""
    with _LOG_LOCK:
        _LOG_SECRETS.update(s for s in secrets if s and len(s) >= 4)
    # Logger filters do not apply to records propagated from child loggers, so every existing logger of the
    # HTTP stack gets the filter (the SDK's modules have created theirs on import, before any request).
    names = set(HTTP_LOGGERS) | {n for n in list(logging.root.manager.loggerDict)
                                 if n.split(".", 1)[0] in HTTP_LOGGERS}
    for name in names:
        lg = logging.getLogger(name)
        if _FILTER not in lg.filters:
            lg.addFilter(_FILTER)
