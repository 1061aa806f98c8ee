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
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterator

CHUNK = 8 * 1024 * 1024
# Everything up to the next structural byte, skipping whole strings. An unterminated string
# stops the match at its opening quote, which tells the caller to read more bytes.
_SKIP_TOP = re.compile(rb'[^"{}\[\],]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"{}\[\],]*)*', re.DOTALL)
# Inside an element only brackets matter: commas there are skipped too (far fewer Python iterations).
_SKIP_IN = re.compile(rb'[^"{}\[\]]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"{}\[\]]*)*', re.DOTALL)
_WS = b" \t\r\n"
_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_PLAIN = rb'[^"{}\[\]]++'


def _whole_element(levels: int) -> re.Pattern:
    """One regular expression that matches a whole array/object nested at most ``levels`` deep, tokenized
    exactly as the bracket loop below tokenizes it (strings skipped; any opening bracket closes with any closing
    one). Possessive quantifiers keep it linear: each alternative starts with a different byte, so there is
    nothing to backtrack into. The loop pays a Python iteration per bracket (a dozen per message); this pays
    one match per element, and the loop remains for what it cannot match (deeper nesting, an element cut by the
    end of the buffer, damage)."""
    pat = rb"[{\[](?:" + _PLAIN + rb"|" + _STRING + rb")*+[}\]]"
    for _ in range(levels - 1):
        pat = rb"[{\[](?:" + _PLAIN + rb"|" + _STRING + rb"|" + pat + rb")*+[}\]]"
    return re.compile(pat, re.DOTALL)


# Real exports nest below 20 (conversation → mapping → node → message → content → parts → item → …).
FAST_LEVELS = 24
_ELEMENT = _whole_element(FAST_LEVELS)


@dataclass(slots=True)
class Element:
    index: int          # position in the top-level array
    offset: int         # byte offset in the file
    data: bytes
    depth: int | None = None  # deepest nesting of arrays/objects, when the scanner counted it
    depth_max: int | None = None  # an upper bound on it, when the scanner matched the element whole

    def nesting(self) -> int:
        if self.depth is None:
            self.depth = nesting_depth(self.data)
        return self.depth

    def nests_within(self, limit: int) -> bool:
        """Is the nesting at most ``limit``? Counted only when the scanner's bound does not already say so."""
        if self.depth is None and self.depth_max is not None and self.depth_max <= limit:
            return True
        return self.nesting() <= limit


def nesting_depth(data: bytes) -> int:
    """How deep arrays/objects nest in ``data`` (strings skipped); a bracket-only loop."""
    depth = deepest = pos = 0
    n = len(data)
    while True:
        pos = _SKIP_IN.match(data, pos).end()
        if pos >= n or data[pos] == 0x22:
            return deepest
        if data[pos] in (0x7B, 0x5B):
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
        pos += 1


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


def iter_elements(f: BinaryIO, chunk_size: int = CHUNK, *, in_array: bool = False, base: int = 0,
                  first_index: int = 0) -> Iterator[Element | StreamProblem]:
    """``in_array``: ``f`` starts inside the top-level array at file offset ``base`` (a restart after
    resynchronisation), so no opening bracket is expected."""
    buf = f.read(max(chunk_size, 16))
    if in_array:
        yield from _scan(f, chunk_size, buf, base, 0, first_index, after_element=True)
        return
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
        nxt = buf[pos + 1:pos + 64].lstrip(_WS)[:1]
        if nxt != b"{":
            raise NotJsonArray(f"expected a JSON array of conversations, found {first!r} at byte {base + pos}")
        # One damaged byte where the '[' belongs, then conversations: read them anyway.
        yield StreamProblem("ARRAY_START_DAMAGED", f"byte {base + pos} should open the array ('['), found "
                            f"{first!r}; reading the conversations after it", offset=base + pos)
    yield from _scan(f, chunk_size, buf, base, pos + 1, first_index)


