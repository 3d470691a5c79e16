"""The session badge an operator reads, and why Send is off while a turn is open."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.sessions.display import DisplayState, display_state, turn_open_reason
from kandev_web.sessions.models import SessionState
from kandev_web.sessions.pending import CLARIFICATION, PERMISSION

W = SessionState.WAITING_FOR_INPUT


@pytest.mark.parametrize(
    ("state", "pending", "turn_open", "shown"),
    [
        # Kandev's overloaded WAITING_FOR_INPUT, told apart:
        (W, None, False, DisplayState.READY),  # after every normal turn
        (W, PERMISSION, True, DisplayState.NEEDS_PERMISSION),  # a permission request
        (W, CLARIFICATION, True, DisplayState.NEEDS_ANSWER),  # ask_user_question_kandev blocking
        (W, CLARIFICATION, False, DisplayState.NEEDS_ANSWER),  # a question left behind, still answerable
        # An elicitation keeps the session RUNNING (the turn is open); the question is what it needs.
        (SessionState.RUNNING, CLARIFICATION, True, DisplayState.NEEDS_ANSWER),
        (SessionState.RUNNING, None, True, DisplayState.RUNNING),
        (SessionState.IDLE, None, False, DisplayState.READY),
        (SessionState.STARTING, None, True, DisplayState.STARTING),
        (SessionState.CREATED, None, False, DisplayState.STARTING),
        (SessionState.FAILED, PERMISSION, True, DisplayState.FAILED),
        (SessionState.CANCELLED, CLARIFICATION, False, DisplayState.STOPPED),
        (SessionState.COMPLETED, None, False, DisplayState.STOPPED),
    ],
)
def test_the_badge_says_what_the_session_needs(state, pending, turn_open, shown):
    assert display_state(state, pending_action=pending, turn_open=turn_open) == shown


@given(st.sampled_from(SessionState), st.sampled_from([None, PERMISSION, CLARIFICATION]), st.booleans())
def test_waiting_for_input_is_never_shown_as_such(state, pending, turn_open):
    shown = display_state(state, pending_action=pending, turn_open=turn_open)
    assert shown in set(DisplayState)
    assert "input" not in str(shown.label).lower()
    # An operator's action is named whenever the live session waits for one.
    if pending and state not in (SessionState.FAILED, SessionState.CANCELLED, SessionState.COMPLETED):
        assert shown in (DisplayState.NEEDS_PERMISSION, DisplayState.NEEDS_ANSWER, DisplayState.STARTING)


def test_the_labels_are_the_ones_an_operator_reads():
    assert [str(state.label) for state in DisplayState] == [
        "Starting",
        "Running",
        "Needs your answer",
        "Needs your permission",
        "Ready for a follow-up",
        "Failed",
        "Stopped",
    ]


def test_why_send_is_off_names_what_the_turn_waits_for():
    assert "permission" in turn_open_reason(PERMISSION)
    assert "question" in turn_open_reason(CLARIFICATION)
    assert "still working" in turn_open_reason(None)
