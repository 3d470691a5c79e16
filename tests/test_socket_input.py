"""socket_input: a JSON value of storable text is read back whole, any other made storable; runaway nesting refused."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.socket_input import MAX_COLUMN_INT, UnreadableFrame, column_int, json_frame

#: Text every database stores: any code point but the surrogates (no UTF-8) and NUL (PostgreSQL).
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda children: st.lists(children) | st.dictionaries(TEXT, children),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_any_json_value_of_real_text_reads_back_as_sent(value):
    assert json_frame(json.dumps(value), max_bytes=1 << 20) == value


@given(JSON_VALUES, st.integers(0xD800, 0xDFFF), st.booleans())
def test_a_lone_surrogate_anywhere_becomes_the_replacement_character(value, surrogate, as_key):
    """As everywhere text comes in: kept, with U+FFFD for what UTF-8 cannot carry."""
    hostile = {chr(surrogate): value} if as_key else [value, {"k": chr(surrogate)}]
    read = json_frame(json.dumps(hostile), max_bytes=1 << 20)
    json.dumps(read, ensure_ascii=False).encode("utf-8")  # UTF-8 carries all of it now
    assert ("\ufffd" in read) if as_key else read[1] == {"k": "\ufffd"}


@pytest.mark.parametrize("depth", [10_000, 1_000_000])
def test_nesting_deeper_than_the_parser_recurses_is_refused_as_not_json(depth):
    with pytest.raises(UnreadableFrame) as refused:
        json_frame("[" * depth + "]" * depth, max_bytes=1 << 22)
    assert refused.value.reason == UnreadableFrame.NOT_JSON


def test_a_frame_over_the_limit_is_refused_before_it_is_parsed():
    with pytest.raises(UnreadableFrame) as refused:
        json_frame(json.dumps("é" * 600), max_bytes=1000)
    assert refused.value.reason == UnreadableFrame.TOO_LARGE


@given(st.integers())
def test_a_number_is_a_column_int_exactly_when_a_bigint_column_holds_it(number):
    if -MAX_COLUMN_INT <= number <= MAX_COLUMN_INT:
        assert column_int(str(number)) == number
    else:
        with pytest.raises(ValueError, match="beyond any column"):
            column_int(str(number))