def _scan(f: BinaryIO, chunk_size: int, buf: bytes, base: int, pos: int, index: int,
          after_element: bool = False) -> Iterator[Element | StreamProblem]:
    depth = 1
    elem_start: int | None = None     # buffer position where the current element began
    scalar_start = pos                # where content after the last separator began
    emitted_since_sep = after_element
    deepest = 1
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
                whole = _ELEMENT.match(buf, pos)
                if whole is not None:  # the common case: the element in one match, no bracket loop
                    end = whole.end()
                    yield Element(index, base + pos, bytes(buf[pos:end]), None, FAST_LEVELS)
                    index += 1
                    emitted_since_sep = True
                    pos = end
                    continue
                elem_start = pos
                deepest = 1
            depth += 1
            if depth > deepest:
                deepest = depth
        elif c in (0x7D, 0x5D):  # } ]
            depth -= 1
            if depth == 1 and elem_start is not None:
                yield Element(index, base + elem_start, bytes(buf[elem_start:pos + 1]), deepest - 1)
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
                            index=index, offset=base + pos, data=bytes(trailing[:1024]))


# -- resynchronisation after damage ------------------------------------------------------------
#
# The bracket scanner trusts the bytes: one flipped quote or bracket shifts what it thinks is
# inside a string, and from then on it may swallow every later conversation into one element or
# end the array early. RecordStream watches for that (an element the consumer could not parse, a
# truncated element, data after the closing bracket) and resynchronises: it looks for the next
# '{' from which a whole JSON object that looks like a record parses, rejects the bytes in
# between as one damaged range, and restarts the scanner behind that record.


class _Tape:
    """A reader that keeps the bytes read since ``keep_from`` (a file offset), so a damaged
    element and whatever the scanner already buffered after it can be searched again."""

    def __init__(self, f: BinaryIO, base: int):
        self.f = f
        self.kept = bytearray()
        self.kept_base = base          # file offset of kept[0]
        self.keep_from = base

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        dead = self.keep_from - self.kept_base
        if dead > 0 and dead > len(self.kept) // 2:  # compact now and then: amortised linear
            del self.kept[:dead]
            self.kept_base = self.keep_from
        self.kept += data
        return data

    def release(self, offset: int) -> None:
        self.keep_from = max(self.keep_from, offset)

    def since(self, offset: int) -> bytes:
        return bytes(self.kept[max(0, offset - self.kept_base):])


