"""JSON Canonicalization Scheme (RFC 8785), the form of every stored JSON value and hash input.

Two deliberate extensions, both recorded in docs/decisions.md:
- integers beyond 2**53 keep their exact digits (RFC 8785 would round them through a double);
- a lone UTF-16 surrogate is written as a ``\\udXXX`` escape (as ES2019 ``JSON.stringify``
  does) so the text stays valid UTF-8 and nothing is lost.
"""

from __future__ import annotations

import hashlib
import math
import re
from json.encoder import c_encode_basestring as _c_encode_string  # type: ignore[attr-defined]
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_string(s: str) -> str:
    if _c_encode_string is not None:
        return _c_encode_string(s)
    return _py_encode_string(s)  # pragma: no cover - CPython always has the C encoder


_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _py_encode_string(s: str) -> str:  # pragma: no cover
    out = []
    for ch in s:
        if ch in _ESC:
            out.append(_ESC[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_number(x: float | int) -> str:
    """ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires."""
    if isinstance(x, bool):  # pragma: no cover - caller handles bools
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"JCS cannot represent {x!r}")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    # split repr into digits and a decimal exponent: value = 0.d1d2... * 10**n  (ES notation)
    if "e" in r:
        mant, exp = r.split("e")
        exp_i = int(exp)
    else:
        mant, exp_i = r, 0
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    digits = (ip + fp).lstrip("0")
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    n = len(ip) + exp_i - lead_zeros
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    es = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + es
    return sign + digits[0] + "." + digits[1:] + "e" + es


def _utf16_key(k: str) -> bytes:
    return k.encode("utf-16-be", "surrogatepass")


def _sorted_keys(d: dict) -> list:
    keys = sorted(d)
    for k in keys:
        if not k.isascii():
            return sorted(d, key=_utf16_key)
    return keys


def _canon(obj: Any, out: list, memo: dict | None) -> None:
    t = type(obj)
    if t is str:
        out.append(_encode_string(obj))
    elif t is dict:
        if memo is not None:
            hit = memo.get(id(obj))
            if hit is not None:
                out.append(hit)
                return
        out.append("{")
        first = True
        for k in _sorted_keys(obj):
            if not isinstance(k, str):
                raise TypeError(f"JCS object keys must be strings, got {type(k).__name__}")
            if first:
                first = False
            else:
                out.append(",")
            out.append(_encode_string(k))
            out.append(":")
            _canon(obj[k], out, memo)
        out.append("}")
    elif t is list or t is tuple:
        if memo is not None:
            hit = memo.get(id(obj))
            if hit is not None:
                out.append(hit)
                return
        out.append("[")
        first = True
        for v in obj:
            if first:
                first = False
            else:
                out.append(",")
            _canon(v, out, memo)
        out.append("]")
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif t is int:
        out.append(str(obj))
    elif t is float:
        out.append(format_number(obj))
    elif isinstance(obj, str):
        out.append(_encode_string(str(obj)))
    elif isinstance(obj, int):
        out.append(str(int(obj)))
    elif isinstance(obj, float):
        out.append(format_number(float(obj)))
    elif isinstance(obj, dict):
        _canon(dict(obj), out, memo)
    elif isinstance(obj, (list, tuple)):
        _canon(list(obj), out, memo)
    else:
        from decimal import Decimal

        if isinstance(obj, Decimal):
            _canon(int(obj) if obj == obj.to_integral_value() and "." not in str(obj) else float(obj), out, memo)
        else:
            raise TypeError(f"JCS cannot encode {type(obj).__name__}")


def _escape_lone_surrogates(s: str) -> str:
    if _LONE_SURROGATE.search(s) is None:
        return s
    return _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), s)


def canonicalize_flagged(obj: Any, memo: dict | None = None) -> tuple[str, bool]:
    """Like canonicalize, and also say whether a lone surrogate had to be escaped."""
    out: list[str] = []
    _canon(obj, out, memo)
    text = "".join(out)
    if _LONE_SURROGATE.search(text) is None:
        return text, False
    return _escape_lone_surrogates(text), True


def canonicalize(obj: Any, memo: dict | None = None) -> str:
    """Return the JCS text of ``obj``.

    ``memo`` maps ``id(sub_object)`` to that sub-object's already computed JCS text, so a
    parent can be canonicalized without re-walking children we canonicalized before
    (the importer canonicalizes parts, then messages, then the whole conversation).
    """
    out: list[str] = []
    _canon(obj, out, memo)
    return _escape_lone_surrogates("".join(out))


def dumps(obj: Any) -> str:
    """Alias used for every ``*_json`` column."""
    return canonicalize(obj)


def sha256_hex(text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode("utf-8")
    return hashlib.sha256(text).hexdigest()


def jcs_hash(obj: Any) -> str:
    return sha256_hex(canonicalize(obj))


def has_lone_surrogate(s: str) -> bool:
    return _LONE_SURROGATE.search(s) is not None


def scrub_surrogates(s: str) -> str:
    """Replace lone surrogates with U+FFFD for TEXT columns (SQLite stores UTF-8)."""
    if _LONE_SURROGATE.search(s) is None:
        return s
    return _LONE_SURROGATE.sub("\ufffd", s)
