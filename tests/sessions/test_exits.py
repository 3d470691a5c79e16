"""How an agent's end is told: "exited with code 3", "killed by signal 9 (SIGKILL)", never "signal None"."""

import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.sessions.exits import Ending, agent_failure, agentctl_failure, ending


@pytest.mark.parametrize(
    ("exit_code", "signal_", "expected"),
    [
        (3, None, Ending(exit_code=3)),
        (0, None, Ending(exit_code=0)),
        (None, "SIGKILL", Ending(signal_number=9)),
        (None, "KILL", Ending(signal_number=9)),
        (None, "9", Ending(signal_number=9)),
        (None, 15, Ending(signal_number=15)),
        (-9, None, Ending(signal_number=9)),  # asyncio's return code for a killed child
        (None, None, Ending()),
        (None, "SIGNOPE", Ending()),
        ("3", None, Ending()),
        (True, None, Ending()),
    ],
)
def test_an_end_is_read_as_reported(exit_code, signal_, expected):
    assert ending(exit_code, signal_) == expected


def test_the_agents_end_in_words():
    assert agent_failure(ending(3, None)) == "The agent exited unexpectedly with code 3."
    assert agent_failure(ending(None, "SIGKILL")) == "The agent was killed by signal 9 (SIGKILL)."
    assert agent_failure(ending(None, None)) == "The agent exited unexpectedly."


def test_the_controllers_end_in_words():
    assert agentctl_failure(ending(1)) == "The agent's controller stopped unexpectedly: it exited with code 1."
    assert agentctl_failure(ending(-15)) == (
        "The agent's controller stopped unexpectedly: it was killed by signal 15 (SIGTERM)."
    )
    assert agentctl_failure(ending(None)) == "The agent's controller stopped unexpectedly."


@given(st.one_of(st.none(), st.integers(-64, 255)), st.one_of(st.none(), st.sampled_from(signal.Signals)))
def test_no_end_reads_none(exit_code, signal_):
    for sentence in (agent_failure(ending(exit_code, signal_ and signal_.name)), agentctl_failure(ending(exit_code))):
        assert "None" not in sentence
        assert "signal None" not in sentence
