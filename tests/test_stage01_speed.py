"""Stage 0–1 speed work (issue 24 §3, decisions J1–J19): every shortcut gives exactly what the slow path gives."""

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.sources import json_stream
from kenning.sources.json_stream import FAST_LEVELS, Element, StreamProblem, iter_elements, nesting_depth

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
    max_leaves=30,
)
# bytes the bracket scanner must survive: quotes, escapes and brackets inside and outside strings
noisy = st.lists(st.sampled_from([b'"', b"\\", b"{", b"}", b"[", b"]", b",", b" ", b"a", b'\\"', b"\xc3\xa9"]),
                 max_size=40).map(b"".join)


def _slow(data: bytes, chunk: int, monkeypatch) -> list:
    """The same scan with the whole-element match switched off: the bracket loop alone (J1)."""
    with monkeypatch.context() as m:
        m.setattr(json_stream, "_ELEMENT", _Never())
        return list(iter_elements(io.BytesIO(data), chunk))


class _Never:
    def match(self, *_a):
        return None


def _shape(items: list) -> list:
    return [(type(x).__name__, x.index, x.offset, x.data, getattr(x, "code", None)) for x in items]


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=6), st.integers(1, 64), st.sampled_from([None, 1]))
def test_whole_element_match_gives_what_the_bracket_loop_gives(items, chunk, indent):
    data = json.dumps(items, indent=indent, ensure_ascii=False).encode()
    mp = pytest.MonkeyPatch()
    try:
        assert _shape(list(iter_elements(io.BytesIO(data), chunk))) == _shape(_slow(data, chunk, mp))
    finally:
        mp.undo()


@settings(max_examples=400, deadline=None)
@given(noisy, noisy, st.integers(1, 32))
def test_damaged_bytes_split_the_same_way_with_and_without_the_shortcut(a, b, chunk):
    data = b'[{"k": "' + a + b'"}, {' + b + b'}, {"z": [1]}]'
    mp = pytest.MonkeyPatch()
    try:
        assert _shape(list(iter_elements(io.BytesIO(data), chunk))) == _shape(_slow(data, chunk, mp))
    finally:
        mp.undo()


def test_the_depth_bound_and_the_exact_depth():
    shallow = b'[{"a": [[{"b": 1}]]}]'
    (el,) = list(iter_elements(io.BytesIO(shallow)))
    assert el.depth is None and el.depth_max == FAST_LEVELS  # matched whole: only the bound is known
    assert el.nests_within(128) and el.depth is None          # no count needed under the default limit
    assert not el.nests_within(3) and el.depth == 4            # a lower limit counts exactly
    deep_value = "[" * (FAST_LEVELS + 5) + "]" * (FAST_LEVELS + 5)
    deep = ('[{"a": ' + deep_value + '}, {"b": 2}]').encode()
    out = list(iter_elements(io.BytesIO(deep)))
    assert [type(x) for x in out] == [Element, Element]
    assert out[0].depth == FAST_LEVELS + 6 == nesting_depth(out[0].data)  # the bracket loop counted it
    assert out[1].data == b'{"b": 2}' and out[1].depth_max == FAST_LEVELS


def test_an_element_cut_by_the_buffer_end_falls_back_and_is_still_whole():
    data = json.dumps([{"t": "x" * 100, "n": [1, 2, {"y": "}"}]} for _ in range(20)]).encode()
    out = list(iter_elements(io.BytesIO(data), 37))
    assert all(isinstance(e, Element) for e in out) and len(out) == 20
    assert all(data[e.offset:e.offset + len(e.data)] == e.data for e in out)
    truncated = list(iter_elements(io.BytesIO(data[:-30]), 37))
    assert [p.code for p in truncated if isinstance(p, StreamProblem)] == ["TRUNCATED_RECORD", "ARRAY_NOT_CLOSED"]


# -- JCS fast path (J2, J4) ---------------------------------------------------------------------------------------

import rfc8785  # noqa: E402

from kenning.sources.jcs import _fast_bytes, canonical_bytes, canonicalize  # noqa: E402

tricky_floats = st.sampled_from([1e21, 1e20, 2e-6, 9.99e-6, 1e-5, 1e-7, -0.0, 0.0, 5e-324, 1.5e16, 1e16, 1.0, -3.0,
                                 12.05, 1.7976931348623157e308, 2.5e-6, 1e-60, 123.0e-6])
numberish = st.lists(st.sampled_from(["0e-6", "9e+1", "1.0", ",", ":", "[", "-", "a", "2.0]", "e-6", "\u00e9", "\""]),
                     max_size=8).map("".join)
