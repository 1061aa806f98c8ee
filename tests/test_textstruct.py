from hypothesis import given
from hypothesis import strategies as st

from kenning.sources.textstruct import blockquotes, citation_markers, code_fences

CITES = ("【[^】\\n]{0,200}†[^】\\n]{0,200}】", "\ue200[^\ue201]{0,300}\ue201")


def test_closed_fence_with_language():
    text = "see:\n```python\nprint('a@b.com')\n```\nafter"
    (f,) = code_fences(text)
    assert f["language"] == "python"
    assert text[f["char_start"]:f["char_end"]] == "```python\nprint('a@b.com')\n```"


def test_unclosed_fence_runs_to_end():
    text = "x\n```\nopen code"
    (f,) = code_fences(text)
    assert f == {"char_start": 2, "char_end": len(text), "language": None}


def test_cpp_tilde_four_backticks_and_indent():
    text = "```c++\nint x;\n```\n~~~\nt\n~~~\n````md\n```inner```\n````\n   ```bash\n   ls\n   ```"
    langs = [f["language"] for f in code_fences(text)]
    assert langs == ["c++", None, "md", "bash"]
    for f in code_fences(text):
        assert text[f["char_start"]:f["char_end"]].lstrip().startswith(("```", "~~~"))


def test_closing_fence_must_be_long_enough_and_bare():
    text = "````\na\n```\nb\n```` x\n````"
    (f,) = code_fences(text)
    assert text[f["char_start"]:f["char_end"]] == text


def test_blockquotes_per_line_newline_excluded_and_not_inside_fences():
    text = "> Anna said hi\n  > second\nplain\n```\n> not a quote\n```"
    qs = blockquotes(text, code_fences(text))
    assert [text[q["char_start"]:q["char_end"]] for q in qs] == ["> Anna said hi", "  > second"]


def test_citation_markers():
    text = "Berlin is big【11†source】 and old\ue200cite\ue202turn0search0\ue201."
    spans = [text[c["char_start"]:c["char_end"]] for c in citation_markers(text, CITES)]
    assert spans == ["【11†source】", "\ue200cite\ue202turn0search0\ue201"]


def test_offsets_count_code_points_after_astral_emoji():
    text = "👩‍👩‍👧 Zoë\n```\ncode\n```"
    (f,) = code_fences(text)
    assert text[f["char_start"]:f["char_end"]] == "```\ncode\n```"


@given(st.text(alphabet="`~> \nabc+", max_size=80))
def test_ranges_lie_within_text(text):
    fences = code_fences(text)
    for r in fences + blockquotes(text, fences):
        assert 0 <= r["char_start"] <= r["char_end"] <= len(text)
    prev_end = -1
    for f in fences:
        assert f["char_start"] > prev_end
        prev_end = f["char_end"]
