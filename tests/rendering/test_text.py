"""Telling repeated wording apart, so a question's message, title and prompt are each read once."""

import pytest

from kandev_web.rendering.text import says_the_same


@pytest.mark.parametrize(
    ("a", "b"),
    [("Pick a colour", "Pick a colour"), ("Pick a colour", "pick a  colour?"), ("Database", " database:\n")],
)
def test_the_same_words_say_the_same(a, b):
    assert says_the_same(a, b)


@pytest.mark.parametrize(("a", "b"), [("Colour", "Pick a colour"), ("", ""), (None, ""), ("Database", None)])
def test_other_or_no_words_do_not(a, b):
    assert not says_the_same(a, b)
