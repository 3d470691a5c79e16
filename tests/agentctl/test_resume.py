"""The resumable stream, over a real agentctl and raw WebSockets: seq numbers, replay after a seq, its bound.

``docs/agent-stream.md#resuming``: every broadcast notification carries the
next ``seq``; a client connecting with ``?after_seq=<n>`` is first sent every
kept notification after n, in order, then live ones; one asking for what was
dropped hears ``stream.gap`` first.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from kandev_web.agentctl import envelope
from kandev_web.agentctl.server import _after_seq
from testing_support.agentctl import open_session, text_prompt

Wire = dict[str, Any]


async def _raw(agentctl: Any, query: str = "", **options: Any) -> ClientConnection:
    return await connect(
        agentctl.url + query, additional_headers={"Authorization": f"Bearer {agentctl.token}"}, **options
    )


class Onlooker:
    """A raw connection that records every frame it receives, decoded, in order."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[Wire] = []
        self.raw: list[str] = []
        self._arrived = asyncio.Event()
        self._reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for data in self.connection:
            assert isinstance(data, str)
            self.raw.append(data)
            self.frames.append(json.loads(data))
            self._arrived.set()

    def notifications(self) -> list[Wire]:
        return [frame for frame in self.frames if frame["type"] == "notification"]

    async def until(self, condition: Callable[[list[Wire]], bool], timeout: float = 15.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition(self.notifications()):
                self._arrived.clear()
                await self._arrived.wait()

    async def until_action(self, action: str, count: int = 1, timeout: float = 15.0) -> None:
        await self.until(lambda notes: sum(note["action"] == action for note in notes) >= count, timeout)

    async def request(self, action: str, payload: Wire | None = None) -> Wire:
        """Send a request; return its answer, the first frame that is not a notification."""
        before = len(self.frames)
        await self.connection.send(envelope.request(action, payload or {}, id=f"r{before}"))
        async with asyncio.timeout(10):
            while True:
                answers = [frame for frame in self.frames[before:] if frame["type"] != "notification"]
                if answers:
                    return answers[0]
                self._arrived.clear()
                await self._arrived.wait()

    async def close(self) -> None:
        await self.connection.close()
        await self._reading


@pytest_asyncio.fixture
async def onlookers() -> AsyncIterator[Callable[..., Awaitable[Onlooker]]]:
    opened: list[Onlooker] = []

    async def open_onlooker(agentctl: Any, query: str = "") -> Onlooker:
        opened.append(Onlooker(await _raw(agentctl, query)))
        return opened[-1]

    yield open_onlooker
    for onlooker in opened:
        onlooker._reading.cancel()
        await onlooker.connection.close()


def _seqs(notes: list[Wire]) -> list[int]:
    return [note["seq"] for note in notes]


async def _play(client, session_id: str, scenario: str) -> None:
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(f"/e2e:{scenario}")})


@pytest.mark.asyncio
async def test_every_notification_of_every_kind_carries_the_next_seq_from_one(
    start_agentctl, connect, onlookers
) -> None:
    agentctl = await start_agentctl()
    watching = await onlookers(agentctl)
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    await _play(client, session_id, "permission-flow")
    requested = await inbox.next("permission.requested")
    await client.request(
        "agent.permissions.respond", {"pending_id": requested["pending_id"], "option_id": "allow-once"}
    )
    await inbox.next("turn.completed")
    # Responses and errors carry none.
    answers = [await watching.request("agent.elicitations.list"), await watching.request("agent.nope")]
    assert [answer["type"] for answer in answers] == ["response", "error"]
    assert not any("seq" in answer for answer in answers)
    await client.request("agent.shutdown")
    await watching.until_action("agent.exited")

    notes = watching.notifications()
    assert _seqs(notes) == list(range(1, len(notes) + 1))
    assert {note["action"] for note in notes} == {
        "session.update",
        "permission.requested",
        "permission.settled",
        "turn.completed",
        "agent.exited",
    }


