"""A command's output as the operator reads it: the text, without the terminal's escapes."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.rendering.terminal import plain_output, tail


def test_colours_titles_and_cursor_moves_go_and_the_text_stays():
    data = "\x1b]0;title\x07\x1b[1;32mPASSED\x1b[0m tests/x.py\r\n\x1b[2K\x1b[1Gdone\tok\x07\n"
    assert plain_output(data) == "PASSED tests/x.py\ndone\tok\n"


def test_only_the_end_is_kept():
    assert tail("abcdef", 4) == ("cdef", True)
    assert tail("abc", 4) == ("abc", False)


@given(st.text())
def test_no_escape_or_control_character_is_left(data):
    text = plain_output(data)
    assert not any((ord(c) < 0x20 and c not in "\t\n") or c == "\x7f" for c in text)
