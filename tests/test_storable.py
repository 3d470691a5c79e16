"""What no database can store (NUL, lone surrogates, NaN) is replaced, and nothing else changes (``storable``)."""

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.storable import REPLACEMENT, storable, storable_text, unstorable_count

#: Any str at all, lone surrogates and NUL included (hypothesis leaves surrogates out unless asked).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))
STORABLE_TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)))

#: Any JSON value ``json.loads`` could return (NaN and infinities too), with any text in it.
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4),
    max_leaves=20,
)
STORABLE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | STORABLE_TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(STORABLE_TEXT, children, max_size=4),
    max_leaves=20,
)


def is_storable_text(text: str) -> bool:
    """What PostgreSQL takes in ``text``: valid UTF-8 without a NUL."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def test_a_nul_and_lone_surrogates_become_replacement_characters():
    assert storable_text("cat: \x00\x00ELF \ud800 and \udfff") == "cat: \ufffd\ufffdELF \ufffd and \ufffd"
    assert unstorable_count("cat: \x00\x00ELF \ud800") == 3


def test_a_pair_is_one_character_and_is_kept():
    assert storable_text("\U0001f600 \u00e9 \ufffe \x01") == "\U0001f600 \u00e9 \ufffe \x01"


@given(ANY_TEXT)
def test_any_text_comes_out_storable_the_same_length_and_idempotent(text):
    kept = storable_text(text)
    assert is_storable_text(kept)
    assert len(kept) == len(text)  # one mark for each character, nothing shifts
    assert storable_text(kept) == kept
    assert all(new in (old, REPLACEMENT) for new, old in zip(kept, text, strict=True))


@given(STORABLE_TEXT)
def test_storable_text_is_left_as_it_is(text):
    assert storable_text(text) is text
    assert unstorable_count(text) == 0


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@given(ANY_JSON)
def test_any_json_value_comes_out_storable_and_idempotent(value):
    kept = storable(value)
    assert all(is_storable_text(text) for text in _strings(kept))
    # What PostgreSQL's jsonb parses: no \u0000, no lone surrogate escape, no NaN or Infinity.
    encoded = json.dumps(kept, allow_nan=False)
    assert "\\u0000" not in encoded
    assert json.loads(encoded) == kept
    assert storable(kept) == kept
    assert unstorable_count(kept) == 0


@given(STORABLE_JSON)
def test_a_storable_json_value_is_returned_as_it_is(value):
    assert storable(value) is value
    assert unstorable_count(value) == 0


def test_nested_values_keys_too_and_numbers_json_cannot_hold():
    value = {"toolCallId": "t1", "content": [{"text": "a\x00b"}], "k\ud800": 1, "n": math.nan, "ok": [1.5, True]}
    assert storable(value) == {
        "toolCallId": "t1",
        "content": [{"text": "a\ufffdb"}],
        "k\ufffd": 1,
        "n": None,
        "ok": [1.5, True],
    }
    assert unstorable_count(value) == 3
    assert storable(("a\x00",)) == ["a\ufffd"]
