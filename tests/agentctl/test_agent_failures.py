"""What an agent can get wrong, and what agentctl does then.

Also what an agent gets when it sends ``elicitation/create`` to an execution
whose ``features.acpElicitation`` is off: a decline at once, including the
Claude bridge's first request, which has id 0. (With the flag on, see
test_elicitation_flow.py.)
"""

from __future__ import annotations

import json

import pytest

from kandev_web.agentctl.stream_client import Conflict, NotFound, StreamError
from testing_support.agentctl import message_text, open_session, text_prompt
from testing_support.scripted_elicitation import COLOUR_FORM

pytestmark = pytest.mark.asyncio


def _answered(request_id: object) -> list[dict]:
    """Script steps: wait for agentctl's answer to our request, then report it as a message."""
    return [{"expect_response": request_id}, {"echo": "sess-1"}]


async def test_elicitation_create_with_id_0_is_declined_when_the_flag_is_off(start_agentctl, connect, scripted) -> None:
    steps = [
        {"expect": "session/prompt"},
        {"send": {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": COLOUR_FORM}},
        *_answered(0),
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client, elicitation=False)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("ask me")})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    assert json.loads(message_text(inbox, session_id)) == {"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}}
    # Only the decline is reported, nothing of the form; nothing is pending to answer.
    assert [action for action in inbox.actions() if action.startswith("elicitation.")] == ["elicitation.declined"]
    assert await inbox.next("elicitation.declined") == {"session_id": session_id, "reason": "elicitation_off"}
    assert await client.request("agent.elicitations.list") == {"pending": []}
    with pytest.raises(NotFound):
        await client.request(
            "agent.elicitations.respond", {"pending_id": "x", "answers": [], "rejected": True, "reject_reason": ""}
        )


@pytest.mark.parametrize("method", ["fs/read_text_file", "terminal/create", "x/made_up", "session/request_permission2"])
async def test_methods_the_client_does_not_offer_get_method_not_found(
    start_agentctl, connect, scripted, method: str
) -> None:
    steps = [
        {"expect": "session/prompt"},
        {"send": {"jsonrpc": "2.0", "id": 0, "method": method, "params": {"sessionId": "sess-1"}}},
        *_answered(0),
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await inbox.next("turn.completed")
    answer = json.loads(message_text(inbox, session_id))
    error = {"code": -32601, "message": "Method not found", "data": {"method": method}}
    assert answer == {"jsonrpc": "2.0", "id": 0, "error": error}


async def test_garbage_and_stderr_noise_are_skipped_and_nothing_else_is_lost(start_agentctl, connect, scripted) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "still here"}}
    steps = [
        {"expect": "session/prompt"},
        {"raw": "this is not json"},
        {"stderr": "Traceback (most recent call last): noise"},
        {"raw": "[1, 2, 3]"},
        {"raw": '{"jsonrpc": "2.0", "id": 99, "result": "for nobody"}'},
        {"raw": '{"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}}'},
        {"raw": '{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}}'},
        {"raw": "{"},
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "sess-1", "update": update}}},
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    assert inbox.all("session.update") == [{"session_id": session_id, "update": update}]


async def test_a_crash_mid_turn_reports_the_exit_then_the_turn_as_failed(start_agentctl, connect, scripted) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "last words"}}
    steps = [
        {"expect": "session/prompt"},
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "sess-1", "update": update}}},
        {"stderr": "fatal: out of cheese"},
        {"exit": 3},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    turn = await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    assert await inbox.next("agent.exited") == {"exit_code": 3, "signal": None, "stderr_tail": "fatal: out of cheese"}
    completed = await inbox.next("turn.completed")
    assert completed["turn_id"] == turn["turn_id"]
    assert completed["stop_reason"] == "error"
    assert completed["error"]["code"] == "agent_exited"
    assert completed["error"]["exit_code"] == 3
    # Nothing the agent said before dying is lost, in docs/agent-stream.md#when-the-agent-exits order.
    assert inbox.actions() == ["session.update", "agent.exited", "turn.completed"]

    with pytest.raises(Conflict, match="exited"):
        await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("again")})
    assert await client.request("agent.elicitations.list") == {"pending": []}


async def test_agent_exited_carries_the_last_lines_of_stderr_only(start_agentctl, connect, scripted) -> None:
    noise = [{"stderr": f"line {i}"} for i in range(100)]
    steps = [{"expect": "session/prompt"}, *noise, {"stderr": "<b>fatal</b>: é" + "x" * 10_000}, {"exit": 3}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    tail = (await inbox.next("agent.exited"))["stderr_tail"]
    # 4 KiB at most: the long last line's end; the 99 lines before it did not fit.
    assert len(tail.encode()) <= 4096
    assert tail == "x" * 4096


async def test_agent_exited_keeps_twenty_lines_of_stderr(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "session/prompt"}, *[{"stderr": f"line {i}"} for i in range(100)], {"exit": 3}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    tail = (await inbox.next("agent.exited"))["stderr_tail"]
    assert tail.splitlines() == [f"line {i}" for i in range(80, 100)]


async def test_an_agent_killed_by_a_signal_is_reported_with_the_signal(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"signal": "SIGKILL"}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    assert await inbox.next("agent.exited") == {"exit_code": None, "signal": "SIGKILL", "stderr_tail": ""}
    assert (await inbox.next("turn.completed"))["error"]["signal"] == "SIGKILL"


async def test_an_early_exit_fails_initialize_and_is_reported(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "initialize"}, {"exit": 1}]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))
    with pytest.raises(StreamError) as refused:
        await client.request("agent.initialize", {"agent_id": "x"})
    assert refused.value.code == "INTERNAL_ERROR"
    assert refused.value.message == "the agent exited before answering initialize"
    assert await inbox.next("agent.exited") == {"exit_code": 1, "signal": None, "stderr_tail": ""}
    assert inbox.all("turn.completed") == []


async def test_an_exit_without_an_open_turn_reports_only_the_exit(start_agentctl, connect, scripted) -> None:
    client, inbox = await connect(await start_agentctl(scripted.argv([{"exit": 0}])))
    await open_session(client)
    assert await inbox.next("agent.exited") == {"exit_code": 0, "signal": None, "stderr_tail": ""}
    assert inbox.actions() == ["agent.exited"]


async def test_a_stderr_flood_does_not_block_the_agent(start_agentctl, connect, scripted) -> None:
    flood = [{"stderr": "x" * 200_000} for _ in range(5)]  # far more than a pipe buffer
    steps = [*flood, {"expect": "initialize"}, {"reply": {"protocolVersion": 1}}]
    client, _ = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))
    answer = await client.request("agent.initialize", {"agent_id": "x"})
    assert answer["protocol_version"] == 1
