"""The stream client: error codes as exceptions, and the connection kept up by reconnecting.

Reconnection is tested against a small in-process WebSocket server that
speaks just enough of the contract to drop connections on cue.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from websockets.asyncio.server import ServerConnection, serve

from kandev_web.agentctl import envelope
from kandev_web.agentctl.stream_client import (
    AgentStreamClient,
    AgentStreamNotConnected,
    Backoff,
    Conflict,
    NotFound,
    StreamError,
    StreamEvent,
    ValidationFailed,
    error_from_payload,
)
from testing_support.agentctl import Inbox, open_session, text_prompt
from testing_support.tcp_proxy import TcpProxy

FAST = Backoff(initial=0.01, maximum=0.05)

Handler = Callable[[ServerConnection, int], Awaitable[None]]


@asynccontextmanager
async def fake_agentctl(handler: Handler) -> AsyncIterator[tuple[str, Any]]:
    """Serve ``handler(connection, n)`` for the n-th connection (from 1)."""
    count = 0

    async def numbered(connection: ServerConnection) -> None:
        nonlocal count
        count += 1
        await handler(connection, count)

    async with serve(numbered, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/agent/stream", server


async def answer_everything(connection: ServerConnection) -> None:
    async for data in connection:
        frame = envelope.decode(data)
        await connection.send(envelope.response(frame, {"pending": [], "action": frame.action}))


def test_backoff_doubles_up_to_its_maximum() -> None:
    backoff = Backoff(initial=0.5, maximum=3.0)
    assert [backoff.delay(attempt) for attempt in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("NOT_FOUND", NotFound),
        ("VALIDATION_ERROR", ValidationFailed),
        ("CONFLICT", Conflict),
        ("UNKNOWN_ACTION", StreamError),
        ("BAD_REQUEST", StreamError),
        ("SOMETHING_NEW", StreamError),
    ],
)
def test_error_codes_map_to_exceptions(code: str, kind: type[StreamError]) -> None:
    error = error_from_payload({"code": code, "message": "why", "details": {"problems": ["a"]}})
    assert type(error) is kind
    assert isinstance(error, StreamError)
    assert (error.code, error.message, error.details) == (code, "why", {"problems": ["a"]})


def test_not_connected_is_a_stream_error_with_its_own_code() -> None:
    assert issubclass(AgentStreamNotConnected, StreamError)
    assert AgentStreamNotConnected("down").code == "NOT_CONNECTED"


@pytest.mark.asyncio
async def test_agentctl_errors_arrive_as_distinct_exceptions(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    with pytest.raises(Conflict) as conflict:
        await client.request("agent.session.new", {"cwd": "/tmp"})
    assert conflict.value.code == "CONFLICT"
    with pytest.raises(StreamError) as unknown:
        await client.request("agent.nope")
    assert unknown.value.code == "UNKNOWN_ACTION"
    session_id = await open_session(client)
    with pytest.raises(NotFound):
        await client.request("agent.cancel", {"session_id": session_id + "-other"})
    with pytest.raises(ValidationFailed) as invalid:
        await client.request("agent.session.new", {"cwd": "here"})
    assert invalid.value.details == {"problems": ["cwd must be an absolute path"]}


@pytest.mark.asyncio
async def test_requests_need_a_connection() -> None:
    client = AgentStreamClient("ws://127.0.0.1:9/agent/stream", "t")
    with pytest.raises(AgentStreamNotConnected):
        await client.request("agent.elicitations.list")
    with pytest.raises(AgentStreamNotConnected):
        await client.connect()


@pytest.mark.asyncio
async def test_a_request_times_out_when_nothing_answers() -> None:
    async def silent(connection: ServerConnection, n: int) -> None:
        await connection.wait_closed()

    async with fake_agentctl(silent) as (url, _), AgentStreamClient(url, "t") as client:
        with pytest.raises(TimeoutError):
            await client.request("agent.elicitations.list", timeout=0.05)


@pytest.mark.asyncio
async def test_a_dropped_connection_fails_requests_in_flight_then_reconnects() -> None:
    reconnected = asyncio.Event()
    resynced: list[dict[str, Any]] = []
    inbox = Inbox()

    async def drop_first(connection: ServerConnection, n: int) -> None:
        if n == 1:
            await connection.send(envelope.notification("agent.exited", {"exit_code": 0, "signal": None}))
            await connection.recv()  # the request, which is never answered
            await connection.close()
        else:
            await answer_everything(connection)

    async def resync(client: AgentStreamClient) -> None:
        resynced.append(await client.request("agent.elicitations.list"))
        reconnected.set()

    async with fake_agentctl(drop_first) as (url, _):
        client = AgentStreamClient(url, "t", on_notification=inbox, on_reconnect=resync, backoff=FAST)
        async with client:
            with pytest.raises(AgentStreamNotConnected):
                await client.request("agent.elicitations.list")
            await asyncio.wait_for(reconnected.wait(), 5)
            assert resynced == [{"pending": [], "action": "agent.elicitations.list"}]
            assert client.connected
            answer = await client.request("agent.cancel", {"session_id": "s"})
            assert answer == {"pending": [], "action": "agent.cancel"}
    assert inbox.actions() == ["agent.exited"]


@pytest.mark.asyncio
async def test_reconnecting_gives_up_after_its_attempts() -> None:
    async with fake_agentctl(lambda connection, n: connection.wait_closed()) as (url, server):
        client = AgentStreamClient(url, "t", backoff=Backoff(initial=0.01, maximum=0.01, attempts=3))
        await client.connect()
        server.close()  # closes the connection and stops listening
    await asyncio.wait_for(client.wait_closed(), 5)
    assert not client.connected
    with pytest.raises(AgentStreamNotConnected):
        await client.request("agent.elicitations.list")


@pytest.mark.asyncio
async def test_close_cancels_a_pending_backoff_at_once() -> None:
    async def drop_on_request(connection: ServerConnection, n: int) -> None:
        await connection.recv()
        await connection.close()

    async with fake_agentctl(drop_on_request) as (url, _):
        client = AgentStreamClient(url, "t", backoff=Backoff(initial=60, maximum=60))
        await client.connect()
        with pytest.raises(AgentStreamNotConnected):
            await client.request("agent.elicitations.list")
        # Now waiting a minute before the next attempt; close must not wait for it.
        await asyncio.wait_for(client.close(), 1)
        await asyncio.wait_for(client.wait_closed(), 1)


@pytest.mark.asyncio
async def test_a_failing_notification_callback_does_not_stop_the_client() -> None:
    def explode(action: str, payload: dict[str, Any]) -> None:
        raise RuntimeError("callback bug")

    async def notify_then_answer(connection: ServerConnection, n: int) -> None:
        await connection.send(envelope.notification("session.update", {"session_id": "s", "update": {}}))
        await answer_everything(connection)

    async with (
        fake_agentctl(notify_then_answer) as (url, _),
        AgentStreamClient(url, "t", on_notification=explode) as client,
    ):
        assert (await client.request("agent.elicitations.list"))["pending"] == []


@pytest.mark.asyncio
async def test_frames_that_are_no_envelope_are_ignored() -> None:
    async def junk_then_answer(connection: ServerConnection, n: int) -> None:
        await connection.send("junk")
        await connection.send(json.dumps({"type": "response", "id": "unknown", "action": "x", "payload": {}}))
        await answer_everything(connection)

    async with fake_agentctl(junk_then_answer) as (url, _), AgentStreamClient(url, "t") as client:
        assert (await client.request("agent.elicitations.list"))["pending"] == []


async def announce_then_answer(connection: ServerConnection) -> None:
    """Each request: a notification first, then its answer, as agentctl settles an elicitation before answering."""
    async for data in connection:
        frame = envelope.decode(data)
        await connection.send(envelope.notification("elicitation.settled", {"pending_id": "p1"}))
        await connection.send(envelope.response(frame, {"success": True}))


@pytest.mark.asyncio
@pytest.mark.parametrize("ordered", [True, False])
async def test_an_unordered_request_s_answer_does_not_wait_behind_a_notification_still_being_handled(ordered) -> None:
    release, handled = asyncio.Event(), asyncio.Event()

    async def slow(action, payload):
        await release.wait()
        handled.set()

    async with (
        fake_agentctl(lambda connection, n: announce_then_answer(connection)) as (url, _server),
        AgentStreamClient(url, "t", on_notification=slow, backoff=FAST) as client,
    ):
        request = asyncio.create_task(client.request("agent.elicitations.respond", {}, ordered=ordered))
        done, _ = await asyncio.wait({request}, timeout=0.5)
        # The default keeps the order the frames came in: the answer waits for the notification.
        assert bool(done) is not ordered
        release.set()
        assert await request == {"success": True}
        await asyncio.wait_for(handled.wait(), 2)


@pytest.mark.asyncio
async def test_the_connection_counts_as_down_only_once_every_notification_it_carried_was_handled() -> None:
    handled, release = [], asyncio.Event()

    async def slow(action, payload):
        await release.wait()
        handled.append(action)

    async def announce_and_close(connection: ServerConnection, n: int) -> None:
        if n == 1:
            await connection.send(envelope.notification("agent.exited", {}))
            await connection.close()
        else:
            await asyncio.Event().wait()

    async with (
        fake_agentctl(announce_and_close) as (url, _server),
        AgentStreamClient(url, "t", on_notification=slow, backoff=FAST) as client,
    ):
        down = asyncio.create_task(client.wait_disconnected())
        await asyncio.sleep(0.2)
        assert not down.done()
        release.set()
        await asyncio.wait_for(down, 2)
        assert handled == ["agent.exited"]


# Resuming after a seq ----------------------------------------------------------


class Events:
    """Collects what ``on_event`` is given, and lets a test wait for a count of them."""

    def __init__(self) -> None:
        self.received: list[StreamEvent] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: StreamEvent) -> None:
        self.received.append(event)
        self._arrived.set()

    async def until(self, condition: Callable[[list[StreamEvent]], bool], timeout: float = 15.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition(self.received):
                self._arrived.clear()
                await self._arrived.wait()


def numbered(action: str, seq: int | None) -> str:
    return envelope.notification(action, {"n": seq}, seq=seq)


@pytest.mark.asyncio
async def test_a_resuming_client_asks_for_what_follows_what_it_handled_and_never_handles_one_twice() -> None:
    targets: list[str] = []
    reconnected = asyncio.Event()

    async def drop_after_a_few(connection: ServerConnection, n: int) -> None:
        targets.append(connection.request.path)
        if n == 1:
            for seq in (6, 7, 7, 8):
                await connection.send(numbered("session.update", seq))
            await connection.close()
        else:
            for seq in (8, 9):
                await connection.send(numbered("session.update", seq))
            await connection.send(numbered("stream.gap", None))
            await connection.wait_closed()

    async def on_reconnect(client: AgentStreamClient) -> None:
        reconnected.set()

    events, inbox = Events(), Inbox()
    async with fake_agentctl(drop_after_a_few) as (url, _):
        client = AgentStreamClient(
            url + "?client=test",
            "t",
            on_event=events,
            on_notification=inbox,
            after_seq=5,
            on_reconnect=on_reconnect,
            backoff=FAST,
        )
        assert client.last_seq == 5
        async with client:
            await events.until(lambda received: len(received) == 5)
            await asyncio.wait_for(reconnected.wait(), 5)
            assert client.last_seq == 9
    assert targets == ["/agent/stream?client=test&after_seq=5", "/agent/stream?client=test&after_seq=8"]
    assert [(event.action, event.seq) for event in events.received] == [
        ("session.update", 6),
        ("session.update", 7),
        ("session.update", 8),
        ("session.update", 9),
        ("stream.gap", None),
    ]
    assert [event.payload for event in events.received] == [{"n": 6}, {"n": 7}, {"n": 8}, {"n": 9}, {"n": None}]
    # on_notification hears the very same, in the same order.
    assert inbox.received == [(event.action, event.payload) for event in events.received]


@pytest.mark.asyncio
async def test_a_client_not_resuming_asks_for_nothing_and_hands_on_every_notification() -> None:
    targets: list[str] = []

    async def repeat_one(connection: ServerConnection, n: int) -> None:
        targets.append(connection.request.path)
        for seq in (1, 1, 2):
            await connection.send(numbered("session.update", seq))
        await connection.wait_closed()

    events = Events()
    async with fake_agentctl(repeat_one) as (url, _), AgentStreamClient(url, "t", on_event=events) as client:
        await events.until(lambda received: len(received) == 3)
        assert client.last_seq is None
    assert targets == ["/agent/stream"]
    assert [event.seq for event in events.received] == [1, 1, 2]


@pytest.mark.asyncio
async def test_a_client_whose_connection_is_cut_twice_mid_stream_resumes_with_nothing_lost_or_doubled(
    start_agentctl, connect
) -> None:
    agentctl = await start_agentctl()
    live = Events()
    driver, steady = await connect(agentctl, on_event=live)
    session_id = await open_session(driver)
    proxy = TcpProxy(int(urlsplit(agentctl.url).port or 0))
    reconnections = 0
    reconnected = asyncio.Event()

    async def count(client: AgentStreamClient) -> None:
        nonlocal reconnections
        reconnections += 1
        reconnected.set()

    events = Events()
    resuming = AgentStreamClient(
        f"ws://127.0.0.1:{proxy.port}/agent/stream",
        agentctl.token,
        on_event=events,
        after_seq=0,
        on_reconnect=count,
        backoff=FAST,
    )
    try:
        async with resuming:
            await driver.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:long-stream")})
            for cut_after in (20, 60):
                await events.until(lambda received, cut_after=cut_after: len(received) >= cut_after)
                reconnected.clear()
                proxy.cut()  # every connection through it dropped, and no new one let through
                # agentctl goes on meanwhile: what it sends now can only reach the client as replay.
                sent = len(live.received)
                await live.until(lambda received, sent=sent: len(received) >= sent + 10)
                proxy.restore()
                await asyncio.wait_for(reconnected.wait(), 10)
            await events.until(lambda received: len(received) >= 100)
            await driver.request("agent.cancel", {"session_id": session_id})
            await events.until(lambda received: received[-1].action == "turn.completed")
            await steady.next("turn.completed")
    finally:
        proxy.close()

    assert reconnections == 2
    assert [event.seq for event in events.received] == list(range(1, len(events.received) + 1))
    assert [(event.action, event.payload) for event in events.received] == steady.received
    assert resuming.last_seq == len(events.received)
