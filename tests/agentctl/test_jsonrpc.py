"""The JSON-RPC layer over a real socket pair: ids by value, unknown methods, bad lines, EOF."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from kandev_web.agentctl.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonRpcError,
    JsonRpcPeer,
    PeerClosed,
)

pytestmark = pytest.mark.asyncio


@dataclass
class Other:
    """The far end of the pair, spoken to line by line."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def send(self, message: Any) -> None:
        text = message if isinstance(message, str) else json.dumps(message)
        self.writer.write(text.encode() + b"\n")
        await self.writer.drain()

    async def receive(self) -> dict[str, Any]:
        async with asyncio.timeout(5):
            return json.loads(await self.reader.readline())


@dataclass
class Pair:
    peer: JsonRpcPeer
    other: Other
    running: asyncio.Task[None]
    notifications: list[Any]
    handler_cancelled: asyncio.Event


async def _echo(params: Any, request_id: Any) -> Any:
    return {"params": params, "request_id": request_id}


async def _refuse(params: Any, request_id: Any) -> Any:
    raise JsonRpcError(-32002, "Resource not found", {"uri": "x"})


async def _crash(params: Any, request_id: Any) -> Any:
    raise RuntimeError("secret prompt text")


@pytest_asyncio.fixture
async def pair() -> AsyncIterator[Pair]:
    left, right = socket.socketpair()
    peer_reader, peer_writer = await asyncio.open_connection(sock=left)
    other_reader, other_writer = await asyncio.open_connection(sock=right)
    notifications: list[Any] = []
    handler_cancelled = asyncio.Event()

    async def never(params: Any, request_id: Any) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            notifications.append(f"handler of {request_id} cancelled")
            handler_cancelled.set()
            raise

    peer = JsonRpcPeer(
        peer_reader,
        peer_writer,
        requests={"echo": _echo, "refuse": _refuse, "crash": _crash, "never": never},
        notifications={"note": notifications.append},
    )
    running = asyncio.create_task(peer.run())
    yield Pair(peer, Other(other_reader, other_writer), running, notifications, handler_cancelled)
    other_writer.close()
    peer_writer.close()
    await asyncio.wait_for(running, 5)


async def test_requests_from_the_other_side_are_answered_with_their_own_id(pair: Pair) -> None:
    for request_id in (0, "0", 17, "abc"):
        await pair.other.send({"jsonrpc": "2.0", "id": request_id, "method": "echo", "params": {"a": 1}})
        answer = await pair.other.receive()
        assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {"params": {"a": 1}, "request_id": request_id}}


async def test_an_unknown_method_gets_method_not_found(pair: Pair) -> None:
    await pair.other.send({"jsonrpc": "2.0", "id": 0, "method": "fs/read_text_file", "params": {}})
    answer = await pair.other.receive()
    assert answer["id"] == 0
    assert answer["error"]["code"] == METHOD_NOT_FOUND
    assert answer["error"]["data"] == {"method": "fs/read_text_file"}


async def test_handler_errors_become_error_answers_without_leaking_the_exception(pair: Pair) -> None:
    await pair.other.send({"jsonrpc": "2.0", "id": 1, "method": "refuse"})
    assert (await pair.other.receive())["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "x"},
    }
    await pair.other.send({"jsonrpc": "2.0", "id": 2, "method": "crash"})
    assert (await pair.other.receive())["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}


async def test_a_request_with_a_bad_method_or_id_is_an_invalid_request(pair: Pair) -> None:
    await pair.other.send({"jsonrpc": "2.0", "id": 3, "method": 42})
    assert (await pair.other.receive())["error"]["code"] == INVALID_REQUEST
    await pair.other.send({"jsonrpc": "2.0", "id": [1], "method": "echo"})
    answer = await pair.other.receive()
    assert answer["id"] is None
    assert answer["error"]["code"] == INVALID_REQUEST


async def test_our_requests_are_matched_by_id_value(pair: Pair) -> None:
    first = asyncio.create_task(pair.peer.request("ping", {"n": 0}))
    second = asyncio.create_task(pair.peer.request("ping", {"n": 1}))
    sent = [await pair.other.receive(), await pair.other.receive()]
    assert [frame["id"] for frame in sent] == [0, 1]
    # A string "0" is not the number 0; the answers may come in any order.
    await pair.other.send({"jsonrpc": "2.0", "id": "0", "result": "wrong"})
    await pair.other.send({"jsonrpc": "2.0", "id": 1, "result": "one"})
    await pair.other.send({"jsonrpc": "2.0", "id": 0, "result": "zero"})
    assert await second == "one"
    assert await first == "zero"


async def test_an_error_answer_raises(pair: Pair) -> None:
    asking = asyncio.create_task(pair.peer.request("ping", None))
    request = await pair.other.receive()
    await pair.other.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32600, "message": "no"}})
    with pytest.raises(JsonRpcError) as raised:
        await asking
    assert (raised.value.code, raised.value.message) == (-32600, "no")


async def test_lines_that_are_not_messages_are_skipped(pair: Pair) -> None:
    for junk in ("this is not json", "[1, 2, 3]", "42", '{"jsonrpc": "2.0"}', "", "{"):
        await pair.other.send(junk)
    await pair.other.send({"jsonrpc": "2.0", "method": "note", "params": "after the junk"})
    await pair.other.send({"jsonrpc": "2.0", "id": 9, "method": "echo"})
    assert (await pair.other.receive())["id"] == 9
    assert pair.notifications == ["after the junk"]


async def test_notifications_run_in_order_and_unknown_ones_are_ignored(pair: Pair) -> None:
    await pair.other.send({"jsonrpc": "2.0", "method": "$/unknown", "params": {}})
    for n in range(20):
        await pair.other.send({"jsonrpc": "2.0", "method": "note", "params": n})
    await pair.other.send({"jsonrpc": "2.0", "id": 1, "method": "echo"})
    await pair.other.receive()
    assert pair.notifications == list(range(20))


async def test_end_of_stream_fails_waiting_requests_and_cancels_handlers(pair: Pair) -> None:
    asking = asyncio.create_task(pair.peer.request("ping", None))
    await pair.other.send({"jsonrpc": "2.0", "id": 5, "method": "never"})
    await pair.other.receive()  # our ping
    pair.other.writer.close()
    await asyncio.wait_for(pair.running, 5)
    with pytest.raises(PeerClosed):
        await asking
    await asyncio.wait_for(pair.handler_cancelled.wait(), 5)
    assert pair.notifications == ["handler of 5 cancelled"]
    assert pair.peer.closed
    with pytest.raises(PeerClosed):
        pair.peer.send_request("ping", None)
    with pytest.raises(PeerClosed):
        pair.peer.notify("note", None)
