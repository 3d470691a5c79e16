"""Prompts and turns: streamed updates, turn.completed, one open turn per session, cancel."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect as ws_connect

from kandev_web.agentctl import envelope
from kandev_web.agentctl.stream_client import Conflict, ValidationFailed
from testing_support.agentctl import message_text, open_session, text_prompt

pytestmark = pytest.mark.asyncio


async def test_a_prompt_streams_updates_and_completes(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id = await open_session(client)
    turn = await client.request(
        "agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:simple-message")}
    )
    completed = await inbox.next("turn.completed")
    assert completed == {"session_id": session_id, "turn_id": turn["turn_id"], "stop_reason": "end_turn"}
    assert message_text(inbox, session_id) == "This is a simple message from the mock agent."
    assert inbox.actions()[-1] == "turn.completed"


async def test_the_prompt_response_precedes_its_turn_completed(start_agentctl, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"reply": {"stopReason": "end_turn"}}]
    agentctl = await start_agentctl(scripted.argv(steps))
    headers = {"Authorization": f"Bearer {agentctl.token}"}
    async with await ws_connect(agentctl.url, additional_headers=headers) as connection:
        for request_id, action, payload in [
            ("i", "agent.initialize", {"agent_id": "scripted"}),
            ("s", "agent.session.new", {"cwd": "/tmp"}),
            ("p", "agent.prompt", {"session_id": scripted.session_id, "prompt": text_prompt("go")}),
        ]:
            await connection.send(envelope.request(action, payload, id=request_id))
            frames = [json.loads(await asyncio.wait_for(connection.recv(), 5))]
        while frames[-1]["action"] != "turn.completed":
            frames.append(json.loads(await asyncio.wait_for(connection.recv(), 5)))
    assert [(frame["type"], frame["action"]) for frame in frames] == [
        ("response", "agent.prompt"),
        ("notification", "turn.completed"),
    ]
    assert frames[1]["payload"]["turn_id"] == frames[0]["payload"]["turn_id"]


async def test_a_prompt_while_a_turn_is_open_gets_conflict(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:long-stream")})
    with pytest.raises(Conflict, match="turn is already open"):
        await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("again")})
    await client.request("agent.cancel", {"session_id": session_id})
    await inbox.next("turn.completed")
    # Once the turn is over the session takes prompts again.
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:simple-message")})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"


async def test_cancel_ends_a_long_turn_as_cancelled(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id = await open_session(client)
    turn = await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:long-stream")})
    await inbox.next("session.update", lambda note: note["update"]["sessionUpdate"] == "agent_message_chunk")
    assert await client.request("agent.cancel", {"session_id": session_id}) == {"success": True}
    completed = await inbox.next("turn.completed")
    assert completed == {"session_id": session_id, "turn_id": turn["turn_id"], "stop_reason": "cancelled"}
    assert "Line 300" not in message_text(inbox, session_id)


async def test_cancel_sends_session_cancel_to_the_agent(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"expect": "session/cancel"}, {"reply": {"stopReason": "cancelled"}}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await client.request("agent.cancel", {"session_id": session_id})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "cancelled"
    assert scripted.received("session/cancel") == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
    ]


async def test_session_updates_are_forwarded_verbatim(start_agentctl, connect, scripted) -> None:
    updates = [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ünïcödé ✓"}, "_meta": {"k": 1}},
        {"sessionUpdate": "config_option_update", "configOptions": [{"id": "x", "value": None}], "extra": [1.5, False]},
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T", "name": "Bash", "rawInput": {"a": {"b": []}}},
    ]
    steps = [
        {"expect": "session/prompt"},
        *[
            {
                "send": {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "sess-1", "update": update},
                }
            }
            for update in updates
        ],
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await inbox.next("turn.completed")
    assert inbox.all("session.update") == [{"session_id": session_id, "update": update} for update in updates]


async def test_the_prompt_reaches_the_agent_as_sent(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"reply": {"stopReason": "end_turn"}}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    prompt = [{"type": "text", "text": "fix it"}, {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"}]
    await client.request("agent.prompt", {"session_id": session_id, "prompt": prompt})
    await inbox.next("turn.completed")
    (sent,) = scripted.received("session/prompt")
    assert sent["params"] == {"sessionId": session_id, "prompt": prompt}


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            {"reply_error": {"code": -32603, "message": "boom", "data": {"x": 1}}},
            {"code": -32603, "message": "boom", "data": {"x": 1}},
        ),
        ({"reply": {"noStopReason": True}}, {"message": "the agent's session/prompt answer has no stopReason"}),
    ],
)
async def test_a_failed_prompt_completes_the_turn_with_an_error(
    start_agentctl, connect, scripted, reply: dict, error: dict
) -> None:
    client, inbox = await connect(await start_agentctl(scripted.argv([{"expect": "session/prompt"}, reply])))
    session_id = await open_session(client)
    turn = await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    completed = await inbox.next("turn.completed")
    assert completed == {"session_id": session_id, "turn_id": turn["turn_id"], "stop_reason": "error", "error": error}


@pytest.mark.parametrize("prompt", [[], "text", [1], None])
async def test_a_prompt_must_be_a_list_of_content_blocks(start_agentctl, connect, prompt: object) -> None:
    client, _ = await connect(await start_agentctl())
    session_id = await open_session(client)
    with pytest.raises(ValidationFailed):
        await client.request("agent.prompt", {"session_id": session_id, "prompt": prompt})


async def test_an_update_over_one_mebibyte_reaches_a_strict_client_cut_and_marked(start_agentctl, scripted) -> None:
    diff = "+ added line\n" * 200_000  # 2.6 MB of tool output
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [{"type": "text", "text": diff}]}
    steps = [
        {"expect": "session/prompt"},
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "sess-1", "update": update}}},
        {"reply": {"stopReason": "end_turn"}},
    ]
    agentctl = await start_agentctl(scripted.argv(steps))
    headers = {"Authorization": f"Bearer {agentctl.token}"}
    # A client that holds agentctl to the contract: no frame over 1 MiB.
    async with await ws_connect(
        agentctl.url, additional_headers=headers, max_size=envelope.MAX_FRAME_BYTES
    ) as connection:
        for request_id, action, payload in [
            ("i", "agent.initialize", {"agent_id": "scripted"}),
            ("s", "agent.session.new", {"cwd": "/tmp"}),
            ("p", "agent.prompt", {"session_id": scripted.session_id, "prompt": text_prompt("go")}),
        ]:
            await connection.send(envelope.request(action, payload, id=request_id))
            frames = [json.loads(await asyncio.wait_for(connection.recv(), 10))]
        while frames[-1]["action"] != "turn.completed":
            frames.append(json.loads(await asyncio.wait_for(connection.recv(), 10)))
    [sent] = [frame["payload"] for frame in frames if frame["action"] == "session.update"]
    assert sent["truncated"] is True
    text = sent["update"]["content"][0]["text"]
    assert text.endswith(envelope.TRUNCATION_MARK)
    assert diff.startswith(text.removesuffix(envelope.TRUNCATION_MARK))
    assert sent["update"]["toolCallId"] == "t"
    assert len(text) > 800_000  # most of what fits is kept
    assert frames[-1]["payload"]["stop_reason"] == "end_turn"
