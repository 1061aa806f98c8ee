"""Split a (possibly huge, possibly damaged) top-level JSON array into its elements' raw bytes.

We scan bytes rather than parse, so that:
- memory stays flat: one element is held at a time, whatever the file size;
- each element keeps its exact source bytes (rejects store them; unchanged records are
  recognised by their byte hash without parsing);
- a damaged element is rejected alone and the scan goes on with the next one;
- a truncated file yields every complete element before the cut.
Strings are skipped with one regular expression, so the Python loop only sees brackets.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

CHUNK = 8 * 1024 * 1024
# Everything up to the next structural byte, skipping whole strings. An unterminated string
# stops the match at its opening quote, which tells the caller to read more bytes.
_SKIP_TOP = re.compile(rb'[^"{}\[\],]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"{}\[\],]*)*', re.DOTALL)
# Inside an element only brackets matter: commas there are skipped too (far fewer Python iterations).
_SKIP_IN = re.compile(rb'[^"{}\[\]]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"{}\[\]]*)*', re.DOTALL)
_WS = b" \t\r\n"


@dataclass(slots=True)
class Element:
    index: int          # position in the top-level array
    offset: int         # byte offset in the file
    data: bytes


@dataclass(slots=True)
class StreamProblem:
    code: str           # TRUNCATED_RECORD | ARRAY_NOT_CLOSED | TRAILING_DATA | NOT_AN_ARRAY | EMPTY_FILE
    message: str
    index: int | None = None
    offset: int | None = None
    data: bytes | None = None


class NotJsonArray(ValueError):
    pass


def _scalar(index: int, buf: bytes, start: int, end: int, base: int) -> Element | None:
    """A non-container element between separators, trimmed, with the offset of its first byte."""
    raw = buf[start:end]
    data = raw.strip(_WS)
    if not data:
        return None
    return Element(index, base + start + (len(raw) - len(raw.lstrip(_WS))), bytes(data))


def iter_elements(f: BinaryIO, chunk_size: int = CHUNK) -> Iterator[Element | StreamProblem]:
    buf = f.read(max(chunk_size, 16))
    base = 0                          # file offset of buf[0]
    if buf.startswith(codecs.BOM_UTF8):
        buf, base = buf[3:], 3
    pos = 0
    while True:                       # skip leading whitespace
        while pos < len(buf) and buf[pos] in _WS:
            pos += 1
        if pos < len(buf):
            break
        more = f.read(chunk_size)
        if not more:
            yield StreamProblem("EMPTY_FILE", "the file is empty")
            return
        buf, base, pos = more, base + len(buf), 0
    first = buf[pos:pos + 1]
    if first == b"{":
        # A single conversation object instead of an array: read it whole as element 0.
        rest = buf[pos:] + f.read()
        yield Element(0, base + pos, rest.rstrip(_WS))
        return
    if first != b"[":
        raise NotJsonArray(f"expected a JSON array of conversations, found {first!r} at byte {base + pos}")
    pos += 1
    depth = 1
    index = 0
    elem_start: int | None = None     # buffer position where the current element began
    scalar_start = pos                # where content after the last separator began
    emitted_since_sep = False
    eof = False
    closed = False
    while True:
        m = (_SKIP_TOP if depth == 1 else _SKIP_IN).match(buf, pos)
        pos = m.end()
        if pos >= len(buf) or buf[pos] == 0x22:  # out of bytes, or inside a string that runs past them
            if eof:
                break
            keep_from = min(x for x in (elem_start, scalar_start, pos) if x is not None)
            more = f.read(chunk_size)
            if not more:
                eof = True
                if pos < len(buf):  # an unterminated string at EOF
                    pos = len(buf)
                continue
            buf = buf[keep_from:] + more
            base += keep_from
            pos -= keep_from
            scalar_start -= keep_from
            if elem_start is not None:
                elem_start -= keep_from
            continue
        c = buf[pos]
        if c in (0x7B, 0x5B):  # { [
            if depth == 1:
                elem_start = pos
            depth += 1
        elif c in (0x7D, 0x5D):  # } ]
            depth -= 1
            if depth == 1 and elem_start is not None:
                yield Element(index, base + elem_start, bytes(buf[elem_start:pos + 1]))
                index += 1
                elem_start = None
                emitted_since_sep = True
            elif depth == 0:
                if not emitted_since_sep:
                    el = _scalar(index, buf, scalar_start, pos, base)
                    if el is not None:
                        yield el
                        index += 1
                closed = True
                pos += 1
                break
        elif c == 0x2C and depth == 1:  # , between elements
            if not emitted_since_sep:
                el = _scalar(index, buf, scalar_start, pos, base)
                if el is not None:
                    yield el
                    index += 1
                else:
                    yield StreamProblem("EMPTY_ELEMENT", f"an empty array element (',,') at byte {base + pos}",
                                        index, base + pos)
            scalar_start = pos + 1
            emitted_since_sep = False
        pos += 1
    if not closed:
        if elem_start is not None:
            yield StreamProblem(
                "TRUNCATED_RECORD",
                f"the file ends inside element {index}; everything before it was read",
                index, base + elem_start, bytes(buf[elem_start:]),
            )
        else:
            tail = buf[scalar_start:].strip(_WS) if not emitted_since_sep else b""
            if tail:
                yield StreamProblem("TRUNCATED_RECORD", f"the file ends inside element {index}", index,
                                    base + scalar_start, bytes(tail))
        yield StreamProblem("ARRAY_NOT_CLOSED", "the top-level array is never closed (file truncated?)")
        return
    trailing = buf[pos:].strip(_WS)
    if not trailing and not eof:
        more = f.read(1024)
        trailing = more.strip(_WS)
    if trailing:
        yield StreamProblem("TRAILING_DATA", f"ignored data after the closing ']' at byte {base + pos}",
                            offset=base + pos, data=bytes(trailing[:1024]))
