"""session/request_permission: parked, announced, answered once, cancelled with the turn."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from kandev_web.agentctl.stream_client import NotFound, ValidationFailed
from testing_support.agentctl import message_text, open_session, text_prompt

pytestmark = pytest.mark.asyncio

OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]


async def _ask_permission(client, inbox) -> tuple[str, dict]:
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:permission-flow")})
    return session_id, await inbox.next("permission.requested")


async def test_a_permission_round_trip(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id, requested = await _ask_permission(client, inbox)
    assert uuid.UUID(requested["pending_id"]).version == 4
    assert requested["session_id"] == session_id
    assert requested["tool_call"]["title"] == "Edit settings.py"
    assert requested["options"] == OPTIONS
    assert await client.request("agent.permissions.list") == {"pending": [requested]}

    answer = {"pending_id": requested["pending_id"], "option_id": "allow-always"}
    assert await client.request("agent.permissions.respond", answer) == {"success": True}
    assert await inbox.next("permission.settled") == {
        "pending_id": requested["pending_id"],
        "session_id": session_id,
        "outcome": "selected",
        "option_id": "allow-always",
    }
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    assert message_text(inbox, session_id) == "Permission selected; the option chosen was allow-always."

    with pytest.raises(NotFound):
        await client.request("agent.permissions.respond", answer)
    assert await client.request("agent.permissions.list") == {"pending": []}
    assert len(inbox.all("permission.settled")) == 1


async def test_the_operator_can_refuse_by_cancelling(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id, requested = await _ask_permission(client, inbox)
    await client.request("agent.permissions.respond", {"pending_id": requested["pending_id"], "cancelled": True})
    settled = await inbox.next("permission.settled")
    assert (settled["outcome"], settled["option_id"]) == ("cancelled", None)
    await inbox.next("turn.completed")
    assert message_text(inbox, session_id) == "Permission cancelled; the option chosen was none."


async def test_an_option_the_agent_did_not_offer_is_refused_and_the_request_stays_open(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    _, requested = await _ask_permission(client, inbox)
    with pytest.raises(ValidationFailed) as refused:
        await client.request("agent.permissions.respond", {"pending_id": requested["pending_id"], "option_id": "yolo"})
    assert refused.value.details["problems"] == ["option_id 'yolo' is not one of the options the agent offered"]
    assert await client.request("agent.permissions.list") == {"pending": [requested]}
    await client.request(
        "agent.permissions.respond", {"pending_id": requested["pending_id"], "option_id": "allow-once"}
    )
    assert (await inbox.next("permission.settled"))["option_id"] == "allow-once"


@pytest.mark.parametrize(
    "payload",
    [
        {"option_id": "allow-once"},
        {"pending_id": "p"},
        {"pending_id": "p", "option_id": "allow-once", "cancelled": True},
        {"pending_id": "p", "cancelled": False},
        {"pending_id": "p", "option_id": 3},
    ],
)
async def test_respond_needs_a_pending_id_and_exactly_one_answer(start_agentctl, connect, payload: dict) -> None:
    client, _ = await connect(await start_agentctl())
    await open_session(client)
    with pytest.raises(ValidationFailed):
        await client.request("agent.permissions.respond", payload)


async def test_an_unknown_pending_id_is_not_found(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    await open_session(client)
    with pytest.raises(NotFound):
        await client.request("agent.permissions.respond", {"pending_id": str(uuid.uuid4()), "option_id": "x"})


async def test_of_concurrent_answers_exactly_one_wins(start_agentctl, connect) -> None:
    agentctl = await start_agentctl()
    client, inbox = await connect(agentctl)
    other, _ = await connect(agentctl)
    _, requested = await _ask_permission(client, inbox)
    answers = [
        (client if n % 2 else other).request(
            "agent.permissions.respond",
            {"pending_id": requested["pending_id"], "option_id": OPTIONS[n % 3]["optionId"]},
        )
        for n in range(10)
    ]
    results = await asyncio.gather(*answers, return_exceptions=True)
    assert sum(result == {"success": True} for result in results) == 1
    assert sum(isinstance(result, NotFound) for result in results) == 9
    await inbox.next("turn.completed")
    assert len(inbox.all("permission.settled")) == 1


async def test_cancel_answers_open_permission_requests_as_cancelled(start_agentctl, connect) -> None:
    client, inbox = await connect(await start_agentctl())
    session_id, requested = await _ask_permission(client, inbox)
    await client.request("agent.cancel", {"session_id": session_id})
    settled = await inbox.next("permission.settled")
    assert (settled["pending_id"], settled["outcome"]) == (requested["pending_id"], "cancelled")
    assert (await inbox.next("turn.completed"))["stop_reason"] == "cancelled"
    with pytest.raises(NotFound):
        await client.request(
            "agent.permissions.respond", {"pending_id": requested["pending_id"], "option_id": "allow-once"}
        )


async def test_the_agent_withdrawing_a_request_settles_it_as_cancelled(start_agentctl, connect, scripted) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": "perm-7",
        "method": "session/request_permission",
        "params": {"sessionId": scripted.session_id, "toolCall": {"toolCallId": "t"}, "options": OPTIONS},
    }
    steps = [
        {"expect": "session/prompt"},
        {"send": request},
        {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "unknown"}}},
        {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "perm-7"}}},
        {"expect_response": "perm-7"},
        {"echo": scripted.session_id},
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    requested = await inbox.next("permission.requested")
    settled = await inbox.next("permission.settled")
    assert (settled["pending_id"], settled["outcome"]) == (requested["pending_id"], "cancelled")
    await inbox.next("turn.completed")
    answer = json.loads(message_text(inbox, session_id))
    assert answer == {"jsonrpc": "2.0", "id": "perm-7", "result": {"outcome": {"outcome": "cancelled"}}}


async def test_a_malformed_permission_request_is_refused_to_the_agent(start_agentctl, connect, scripted) -> None:
    bad = {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {"sessionId": "sess-1"}}
    steps = [
        {"expect": "session/prompt"},
        {"send": bad},
        {"expect_response": 0},
        {"echo": scripted.session_id},
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await inbox.next("turn.completed")
    answer = json.loads(message_text(inbox, session_id))
    assert answer["id"] == 0
    assert answer["error"]["code"] == -32602
    assert inbox.all("permission.requested") == []
