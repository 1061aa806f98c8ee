import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.sources.json_stream import Element, StreamProblem, iter_elements

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
    max_leaves=20,
)


def split(data: bytes, chunk: int):
    return list(iter_elements(io.BytesIO(data), chunk))


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=8), st.integers(1, 64), st.sampled_from([None, 1, 2]))
def test_elements_round_trip_whatever_the_chunking(items, chunk, indent):
    data = json.dumps(items, indent=indent, ensure_ascii=False).encode()
    out = split(data, chunk)
    assert all(isinstance(e, Element) for e in out)
    assert [json.loads(e.data) for e in out] == items
    assert [e.index for e in out] == list(range(len(items)))
    for e in out:  # offsets point at the element's bytes in the file
        assert data[e.offset:e.offset + len(e.data)] == e.data


def test_truncated_file_yields_everything_before_the_cut():
    data = b'[{"a": 1}, {"b": "x}"}, {"c": [1, 2'
    out = split(data, 5)
    assert [e.data for e in out if isinstance(e, Element)] == [b'{"a": 1}', b'{"b": "x}"}']
    problems = [p.code for p in out if isinstance(p, StreamProblem)]
    assert problems == ["TRUNCATED_RECORD", "ARRAY_NOT_CLOSED"]
    assert out[2].data == b'{"c": [1, 2'


def test_truncated_inside_a_string():
    out = split(b'[{"a": 1}, {"b": "unterminated', 4)
    assert [type(x).__name__ for x in out] == ["Element", "StreamProblem", "StreamProblem"]


def test_damaged_element_is_isolated():
    data = b'[{"a": 1}, {"b": 2,, "oops" }, {"c": 3}]'
    out = split(data, 3)
    assert [e.data for e in out] == [b'{"a": 1}', b'{"b": 2,, "oops" }', b'{"c": 3}']


def test_bom_whitespace_trailing_data_and_single_object():
    out = split(b'\xef\xbb\xbf  \n[ {"a":1} ]  tail', 2)
    assert isinstance(out[0], Element) and out[0].data == b'{"a":1}'
    assert isinstance(out[1], StreamProblem) and out[1].code == "TRAILING_DATA"
    single = split(b'{"title": "one"}\n', 3)
    assert len(single) == 1 and json.loads(single[0].data) == {"title": "one"}
    assert [p.code for p in split(b"   ", 2)] == ["EMPTY_FILE"]


def test_not_an_array():
    import pytest

    from kenning.sources.json_stream import NotJsonArray

    with pytest.raises(NotJsonArray):
        split(b'"just a string"', 4)
