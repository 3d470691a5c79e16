"""D1: questions are ordered by a total function of their keys, never by declaration."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import MappedForm, d1_key, d1_sorted, map_elicitation


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["question_10", "question_2", "question_0"], ["question_0", "question_2", "question_10"]),
        # The prefix is everything before the trailing digits, interior digits included.
        (["step1_field2", "step1_field10", "step10_field1"], ["step10_field1", "step1_field2", "step1_field10"]),
        # `100_items` does not end in digits, so it has no number; `42` is all number.
        (["100_items", "42", "7"], ["7", "42", "100_items"]),
        # Equal prefix and number: the full key decides, bytewise.
        (["q_7", "q_007"], ["q_007", "q_7"]),
        # A numbered key sorts before the un-numbered key with the same prefix.
        (["question_", "question_3"], ["question_3", "question_"]),
        (["apiKey", "Zeta", "alpha"], ["Zeta", "alpha", "apiKey"]),
    ],
    ids=["question_N", "interior_digits", "leading_digits", "tiebreak", "numbered_first", "bytewise_prefix"],
)
def test_D1_spec_examples(keys: list[str], expected: list[str]) -> None:
    assert d1_sorted(keys) == expected


def test_D1_prefixes_compare_as_utf8_bytes_not_utf16_code_units() -> None:
    # A UTF-16 comparison (a JavaScript peer's `<`) puts U+1F600, encoded 0xD83D 0xDE00,
    # before U+FF5E; UTF-8 bytes (0xF0... against 0xEF...) put it after.
    assert d1_sorted(["\U0001f600", "\uff5e"]) == ["\uff5e", "\U0001f600"]


def test_D1_huge_numeric_suffixes_compare_numerically() -> None:
    big = "9" * 5000
    assert d1_sorted([f"q{big}", "q1" + "0" * 5000, "q2"]) == ["q2", f"q{big}", "q1" + "0" * 5000]


def test_D1_only_ascii_digits_count_as_the_number() -> None:
    # "²" and "٣" are digits to str.isdigit but not a number to D1.
    assert d1_key("q²")[1:3] == d1_key("q")[1:3]
    assert d1_sorted(["q٣", "q3"]) == ["q3", "q٣"]


#: Keys the web app can store: a form with a NUL in a key is declined
#: (docs/decisions/across-processes.md#unstorable-characters).
keys_strategy = st.sets(
    st.one_of(
        st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=8),
        st.builds(lambda p, n: f"{p}{n}", st.sampled_from(["question_", "q", "step1_", ""]), st.integers(0, 10**12)),
        st.builds(
            lambda p, z, n: f"{p}{'0' * z}{n}", st.sampled_from(["q_", "x"]), st.integers(0, 3), st.integers(0, 99)
        ),
    ),
    max_size=20,
)


@given(keys=keys_strategy, seed=st.integers())
def test_D1_any_key_set_in_any_declaration_order_maps_to_the_same_order(keys: set[str], seed: int) -> None:
    declared = sorted(keys)
    shuffled = declared[:]
    random.Random(seed).shuffle(shuffled)

    def mapped_order(order: list[str]) -> list[str]:
        params = {
            "mode": "form",
            "sessionId": "s",
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {k: {"type": "string"} for k in order}},
        }
        form = map_elicitation(params)
        return [q.id for q in form.questions] if isinstance(form, MappedForm) else []

    # An empty key is no question (see the mapping); every other key is one, in D1 order.
    assert mapped_order(shuffled) == mapped_order(declared) == d1_sorted(keys - {""})


@given(
    prefix=st.text(alphabet=st.characters(blacklist_categories=["Nd"]), max_size=5),
    numbers=st.sets(st.integers(0, 10**30), min_size=2),
)
def test_D1_same_prefix_orders_numerically(prefix: str, numbers: set[int]) -> None:
    keys = [f"{prefix}{n}" for n in numbers]

    assert d1_sorted(keys) == [f"{prefix}{n}" for n in sorted(numbers)]


@given(keys=st.lists(st.text(max_size=6), min_size=2, max_size=2, unique=True))
def test_D1_is_total_distinct_keys_never_tie(keys: list[str]) -> None:
    assert d1_key(keys[0]) != d1_key(keys[1])