@pytest.mark.asyncio
async def test_a_client_resuming_after_a_seq_gets_exactly_what_it_missed_in_order_then_what_follows(
    start_agentctl, connect, onlookers
) -> None:
    agentctl = await start_agentctl()
    client, _ = await connect(agentctl)
    session_id = await open_session(client)
    steady = await onlookers(agentctl)
    dropping = await onlookers(agentctl)
    await _play(client, session_id, "long-stream")

    await dropping.until(lambda notes: len(notes) >= 20)
    await dropping.close()
    last_applied = dropping.notifications()[-1]["seq"]
    # The stream goes on without it.
    await steady.until(lambda notes: notes and notes[-1]["seq"] >= last_applied + 30)

    resumed = await onlookers(agentctl, f"?after_seq={last_applied}")
    live_from = steady.notifications()[-1]["seq"] + 10
    await resumed.until(lambda notes: notes and notes[-1]["seq"] >= live_from)
    await client.request("agent.cancel", {"session_id": session_id})
    for onlooker in (steady, resumed):
        await onlooker.until_action("turn.completed")

    missed_and_after = steady.notifications()[last_applied:]
    assert resumed.notifications() == missed_and_after
    assert _seqs(resumed.notifications()) == list(range(last_applied + 1, steady.notifications()[-1]["seq"] + 1))
    assert resumed.notifications()[-1]["payload"]["stop_reason"] == "cancelled"


@pytest.mark.asyncio
async def test_two_clients_resuming_after_different_seqs_each_get_their_own_part_of_the_same_frames(
    start_agentctl, connect, onlookers
) -> None:
    agentctl = await start_agentctl()
    watching = await onlookers(agentctl)
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    await _play(client, session_id, "simple-message")
    await watching.until_action("turn.completed")
    sent = list(watching.raw)
    assert len(sent) >= 4

    from_start = await onlookers(agentctl, "?after_seq=0")
    from_three = await onlookers(agentctl, "?after_seq=3")
    caught_up = await onlookers(agentctl, f"?after_seq={len(sent)}")
    for onlooker, after in ((from_start, 0), (from_three, 3)):
        await onlooker.until(lambda notes, after=after: len(notes) == len(sent) - after)
        # The very frames sent live: same ids, same timestamps.
        assert onlooker.raw == sent[after:]

    await _play(client, session_id, "simple-message")
    await inbox.next("turn.completed")
    await inbox.next("turn.completed")
    for onlooker in (watching, from_start, from_three, caught_up):
        await onlooker.until_action("turn.completed", count=2 if onlooker is not caught_up else 1)
    assert from_start.raw == watching.raw
    assert from_three.raw == watching.raw[3:]
    assert caught_up.raw == watching.raw[len(sent) :]


@pytest.mark.asyncio
async def test_a_client_asking_for_what_the_bound_dropped_hears_stream_gap_first(
    start_agentctl, connect, onlookers
) -> None:
    agentctl = await start_agentctl(env={**os.environ, "KANDEV_AGENTCTL_REPLAY_BYTES": "1k"})
    watching = await onlookers(agentctl)
    client, _ = await connect(agentctl)
    session_id = await open_session(client)
    await _play(client, session_id, "long-stream")
    await watching.until(lambda notes: len(notes) >= 40)
    await client.request("agent.cancel", {"session_id": session_id})
    await watching.until_action("turn.completed")
    last = watching.notifications()[-1]["seq"]

    late = await onlookers(agentctl, "?after_seq=5")
    await late.until_action("turn.completed")
    gap, *replayed = late.frames
    assert gap["type"] == "notification"
    assert gap["action"] == "stream.gap"
    assert "seq" not in gap
    first_kept = gap["payload"]["first_kept_seq"]
    assert gap["payload"] == {"after_seq": 5, "first_kept_seq": first_kept}
    assert 6 < first_kept <= last
    assert _seqs(replayed) == list(range(first_kept, last + 1))
    assert sum(len(frame.encode()) for frame in late.raw[1:]) <= 1024

    # One that has applied what is still kept resumes without a gap.
    kept = await onlookers(agentctl, f"?after_seq={first_kept - 1}")
    await kept.until_action("turn.completed")
    assert kept.raw == late.raw[1:]