mixed = st.recursive(
    tricky_floats | st.floats(allow_nan=False, allow_infinity=False) | st.integers(-2**53 + 1, 2**53 - 1) | numberish,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(numberish, c, max_size=4),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(mixed)
def test_fast_jcs_equals_rfc8785_on_numbers_next_to_number_like_text(value):
    assert canonicalize(value).encode("utf-8") == rfc8785.dumps(value) == canonical_bytes(value)


def test_uuid_hex_that_looks_like_an_exponent_stays_on_the_fast_path():
    node = {"id": "8946cd0e-6b97-4fdc-8008-2eb265290253", "children": ["379a513b-9d83-455a-9c7e-6e78ef6b5041"],
            "t": "version 2.0, see 1e+5", "weight": 1}
    assert _fast_bytes(node) is not None                      # no false alarm: the exact path is not needed
    assert _fast_bytes({"w": 2e-6}) is None and _fast_bytes([1.0]) is None and _fast_bytes({"x": -0.0}) is None
    assert canonicalize({"w": 2e-6, "id": "0e-6"}) == '{"id":"0e-6","w":0.000002}'


# -- one decoder for every record (J7) ----------------------------------------------------------------------------

from kenning.sources.chatgpt import RecordError, parse_record  # noqa: E402


@pytest.mark.parametrize("data", [b'{"a": 1.0, "b": -0.0, "c": 1e400, "d": 12345678901234567890123}', b'\xef\xbb\xbf{"a": 1}',
                                  b'{"a": NaN}', b'{"a": 1} x', b'{"a": "\\ud800"}', b"[1, 2", b'{"a": 1, "a": 2}'])
def test_parse_record_gives_what_json_loads_gives(data):
    def reference():
        return json.loads(data.decode("utf-8"), parse_constant=_refuse, parse_float=_parse_float)

    from kenning.sources.chatgpt import _parse_float

    try:
        want = ("ok", reference())
    except (ValueError, RecursionError) as e:
        want = ("error", f"not valid JSON: {e}")
    try:
        got = ("ok", parse_record(data)[0])
    except RecordError as e:
        got = ("error", str(e))
    assert repr(got) == repr(want)


def _refuse(name):
    raise ValueError(f"{name} is not valid JSON")


# -- ids from strings and integers (J9) ---------------------------------------------------------------------------

from kenning.sources.ids import IdFactory  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text() | st.floats(allow_nan=False,
                                                                                               allow_infinity=False),
                min_size=1, max_size=4))
def test_ids_equal_uuid5_of_the_exact_jcs(components):
    import uuid

    from kenning.sources.ids import encode_component

    name = canonicalize([encode_component(c) for c in components])
    want = str(uuid.uuid5(uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), name))  # lone surrogates: escaped
    assert IdFactory().make(*components) == want


# -- compiled JSON pointers (J3) ------------------------------------------------------------------------------------

from collections import OrderedDict  # noqa: E402

from kenning.sources.jsonpointer import MISSING, _walk, _tokens, resolve, resolve_first  # noqa: E402

keys = st.sampled_from(["a", "b", "0", "1", "01", "", "~", "/", "m~n"])
docs = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(keys, c, max_size=3)
                    | st.dictionaries(keys, c, max_size=3).map(OrderedDict), max_leaves=15)
pointers = st.lists(keys.map(lambda k: k.replace("~", "~0").replace("/", "~1")), max_size=4).map(
    lambda toks: "".join("/" + t for t in toks))


@settings(max_examples=500, deadline=None)
@given(docs, pointers, st.lists(pointers, max_size=3))
def test_compiled_pointers_give_what_the_walk_gives(doc, pointer, alternatives):
    assert resolve(doc, pointer) == _walk(doc, _tokens(pointer)) or (
        resolve(doc, pointer) is MISSING and _walk(doc, _tokens(pointer)) is MISSING)
    expected = next((v for p in alternatives if (v := _walk(doc, _tokens(p))) is not MISSING and v is not None),
                    MISSING)
    got = resolve_first(doc, alternatives)
    assert got is expected or got == expected
    assert resolve(doc, None) is MISSING and resolve(doc, "no-slash") is MISSING


def test_compiled_pointers_on_every_path_length():
    doc = {"a": {"b": {"c": {"d": 4}, "l": [10, {"x": 11}]}, "n": None, "a": 1}, "o": OrderedDict(p={"q": 2}),
           "l": [{"m": 3}], "": {"": 5}, "~/": 6}
    cases = {"/a": doc["a"], "/a/b": doc["a"]["b"], "/a/a": 1, "/a/b/c": {"d": 4}, "/a/b/c/d": 4, "/a/b/l/1/x": 11,
             "/a/n": None, "/a/n/x": MISSING, "/a/zz": MISSING, "/zz/b": MISSING, "/a/b/zz": MISSING,
             "/o/p/q": 2, "/l/0/m": 3, "/l/01/m": MISSING, "/l/1": MISSING, "//": 5, "/~0~1": 6, "/a/b/c/zz": MISSING}
    for pointer, want in cases.items():
        got = resolve(doc, pointer)
        assert got is want or got == want, pointer
    assert resolve_first(doc, ["/a/n", "/a/zz", "/a/a"]) == 1 and resolve_first(doc, ["/a/n"]) is MISSING
    assert resolve_first(doc, "/a/n") is None  # a single pointer gives null as null
    assert resolve([{"a": 1}], "/0/a") == 1 and resolve("text", "/a") is MISSING
