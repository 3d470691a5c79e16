"""Every unreadable frame gets ``BAD_REQUEST`` and the connection stays open.

Over a real agentctl process (``docs/agent-stream.md#envelope``): frames that
nest too deep for Python's parser, hold lone surrogates, are not UTF-8, are
not objects, or carry numbers JSON cannot mean. Plus the property behind it:
``decode`` raises nothing but ``BadFrame``, whatever the text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect

from kandev_web.agentctl import envelope
from kandev_web.agentctl.envelope import BadFrame

LIST = '"type": "request", "action": "agent.elicitations.list"'


def _request(id_: str, body: str) -> str:
    return f'{{"id": "{id_}", {body}}}'


#: (frame as sent, the id and action the error should echo)
UNREADABLE: dict[str, tuple[str | bytes, str | None, str | None]] = {
    # RecursionError inside json.loads: nothing can be echoed.
    "nested past the parser's stack": ('{"id": "deep", "payload": ' + "[" * 200_000 + "]" * 200_000 + "}", None, None),
    "nested past the depth limit": (
        _request("deep2", LIST + ', "payload": {"a": ' + "[" * 500 + "]" * 500 + "}"),
        "deep2",
        "agent.elicitations.list",
    ),
    "a lone surrogate in the action": (
        '{"id": "s1", "type": "request", "action": "agent.\\ud800", "payload": {}}',
        "s1",
        None,
    ),
    "a lone surrogate in the id": (
        '{"id": "s\\udfff", "type": "request", "action": "agent.cancel", "payload": {}}',
        None,
        "agent.cancel",
    ),
    "a lone surrogate in a payload key": (
        _request("s3", '"type": "request", "action": "agent.cancel", "payload": {"\\ud83d": 1}'),
        "s3",
        "agent.cancel",
    ),
    "a lone surrogate in a payload value": (
        _request("s4", '"type": "request", "action": "agent.prompt", "payload": {"prompt": [{"text": "\\ude00"}]}'),
        "s4",
        "agent.prompt",
    ),
    "a lone surrogate in the type": (
        '{"id": "s5", "type": "re\\ud800", "action": "agent.cancel"}',
        "s5",
        "agent.cancel",
    ),
    "invalid UTF-8 in a text frame": (b'{"id": "u1", "action": "\xff\xfe"}', None, None),
    "a JSON number": ("42", None, None),
    "a JSON string": ('"agent.cancel"', None, None),
    "JSON null": ("null", None, None),
    "a 5000-digit integer": (_request("n1", LIST + ', "payload": {"n": ' + "9" * 5000 + "}"), None, None),
    "a number too large for a float": (_request("n2", LIST + ', "payload": {"n": 1e999}'), None, None),
    "NaN": (_request("n3", LIST + ', "payload": {"n": NaN}'), None, None),
    "Infinity": (_request("n4", LIST + ', "payload": {"n": -Infinity}'), None, None),
}


async def _raw(agentctl: Any) -> ClientConnection:
    return await connect(agentctl.url, additional_headers={"Authorization": f"Bearer {agentctl.token}"}, max_size=None)


async def _answer(connection: ClientConnection) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while (frame := json.loads(await connection.recv()))["type"] == "notification":
            pass
    return frame


@pytest.mark.asyncio
@pytest.mark.parametrize("case", list(UNREADABLE))
async def test_an_unreadable_frame_gets_bad_request_and_the_connection_stays_open(start_agentctl, case: str) -> None:
    frame, echoed_id, echoed_action = UNREADABLE[case]
    agentctl = await start_agentctl()
    async with await _raw(agentctl) as connection:
        # Bytes go out as a text frame: invalid UTF-8 where text is promised.
        await connection.send(frame, text=True)
        error = await _answer(connection)
        assert error["type"] == "error"
        assert error["payload"]["code"] == "BAD_REQUEST"
        assert error["payload"]["message"]
        assert (error["id"], error["action"]) == (echoed_id, echoed_action)

        # The same connection still serves requests.
        await connection.send(envelope.request("agent.shutdown", {}, id="after"))
        assert (await _answer(connection))["id"] == "after"


@pytest.mark.asyncio
async def test_a_binary_frame_is_still_refused_as_binary(start_agentctl) -> None:
    agentctl = await start_agentctl()
    async with await _raw(agentctl) as connection:
        await connection.send(b'{"id": "b1", "type": "request", "action": "agent.elicitations.list"}')
        error = await _answer(connection)
    assert error["payload"]["code"] == "BAD_REQUEST"
    assert "binary" in error["payload"]["message"]


@pytest.mark.asyncio
async def test_refused_frames_in_a_burst_are_each_answered_in_turn(start_agentctl) -> None:
    """Many at once on one connection: one answer each, nothing lost after them."""
    agentctl = await start_agentctl()
    async with await _raw(agentctl) as connection:
        for frame, _, _ in UNREADABLE.values():
            await connection.send(frame, text=True)
        answers = [await _answer(connection) for _ in UNREADABLE]
        assert {answer["payload"]["code"] for answer in answers} == {"BAD_REQUEST"}
        await connection.send(envelope.request("agent.shutdown", {}, id="after"))
        assert (await _answer(connection))["id"] == "after"


# The property: whatever the text, decode answers a Frame or a BadFrame.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@given(st.text())
def test_any_text_is_read_or_refused(text: str) -> None:
    with contextlib.suppress(BadFrame):
        envelope.decode_request(text)


@given(
    id_=st.one_of(st.text(), st.integers(), st.none()),
    action=st.one_of(st.text(), st.none()),
    payload=json_values,
)
def test_any_envelope_shaped_json_is_read_or_refused_and_the_refusal_can_be_sent(id_, action, payload) -> None:
    frame = json.dumps({"id": id_, "type": "request", "action": action, "payload": payload})
    try:
        envelope.decode_request(frame)
    except BadFrame as bad:
        refusal = envelope.error(envelope.ErrorCode.BAD_REQUEST, bad.message, id=bad.id, action=bad.action)
        refusal.encode("utf-8")  # what the socket does with it: never fails


@given(st.integers(min_value=1, max_value=3000))
def test_nesting_of_any_depth_is_read_or_refused(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    frame = f'{{"id": "d", "type": "request", "action": "a", "payload": {{"x": {nested}}}}}'
    try:
        decoded = envelope.decode_request(frame)
    except BadFrame:
        assert depth > envelope.MAX_DEPTH - 2
    else:
        assert decoded.payload["x"] is not None
