"""The bounded tail of an agent's stderr that ``agent.exited`` carries."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.stderr_tail import MAX_BYTES, MAX_LINES, StderrTail, cap_tail


def test_the_last_lines_are_kept_in_order():
    assert cap_tail("\n".join(f"line {i}" for i in range(30))).splitlines() == [f"line {i}" for i in range(10, 30)]


def test_trailing_blank_lines_and_line_endings_say_nothing():
    assert cap_tail("Traceback\r\nKeyError: 'x'\r\n\n\n") == "Traceback\nKeyError: 'x'"


def test_a_cut_never_splits_a_character():
    assert cap_tail("é" * 3000) == "é" * 2048


def test_a_running_tail_keeps_only_what_it_will_show():
    tail = StderrTail()
    for i in range(1000):
        tail.add(f"noise {i}\n")
    tail.add("y" * 100_000 + "\n")
    assert tail.text() == "y" * MAX_BYTES


#: Lines as an agent writes them: no line breaks inside (control characters and separators included).
_LINES = st.lists(st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))), max_size=60)


@given(_LINES)
def test_the_tail_is_bounded_and_is_the_end_of_what_was_written(lines):
    tail = StderrTail()
    for line in lines:
        tail.add(line)
    text = tail.text()
    assert len(text.encode()) <= MAX_BYTES
    assert len(text.splitlines()) <= MAX_LINES
    assert "\n".join(line.rstrip() for line in "\n".join(lines).splitlines()).rstrip().endswith(text)


def test_a_nul_or_a_lone_surrogate_becomes_a_replacement_character():
    """What PostgreSQL cannot store (NUL, lone surrogates) never reaches the session row."""
    tail = cap_tail("boom\x00here\nbad \ud800 half")
    assert tail == "boom\ufffdhere\nbad \ufffd half"
    assert "\x00" not in tail
    tail.encode("utf-8")  # no lone surrogate left