@pytest.mark.asyncio
@pytest.mark.parametrize("after_seq", ["1000", "{last}"])
async def test_a_client_that_has_applied_everything_is_sent_nothing_again(
    start_agentctl, connect, onlookers, after_seq: str
) -> None:
    agentctl = await start_agentctl()
    watching = await onlookers(agentctl)
    client, _ = await connect(agentctl)
    session_id = await open_session(client)
    await _play(client, session_id, "simple-message")
    await watching.until_action("turn.completed")
    last = watching.notifications()[-1]["seq"]

    resumed = await onlookers(agentctl, "?after_seq=" + after_seq.format(last=last))
    answer = await resumed.request("agent.elicitations.list")
    assert resumed.frames == [answer]


@pytest.mark.asyncio
async def test_a_resuming_client_is_not_greeted_again_with_an_agent_exit_it_applied(
    start_agentctl, connect, onlookers, scripted
) -> None:
    steps = [{"expect": "session/prompt"}, {"exit": 4}]
    agentctl = await start_agentctl(scripted.argv(steps), env={**os.environ, "KANDEV_AGENTCTL_EXIT_GRACE": "20s"})
    watching = await onlookers(agentctl)
    client, _ = await connect(agentctl)
    session_id = await open_session(client)
    await _play(client, session_id, "ignored")
    await watching.until_action("turn.completed")
    [exited] = [note for note in watching.notifications() if note["action"] == "agent.exited"]

    # Not resuming: greeted with that very frame, as before.
    fresh = await onlookers(agentctl)
    await fresh.until_action("agent.exited")
    assert fresh.raw[0] == watching.raw[watching.frames.index(exited)]
    # Resuming before it: it comes once, in its place; after it: not at all.
    before = await onlookers(agentctl, f"?after_seq={exited['seq'] - 1}")
    await before.until_action("turn.completed")
    assert [note["action"] for note in before.notifications()] == ["agent.exited", "turn.completed"]
    after = await onlookers(agentctl, f"?after_seq={exited['seq']}")
    await after.until_action("turn.completed")
    assert [note["action"] for note in after.notifications()] == ["turn.completed"]


MALFORMED = ["", "-1", "abc", "1.5", "+1", "%201", "1&after_seq=2", "9" * 5000]


@pytest.mark.asyncio
@pytest.mark.parametrize("query", [f"?after_seq={value}" for value in MALFORMED])
async def test_a_malformed_after_seq_gets_400_before_the_upgrade(start_agentctl, query: str) -> None:
    agentctl = await start_agentctl()
    with pytest.raises(InvalidStatus) as refused:
        await _raw(agentctl, query)
    assert refused.value.response.status_code == 400
    assert b"after_seq" in refused.value.response.body


@pytest.mark.asyncio
async def test_the_token_is_checked_before_after_seq(start_agentctl) -> None:
    agentctl = await start_agentctl()
    with pytest.raises(InvalidStatus) as refused:
        await connect(agentctl.url + "?after_seq=x", additional_headers={"Authorization": "Bearer wrong"})
    assert refused.value.response.status_code == 401


@pytest.mark.asyncio
async def test_other_query_parameters_are_still_ignored(start_agentctl, onlookers) -> None:
    agentctl = await start_agentctl()
    resumed = await onlookers(agentctl, "?client=web&after_seq=0")
    assert (await resumed.request("agent.nope"))["payload"]["code"] == "UNKNOWN_ACTION"


@given(st.text(max_size=12) | st.integers(min_value=0, max_value=10**30).map(str))
def test_after_seq_is_read_only_when_it_is_ascii_digits(value: str) -> None:
    target = "/agent/stream?" + urlencode({"after_seq": value})
    if value.isascii() and value.isdigit():
        assert _after_seq(target) == int(value)
    else:
        with pytest.raises(ValueError, match="after_seq must be one non-negative integer"):
            _after_seq(target)


def test_no_after_seq_means_not_resuming() -> None:
    assert _after_seq("/agent/stream") is None
    assert _after_seq("/agent/stream?other=1") is None
