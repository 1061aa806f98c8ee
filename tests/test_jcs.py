import json
import math

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.sources.jcs import canonicalize, canonicalize_flagged, format_number, jcs_hash, sha256_hex


def test_rfc8785_vectors():
    # UTF-16 key order: U+1F600 (surrogates D83D…) sorts before U+FFFF? No: D83D < FFFF, so 😀 first.
    assert canonicalize({"\uffff": 1, "😀": 2}) == '{"😀":2,"\uffff":1}'
    assert canonicalize({"b": 1, "a": 2, "aa": 3}) == '{"a":2,"aa":3,"b":1}'
    assert canonicalize(1e21) == "1e+21"
    assert canonicalize(1e-7) == "1e-7"
    assert canonicalize(-0.0) == "0"
    assert canonicalize(5.0) == "5"
    assert canonicalize(0.000001) == "0.000001"
    assert canonicalize(123456789012345680000.0) == "123456789012345680000"
    assert canonicalize("\n") == '"\\n"'
    assert canonicalize("\u001f") == '"\\u001f"'
    assert canonicalize("é✓😀") == '"é✓😀"'  # non-ASCII emitted raw
    assert canonicalize({"a": [1, True, None, "x"]}) == '{"a":[1,true,null,"x"]}'


def test_rfc8785_appendix_b_numbers():
    # RFC 8785 Appendix B examples (IEEE 754 value → JSON text)
    cases = {
        0.0: "0", -0.0: "0", 1e-6: "0.000001", 1e-7: "1e-7", 1e21: "1e+21", 1e20: "100000000000000000000",
        9007199254740992.0: "9007199254740992", 295147905179352830000.0: "295147905179352830000",
        4.5: "4.5", 2e-3: "0.002", 0.000001: "0.000001", 333333333.3333332: "333333333.3333332",
        5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
    }
    for value, text in cases.items():
        assert format_number(value) == text, value


def test_big_integers_keep_their_digits():
    # docs/decisions.md D10: exact digits beyond 2**53 (RFC 8785 would round through a double)
    assert canonicalize(123456789012345678901234567890) == "123456789012345678901234567890"
    assert canonicalize(2**53 + 1) == "9007199254740993"


def test_lone_surrogate_escaped_and_flagged():
    text, flagged = canonicalize_flagged({"t": "a\ud83db"})
    assert flagged and text == '{"t":"a\\ud83db"}'
    text.encode("utf-8")  # valid UTF-8
    assert canonicalize_flagged({"t": "😀"}) == ('{"t":"😀"}', False)


def test_hash_is_sha256_of_utf8_jcs():
    assert jcs_hash({"b": 1, "a": "é"}) == sha256_hex('{"a":"é","b":1}'.encode())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_matches_rfc8785_reference(value):
    assert canonicalize(value).encode("utf-8") == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_canonical_form_is_a_fixed_point(value):
    text = canonicalize(value)
    assert canonicalize(json.loads(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_round_trip(x):
    assert float(format_number(x)) == x or (x == 0 and math.copysign(1, x) < 0)


def test_memo_reuses_subtrees():
    part = {"z": 1, "a": [1, 2]}
    memo = {id(part): canonicalize(part)}
    assert canonicalize({"p": part}, memo) == '{"p":{"a":[1,2],"z":1}}'


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_fast_and_exact_paths_agree(value):
    from kenning.sources.jcs import _fast, _slow

    fast = _fast(value)
    if fast is not None:
        assert fast == _slow(value, None)


def test_fast_path_falls_back_where_orjson_differs():
    assert canonicalize({"w": 1.0, "t": 1.5e16, "z": -0.0}) == '{"t":15000000000000000,"w":1,"z":0}'
    assert canonicalize({"\ue000": 1, "😀": 2}) == '{"😀":2,"\ue000":1}'
    assert canonicalize(2**70) == str(2**70)


def test_fast_uuid5_matches_stdlib():
    import uuid

    from kenning.sources.ids import IdFactory

    ids = IdFactory()
    for comps in (("part", "m", 0), ("message", "c", None), ("x", "", "é😀", 1.5)):
        name = canonicalize([{None: "__NULL__", "": "__EMPTY__"}.get(c, c) if not isinstance(c, float) else c
                             for c in comps])
        assert ids.make(*comps) == str(uuid.uuid5(uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), name))
