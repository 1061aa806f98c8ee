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

import orjson

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


# orjson writes RFC 8785 text for everything except: integral floats ("1.0", "-0.0", "1.5e+16"), values in
# [1e-6, 1e-5) (it writes "2e-6" where ECMAScript writes "0.000002"), and
# key order when an object mixes astral characters with U+E000–U+FFFF (it sorts by code point, RFC 8785
# by UTF-16 unit). When its output could hold either, the exact Python path decides.
_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
_AFTER_INTEGRAL = (b",", b"]", b"}", b"")


_NUMBER_BYTES = frozenset(b"0123456789.eE+-")
_BEFORE_NUMBER = frozenset(b":,[")


def _in_number(b: bytes, i: int) -> bool:
    """Is byte ``i`` part of a number token? In orjson's compact output a number starts the text or follows
    ``:``, ``,`` or ``[``; digits inside a string ("…4fdc-8946cd0e-6b97…" in a UUID) follow a letter or a
    quote. Text inside a string can still look like a number ("a,2e-6"): that only costs the exact path."""
    j = i
    while j > 0 and b[j - 1] in _NUMBER_BYTES:
        j -= 1
    return j == 0 or b[j - 1] in _BEFORE_NUMBER


def _float_form_differs(b: bytes) -> bool:
    """Does orjson's output hold a number token it writes differently from RFC 8785?

    ``1.0`` / ``-0.0`` (integral floats), ``1.5e+16`` and ``2e-6``; text that merely looks like one
    (not preceded by a digit, or inside a string: J4) is skipped. bytes.find keeps the scan in C."""
    for pat, n in ((b".0", 2), (b"e+", 2), (b"e-6", 3)):
        i = b.find(pat)
        while i != -1:
            if i > 0 and 0x30 <= b[i - 1] <= 0x39:
                nxt = b[i + n:i + n + 1]
                if (pat == b"e+" or (pat == b".0" and nxt in _AFTER_INTEGRAL) or (pat == b"e-6" and not nxt.isdigit())) \
                        and _in_number(b, i - 1):
                    return True
            i = b.find(pat, i + 1)
    return False


def _key_order_may_differ(b: bytes) -> bool:
    return any(lead in b for lead in _ASTRAL_LEADS) and (b"\xee" in b or b"\xef" in b)


_DUMPS = orjson.dumps
_SORT_KEYS = orjson.OPT_SORT_KEYS
_ORJSON_REFUSES = (TypeError, orjson.JSONEncodeError)  # lone surrogates, ints beyond 64 bits, odd types


def _fast_bytes(obj: Any) -> bytes | None:
    """orjson's UTF-8 output when it is the JCS text, else None (the exact Python path decides)."""
    try:
        b = _DUMPS(obj, option=_SORT_KEYS)
    except _ORJSON_REFUSES:
        return None
    # Cheap substring tests first; the precise checks run only when one hits.
    if (b".0" in b or b"e+" in b or b"e-6" in b) and _float_form_differs(b):
        return None
    if not b.isascii() and _key_order_may_differ(b):
        return None
    return b


def _fast(obj: Any) -> str | None:
    b = _fast_bytes(obj)
    return None if b is None else b.decode("utf-8")


def _slow(obj: Any, memo: dict | None) -> str:
    out: list[str] = []
    _canon(obj, out, memo)
    return "".join(out)


def _exact_flagged(obj: Any, memo: dict | None) -> tuple[str, bool]:
    text = _slow(obj, memo)
    if _LONE_SURROGATE.search(text) is None:
        return text, False
    return _escape_lone_surrogates(text), True


def canonicalize_flagged(obj: Any, memo: dict | None = None) -> tuple[str, bool]:
    """Like canonicalize, and also say whether a lone surrogate had to be escaped."""
    b = _fast_bytes(obj)
    if b is not None:
        return b.decode("utf-8"), False
    return _exact_flagged(obj, memo)


class FlaggedJcs:
    """canonicalize_flagged as a callable that remembers whether any text needed a lone surrogate escaped (the
    importers then scrub their extracted text and record the repair); ``remember`` also memoizes containers so a
    conversation's JCS reuses its nodes' and parts' text."""

    def __init__(self, *, remember: bool = False) -> None:
        self.memo: dict[int, str] = {}
        self.had_surrogates = False
        self.remember = remember

    def __call__(self, o: Any) -> str:
        # The fast path inline: the importer calls this for every part and message node (J2).
        b = _fast_bytes(o)
        if b is not None:
            text = b.decode("utf-8")
        else:
            text, flagged = _exact_flagged(o, self.memo)
            self.had_surrogates |= flagged
        if self.remember and isinstance(o, (dict, list)):
            self.memo[id(o)] = text
        return text


def canonicalize(obj: Any, memo: dict | None = None) -> str:
    """Return the JCS text of ``obj``.

    ``memo`` maps ``id(sub_object)`` to that sub-object's already computed JCS text, so a
    parent can be canonicalized without re-walking children we canonicalized before
    (the importer canonicalizes parts, then messages, then the whole conversation).
    """
    b = _fast_bytes(obj)
    if b is not None:
        return b.decode("utf-8")
    return _exact_flagged(obj, memo)[0]


def canonical_bytes(obj: Any) -> bytes:
    """The JCS text as UTF-8 bytes (what every hash reads), without a round trip through str on the fast path."""
    b = _fast_bytes(obj)
    return b if b is not None else _exact_flagged(obj, None)[0].encode("utf-8")


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