class RecordStream:
    """Elements of a top-level JSON array, resynchronising after damage.

    ``looks_like_record(obj)`` says whether a parsed object is a record (not an inner object).
    Iterate it; when the consumer cannot use an element because its bytes are not valid JSON (or
    are not an object), it calls ``damaged(element, code, message)`` instead of rejecting it. The
    stream then resynchronises and reports the element as a ``StreamProblem``: with the consumer's
    code when the damage stayed inside it, as ``DAMAGED_RECORD`` with the whole byte range when the
    damage ran past its end (the scanner lost track of where records end).
    """

    def __init__(self, f: BinaryIO, looks_like_record: Callable[[Any], bool], chunk_size: int = CHUNK,
                 max_search_bytes: int | None = None):
        self.f, self.is_record, self.chunk = f, looks_like_record, chunk_size
        self.max_search = max_search_bytes
        self._damage: tuple[Element, str, str] | None = None  # an element the consumer could not use
        self.resyncs = 0

    def damaged(self, item: Element, code: str, message: str) -> None:
        self._damage = (item, code, message)

    def __iter__(self) -> Iterator[Element | StreamProblem]:
        tape = _Tape(self.f, 0)
        source: Iterator[Element | StreamProblem] = iter_elements(tape, self.chunk)
        prev_end = 0  # end of the last element taken: damage may begin right after it
        while True:
            item = next(source, None)
            if item is None:
                return
            held: StreamProblem | None = None
            bad: tuple[Element, str, str] | None = None
            if isinstance(item, Element):
                yield item
                if self._damage is None:
                    prev_end = item.offset + len(item.data)
                    tape.release(prev_end)
                    continue
                bad, self._damage = self._damage, None
                offset, index = item.offset, item.index
            elif item.code in ("TRUNCATED_RECORD", "TRAILING_DATA") and item.offset is not None:
                offset, index, held = item.offset, item.index or 0, item
            else:
                yield item
                continue
            # Search from the end of the last good element: a flipped byte between two records
            # can make the scanner start the next one late.
            refused = (offset, len(bad[0].data)) if bad else None
            skipped, record, rest = self._search(tape.since(prev_end), prev_end, index, tape.f, refused)
            if record is None and held is not None:
                yield held  # nothing readable after it: report it as the scanner saw it
                continue
            lead = len(skipped) - len(skipped.lstrip(_WS + b",["))
            start = prev_end + lead
            damaged_bytes = skipped[lead:].rstrip(_WS + b"," + (b"]" if record is None else b""))
            end = start + len(damaged_bytes)
            if bad is not None and damaged_bytes == bad[0].data:  # the damage stayed inside the element
                yield StreamProblem(bad[1], bad[2], index, offset, bad[0].data)
            else:
                self.resyncs += 1
                yield StreamProblem(
                    "DAMAGED_RECORD",
                    f"bytes {start}–{end - 1} hold no readable conversation (damaged JSON"
                    + (f": {bad[2]}" if bad else "") + "); skipped"
                    + ("" if record is not None else " to the end of the file"),
                    index, start, damaged_bytes)
            if record is None:
                return
            prev_end = record.offset
            tape = _Tape(_Chain(rest, tape.f), record.offset + len(record.data))
            tape.kept += record.data
            tape.kept_base = tape.keep_from = record.offset
            source = itertools.chain([record], iter_elements(tape, self.chunk, in_array=True,
                                                             base=record.offset + len(record.data),
                                                             first_index=index + 2))

    def _search(self, region: bytes, base: int, index: int, reader,
                not_at: tuple[int, int] | None) -> tuple[bytes, Element | None, bytes]:
        """The first record that parses whole from a '{' in ``region`` + the rest of ``reader``
        (never the one at ``not_at``, which the consumer refused). Returns (the bytes before it,
        the record as an element, the bytes after it)."""
        data = bytearray(region)
        eof = False
        decoder = json.JSONDecoder(parse_constant=_refuse_constant)
        i = 0
        text = data.decode("utf-8", "surrogateescape")

        def grow() -> bool:
            nonlocal text, eof
            if eof or (self.max_search is not None and len(data) >= self.max_search):
                return False
            more = reader.read(max(self.chunk, len(data)))  # doubling keeps the re-decoding linear
            if not more:
                eof = True
                return False
            data.extend(more)
            text = data.decode("utf-8", "surrogateescape")
            return True

        while True:
            j = text.find("{", i)
            if j < 0:
                if grow():
                    continue
                return bytes(data), None, b""
            try:
                obj, end = decoder.raw_decode(text, j)
            except json.JSONDecodeError as e:
                # Near the end of what was read, the failure may only mean "read more" (a literal,
                # number or string cut by the read): retry the same '{' with more bytes.
                if (e.pos >= len(text) - 64 or e.msg.startswith("Unterminated string")) and grow():
                    continue
                i = j + 1
                continue
            except RecursionError:
                i = j + 1
                continue
            if not self.is_record(obj):
                i = end  # nothing inside a valid inner value can start a record
                continue
            b0 = len(text[:j].encode("utf-8", "surrogateescape"))
            b1 = b0 + len(text[j:end].encode("utf-8", "surrogateescape"))
            if (base + b0, b1 - b0) == not_at:
                i = j + 1
                continue
            return bytes(data[:b0]), Element(index + 1, base + b0, bytes(data[b0:b1])), bytes(data[b1:])


def _refuse_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not valid JSON", name, 0)


class _Chain:
    """``prefix`` then the rest of ``f``."""

    def __init__(self, prefix: bytes, f: BinaryIO):
        self.prefix, self.f = prefix, f

    def read(self, n: int = -1) -> bytes:
        if not self.prefix:
            return self.f.read(n)
        if n is None or n < 0:
            data, self.prefix = self.prefix + self.f.read(), b""
            return data
        data, self.prefix = self.prefix[:n], self.prefix[n:]
        if len(data) < n:
            data += self.f.read(n - len(data))
        return data
