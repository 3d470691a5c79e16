"""The WebSocket endpoint: authentication before the upgrade, refused frames, several clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from kandev_web.agentctl import envelope
from kandev_web.agentctl.stream_client import AgentStreamClient, StreamError
from testing_support.agentctl import open_session, text_prompt

pytestmark = pytest.mark.asyncio


async def _raw(agentctl: Any, **options: Any) -> ClientConnection:
    return await connect(agentctl.url, additional_headers={"Authorization": f"Bearer {agentctl.token}"}, **options)


async def _answer(connection: ClientConnection) -> dict[str, Any]:
    """The next frame that is not a notification."""
    async with asyncio.timeout(5):
        while (frame := json.loads(await connection.recv()))["type"] == "notification":
            pass
    return frame


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic dXNlcjpwYXNz"}])
async def test_a_missing_or_wrong_token_gets_401_and_no_upgrade(start_agentctl, headers: dict[str, str]) -> None:
    agentctl = await start_agentctl()
    with pytest.raises(InvalidStatus) as refused:
        await connect(agentctl.url, additional_headers=headers)
    assert refused.value.response.status_code == 401
    assert refused.value.response.headers["WWW-Authenticate"] == "Bearer"


async def test_a_plain_http_request_without_a_token_gets_401(start_agentctl) -> None:
    agentctl = await start_agentctl()
    port = int(agentctl.url.split(":")[2].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /agent/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
    status_line = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    assert status_line.startswith(b"HTTP/1.1 401")


async def test_other_paths_are_not_found(start_agentctl) -> None:
    agentctl = await start_agentctl()
    with pytest.raises(InvalidStatus) as refused:
        await connect(
            agentctl.url.replace("/agent/stream", "/other"),
            additional_headers={"Authorization": f"Bearer {agentctl.token}"},
        )
    assert refused.value.response.status_code == 404


async def test_the_stream_client_reports_a_refused_token(start_agentctl) -> None:
    agentctl = await start_agentctl()
    client = AgentStreamClient(agentctl.url, "wrong")
    with pytest.raises(StreamError) as refused:
        await client.connect()
    assert refused.value.code == "UNAUTHORIZED"


@pytest.mark.parametrize(
    ("frame", "echoed_id", "echoed_action"),
    [
        ("not json", None, None),
        ("[1, 2, 3]", None, None),
        ('{"id": "r1", "type": "request", "action": "agent.cancel", "payload": 5}', "r1", "agent.cancel"),
        ('{"id": "r2", "action": "agent.cancel", "payload": {}}', "r2", "agent.cancel"),
        ('{"type": "request", "action": "agent.cancel", "payload": {}}', None, "agent.cancel"),
        ('{"id": "r3", "type": "notification", "action": "session.update", "payload": {}}', "r3", "session.update"),
        (b"binary frame", None, None),
    ],
)
async def test_a_frame_that_is_no_request_gets_bad_request_and_the_connection_stays_open(
    start_agentctl, frame: str | bytes, echoed_id: str | None, echoed_action: str | None
) -> None:
    agentctl = await start_agentctl()
    async with await _raw(agentctl) as connection:
        await connection.send(frame)
        error = await _answer(connection)
        assert error["type"] == "error"
        assert error["id"] == echoed_id
        assert error["action"] == echoed_action
        assert error["payload"]["code"] == "BAD_REQUEST"
        assert error["payload"]["message"]
        assert error["payload"]["details"] == {}

        await connection.send(envelope.request("agent.elicitations.list", {}, id="after"))
        assert (await _answer(connection))["id"] == "after"


async def test_an_unknown_action_gets_unknown_action(start_agentctl) -> None:
    agentctl = await start_agentctl()
    async with await _raw(agentctl) as connection:
        await connection.send(envelope.request("agent.frobnicate", {}, id="u1"))
        error = await _answer(connection)
    assert (error["type"], error["id"], error["action"]) == ("error", "u1", "agent.frobnicate")
    assert error["payload"]["code"] == "UNKNOWN_ACTION"


async def test_a_frame_over_one_mebibyte_is_refused_by_id_and_the_connection_survives(start_agentctl) -> None:
    agentctl = await start_agentctl()
    padding = "x" * envelope.MAX_FRAME_BYTES
    async with await _raw(agentctl, max_size=None) as connection:
        await connection.send(envelope.request("agent.prompt", {"padding": padding}, id="big"))
        error = await _answer(connection)
        assert (error["id"], error["action"], error["payload"]["code"]) == ("big", "agent.prompt", "BAD_REQUEST")
        assert "1048576" in error["payload"]["message"]
        await connection.send(envelope.request("agent.elicitations.list", {}, id="after"))
        assert (await _answer(connection))["id"] == "after"


async def test_a_huge_frame_closes_only_that_connection(start_agentctl) -> None:
    agentctl = await start_agentctl()
    async with await _raw(agentctl, max_size=None) as connection:
        await connection.send("x" * (8 * envelope.MAX_FRAME_BYTES))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(connection.recv(), 5)
        assert closed.value.rcvd.code == 1009  # message too big
    async with await _raw(agentctl) as connection:
        await connection.send(envelope.request("agent.elicitations.list", {}, id="next"))
        assert (await _answer(connection))["id"] == "next"


async def test_every_client_gets_every_notification_and_only_its_own_responses(start_agentctl, connect) -> None:
    agentctl = await start_agentctl()
    first, first_inbox = await connect(agentctl)
    _, second_inbox = await connect(agentctl)
    async with await _raw(agentctl) as onlooker:
        session_id = await open_session(first)
        turn = await first.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
        for inbox in (first_inbox, second_inbox):
            completed = await inbox.next("turn.completed")
            assert completed["turn_id"] == turn["turn_id"]
        assert first_inbox.received == second_inbox.received
        assert len(first_inbox.all("session.update")) >= 3

        # The onlooker sent nothing, so it must have received notifications only.
        frames = []
        while not frames or frames[-1]["action"] != "turn.completed":
            frames.append(json.loads(await asyncio.wait_for(onlooker.recv(), 5)))
        assert {frame["type"] for frame in frames} == {"notification"}
        assert [frame["action"] for frame in frames] == first_inbox.actions()


async def test_a_client_joining_later_receives_what_follows(start_agentctl, connect) -> None:
    agentctl = await start_agentctl()
    first, _ = await connect(agentctl)
    session_id = await open_session(first)
    late, late_inbox = await connect(agentctl)
    await late.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:simple-message")})
    assert (await late_inbox.next("turn.completed"))["stop_reason"] == "end_turn"


async def test_the_stream_client_awaits_async_notification_callbacks(start_agentctl) -> None:
    agentctl = await start_agentctl()
    received: list[str] = []
    done = asyncio.Event()

    async def on_notification(action: str, payload: dict[str, Any]) -> None:
        received.append(action)
        if action == "turn.completed":
            done.set()

    async with agentctl.client(on_notification=on_notification) as client:
        session_id = await open_session(client)
        await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:simple-message")})
        await asyncio.wait_for(done.wait(), 5)
    assert received[-1] == "turn.completed"
    assert set(received) == {"session.update", "turn.completed"}
