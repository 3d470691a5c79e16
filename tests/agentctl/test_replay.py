"""The replay buffer: what agentctl keeps for a resuming client, and the size its bound is written in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.replay import REPLAY_BYTES_VAR, ReplayBuffer, SizeError, load_replay_bytes, parse_size

ACTIONS = ["session.update", "turn.completed", "permission.requested", "elicitation.settled", "agent.exited"]

#: A stream: each notification's action and the length of its (ASCII) frame.
notifications = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(min_value=1, max_value=60)), max_size=60)


def _frame(seq: int, length: int) -> str:
    return f"{seq}:".ljust(length + len(f"{seq}:"), "x")


def _fill(buffer: ReplayBuffer, stream: list[tuple[str, int]]) -> list[str]:
    frames = []
    for seq, (action, length) in enumerate(stream, start=1):
        frames.append(_frame(seq, length))
        buffer.add(seq, action, frames[-1])
    return frames


def _expected(stream: list[tuple[str, int]], frames: list[str], max_bytes: int) -> list[str]:
    """What must be kept: the longest run of the newest frames that fits, none older than the turn before last."""
    turn_ends = [seq for seq, (action, _) in enumerate(stream, start=1) if action == "turn.completed"]
    oldest_needed = turn_ends[-2] + 1 if len(turn_ends) >= 2 else 1
    kept: list[str] = []
    total = 0
    for frame in reversed(frames[oldest_needed - 1 :]):
        if total + len(frame) > max_bytes:
            break
        kept.insert(0, frame)
        total += len(frame)
    return kept


@given(notifications, st.integers(min_value=1, max_value=600))
def test_it_keeps_exactly_the_newest_frames_since_the_turn_before_last_that_fit(stream, max_bytes: int) -> None:
    buffer = ReplayBuffer(max_bytes)
    frames = _fill(buffer, stream)
    gap, kept = buffer.since(0)
    assert kept == _expected(stream, frames, max_bytes)
    assert buffer.size == sum(len(frame) for frame in kept) <= max_bytes
    assert buffer.last_seq == len(stream)
    # Contiguous, and ending with the last one added.
    assert buffer.first_kept_seq == len(stream) - len(kept) + 1
    assert gap == (buffer.first_kept_seq > 1)


@given(notifications, st.integers(min_value=1, max_value=600), st.integers(min_value=0, max_value=80))
def test_since_gives_what_follows_in_order_and_says_whether_anything_after_was_lost(
    stream, max_bytes: int, after_seq: int
) -> None:
    buffer = ReplayBuffer(max_bytes)
    frames = _fill(buffer, stream)
    gap, owed = buffer.since(after_seq)
    first = buffer.first_kept_seq
    assert owed == frames[max(after_seq, first - 1) :]
    lost = range(after_seq + 1, first)  # sent after after_seq, no longer kept
    assert gap == bool(lost)
    if not gap:
        # Nothing was lost: the client gets every notification it has not applied.
        assert owed == frames[after_seq:]


def test_a_turn_end_drops_everything_through_the_one_before() -> None:
    buffer = ReplayBuffer(1 << 20)
    for seq, action in enumerate(
        ["session.update", "turn.completed", "session.update", "turn.completed", "session.update"], start=1
    ):
        buffer.add(seq, action, f"frame {seq}")
    assert buffer.since(0) == (True, ["frame 3", "frame 4", "frame 5"])
    assert buffer.since(2) == (False, ["frame 3", "frame 4", "frame 5"])
    buffer.add(6, "turn.completed", "frame 6")
    assert buffer.since(4) == (False, ["frame 5", "frame 6"])
    assert buffer.since(3) == (True, ["frame 5", "frame 6"])


def test_a_frame_bigger_than_the_bound_is_not_kept_and_a_client_that_needs_it_hears_of_the_gap() -> None:
    buffer = ReplayBuffer(10)
    buffer.add(1, "session.update", "small")
    buffer.add(2, "session.update", "x" * 11)
    assert buffer.since(1) == (True, [])
    assert buffer.first_kept_seq == 3
    assert buffer.since(2) == (False, [])


def test_nothing_sent_means_nothing_owed_and_no_gap() -> None:
    assert ReplayBuffer(10).since(0) == (False, [])
    assert ReplayBuffer(10).since(5) == (False, [])


def test_sizes_count_utf8_bytes() -> None:
    buffer = ReplayBuffer(4)
    buffer.add(1, "session.update", "üü")  # four bytes: fits
    assert buffer.since(0) == (False, ["üü"])
    buffer.add(2, "session.update", "ü")
    assert buffer.since(0) == (True, ["ü"])


def test_seqs_must_follow_on() -> None:
    buffer = ReplayBuffer(100)
    with pytest.raises(ValueError, match="does not follow"):
        buffer.add(2, "session.update", "frame")


# The bound's size ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [("1", 1), ("4096", 4096), ("512k", 512 << 10), ("8m", 8 << 20), ("1g", 1 << 30), (" 2M ", 2 << 20), ("1K", 1024)],
)
def test_sizes_are_bytes_or_binary_units(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "k", "0", "0k", "1.5m", "-1", "8mb", "8 m", "1t", "eight", "٣k"])
def test_refuses_anything_else_with_a_message_naming_the_value(text: str) -> None:
    with pytest.raises(SizeError, match="size") as refused:
        parse_size(text)
    assert repr(text) in str(refused.value)


def test_the_bound_defaults_to_eight_mebibytes_and_names_its_variable_when_wrong() -> None:
    assert load_replay_bytes({}) == load_replay_bytes({REPLAY_BYTES_VAR: ""}) == 8 << 20
    assert load_replay_bytes({REPLAY_BYTES_VAR: "1k"}) == 1024
    with pytest.raises(SizeError, match=REPLAY_BYTES_VAR):
        load_replay_bytes({REPLAY_BYTES_VAR: "lots"})


@given(st.integers(min_value=1, max_value=1 << 40), st.sampled_from(["", "k", "m", "g"]))
def test_every_written_size_reads_back(number: int, unit: str) -> None:
    assert parse_size(f"{number}{unit}") == number * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit]
