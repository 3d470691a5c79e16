"""Every way a pending elicitation ends, each reported once, after its announcement
(docs/decisions/life-of-a-question.md#f7-settlement).

| ending                      | ACP result to the agent | elicitation.settled                   |
|-----------------------------|-------------------------|---------------------------------------|
| operator answer             | accept                  | accepted / operator (with content)    |
| Skip                        | decline                 | declined / operator_skipped           |
| answer timeout (AC-64)      | decline                 | declined / answer_timeout             |
| agent.cancel (AC-15)        | cancel                  | cancelled / turn_cancelled            |
| the agent's $/cancel_request| cancel                  | cancelled / agent_cancelled_request   |
| the agent exits             | (nobody to tell)        | cancelled / agent_exited              |
| agent.shutdown or SIGTERM   | cancel                  | cancelled / agentctl_shutdown         |
"""

from __future__ import annotations

import asyncio
import signal
from datetime import datetime, timedelta

import pytest

from kandev_web.agentctl.elicitations import ElicitationHandler
from kandev_web.agentctl.stream_client import NotFound
from testing_support.agentctl import open_session, text_prompt
from testing_support.scripted_elicitation import (
    COLOUR_FORM,
    SESSION,
    answered,
    answers_read,
    ask,
    elicit,
    in_a_turn,
    run_script,
)

pytestmark = pytest.mark.asyncio

RED = [{"question_id": "question_0", "selected_options": ["Red"]}]


def _cancel_request(request_id: object) -> dict:
    return {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}}


def _assert_settled_once(run, requested: dict, settled: dict) -> None:
    assert run.events(requested["pending_id"]) == [
        ("elicitation.requested", requested),
        ("elicitation.settled", settled),
    ]


def _settlement(pending_id: str, outcome: str, reason: str, **content: object) -> dict:
    settled = {"pending_id": pending_id, "session_id": SESSION, "outcome": outcome, "reason": reason}
    return {**settled, **content}


async def test_F7_operator_answer(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    await run.respond(requested["pending_id"], RED)
    settled = await run.settled()
    assert settled == _settlement(requested["pending_id"], "accepted", "operator", content={"question_0": "Red"})
    await run.finished()
    _assert_settled_once(run, requested, settled)
    assert run.echoed()[0]["result"] == {"action": "accept", "content": {"question_0": "Red"}}


async def test_F7_an_empty_accept_still_reports_its_empty_content(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    await run.respond(requested["pending_id"], [])
    assert (await run.settled())["content"] == {}


async def test_F7_operator_skipped(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    await run.respond(requested["pending_id"], rejected=True)
    settled = await run.settled()
    assert settled == _settlement(requested["pending_id"], "declined", "operator_skipped")
    await run.finished()
    _assert_settled_once(run, requested, settled)
    assert run.echoed()[0]["result"] == {"action": "decline"}


async def test_AC_64_an_unanswered_form_is_declined_at_the_answer_timeout(start_agentctl, connect, scripted) -> None:
    env = {"KANDEV_ELICITATION_ANSWER_TIMEOUT": "1s", "KANDEV_ACP_IDLE_TIMEOUT": "1h"}
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM), env=env)
    requested = await run.requested()
    created = datetime.fromisoformat(requested["created_at"])
    assert datetime.fromisoformat(requested["expires_at"]) - created == timedelta(seconds=1)
    settled = await run.settled(timeout=10)
    assert settled == _settlement(requested["pending_id"], "declined", "answer_timeout")
    # Declined, not cancelled: the agent's tool call goes on and the turn ends normally.
    assert (await run.finished())["stop_reason"] == "end_turn"
    assert run.echoed()[0]["result"] == {"action": "decline"}
    _assert_settled_once(run, requested, settled)
    with pytest.raises(NotFound):
        await run.respond(requested["pending_id"], RED)


async def test_F7_turn_cancelled(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM, stop="cancelled"))
    requested = await run.requested()
    assert await run.client.request("agent.cancel", {"session_id": run.session_id}) == {"success": True}
    settled = await run.settled()
    assert settled == _settlement(requested["pending_id"], "cancelled", "turn_cancelled")
    await run.finished()
    _assert_settled_once(run, requested, settled)
    assert run.echoed()[0]["result"] == {"action": "cancel"}
    # The agent was told about the cancel before its form was answered, as ACP has it.
    frames = scripted.received()
    cancel_at = next(n for n, f in enumerate(frames) if f.get("method") == "session/cancel")
    answer_at = next(n for n, f in enumerate(frames) if "method" not in f and f.get("id") == 0)
    assert cancel_at < answer_at


async def test_cancelling_one_session_leaves_anothers_forms_alone(start_agentctl, connect, scripted) -> None:
    other = {**COLOUR_FORM, "sessionId": "sess-2"}
    steps = [
        {"expect": "session/new"},
        {"reply": {"sessionId": "sess-2"}},
        {"expect": "session/prompt"},
        {"send": elicit(0, COLOUR_FORM)},
        {"send": elicit(1, other)},
        *answered(0),
        {"reply": {"stopReason": "cancelled"}},
        *answered(1),
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps)))
    first = await open_session(client, elicitation=True)
    second = (await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []}))["session_id"]
    assert (first, second) == (SESSION, "sess-2")
    await client.request("agent.prompt", {"session_id": first, "prompt": text_prompt("go")})
    mine = await inbox.next("elicitation.requested")
    theirs = await inbox.next("elicitation.requested")
    assert (mine["session_id"], theirs["session_id"]) == (SESSION, "sess-2")
    await client.request("agent.cancel", {"session_id": first})
    assert (await inbox.next("elicitation.settled"))["pending_id"] == mine["pending_id"]
    assert await client.request("agent.elicitations.list") == {"pending": [theirs]}
    await inbox.next("turn.completed")
    await client.request(
        "agent.elicitations.respond",
        {"pending_id": theirs["pending_id"], "answers": RED, "rejected": False, "reject_reason": ""},
    )
    settled = await inbox.next("elicitation.settled")
    assert (settled["pending_id"], settled["reason"]) == (theirs["pending_id"], "operator")


async def test_F7_agent_cancelled_request(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn(
        {"send": elicit(0, COLOUR_FORM)},
        _cancel_request(99),  # names nothing open
        _cancel_request("0"),  # ids compare by value: "0" is not 0
        _cancel_request(0),
        *answered(0),
    )
    run = await run_script(start_agentctl, connect, scripted, steps)
    requested = await run.requested()
    settled = await run.settled()
    assert settled == _settlement(requested["pending_id"], "cancelled", "agent_cancelled_request")
    assert (await run.finished())["stop_reason"] == "end_turn"
    _assert_settled_once(run, requested, settled)
    assert run.echoed() == [{"jsonrpc": "2.0", "id": 0, "result": {"action": "cancel"}}]
    with pytest.raises(NotFound):
        await run.respond(requested["pending_id"], RED)


async def test_a_cancel_request_for_an_answered_form_changes_nothing(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit(0, COLOUR_FORM)}, *answered(0), _cancel_request(0), {"echo": SESSION})
    run = await run_script(start_agentctl, connect, scripted, steps)
    requested = await run.requested()
    await run.respond(requested["pending_id"], RED)
    await run.finished()
    assert [action for action, _ in run.events()] == ["elicitation.requested", "elicitation.settled"]
    assert (await run.settled())["reason"] == "operator"


async def test_F7_agent_exited(start_agentctl, connect, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"send": elicit(0, COLOUR_FORM)}, {"send": elicit(1, COLOUR_FORM)}]
    steps.append({"exit": 3})
    run = await run_script(start_agentctl, connect, scripted, steps)
    first, second = await run.requested(), await run.requested()
    assert (await run.inbox.next("agent.exited"))["exit_code"] == 3
    assert (await run.finished())["stop_reason"] == "error"
    for requested in (first, second):
        settled = _settlement(requested["pending_id"], "cancelled", "agent_exited")
        _assert_settled_once(run, requested, settled)
    assert await run.client.request("agent.elicitations.list") == {"pending": []}
    with pytest.raises(NotFound):
        await run.respond(first["pending_id"], RED)


@pytest.mark.parametrize("how", ["SIGTERM", "agent.shutdown"])
async def test_F7_agentctl_shutdown(start_agentctl, connect, scripted, how: str) -> None:
    steps = in_a_turn({"send": elicit(0, COLOUR_FORM)}, {"send": elicit(1, COLOUR_FORM)}, *answered(0, 1))
    run = await run_script(start_agentctl, connect, scripted, steps)
    first, second = await run.requested(), await run.requested()
    if how == "SIGTERM":
        run.agentctl.process.send_signal(signal.SIGTERM)
    else:
        assert await run.client.request("agent.shutdown") == {"success": True}
    settled = [await run.settled(first["pending_id"]), await run.settled(second["pending_id"])]
    assert await run.agentctl.process.wait() == 0
    for requested, each in zip((first, second), settled, strict=True):
        assert each == _settlement(requested["pending_id"], "cancelled", "agentctl_shutdown")
        _assert_settled_once(run, requested, each)
    # The agent was still told, before its stdin closed.
    for request_id in (0, 1):
        assert [frame["result"] for frame in answers_read(scripted, request_id)] == [{"action": "cancel"}]


async def test_an_operators_answer_is_written_to_the_agent_before_its_settlement_is_announced() -> None:
    """The agent waits on the answer; every client of the stream still hears the settlement before respond's answer."""
    said = []
    handler = ElicitationHandler(
        lambda action, payload: said.append(action),
        enabled=True,
        answer_timeout=timedelta(minutes=5),
        sessions={SESSION},
    )

    async def agent_asks():
        result = await handler.create(COLOUR_FORM, 0)
        # The JSON-RPC layer writes what create() returns at once, with no await between.
        said.append(f"agent is written {result['action']}")

    asking = asyncio.create_task(agent_asks())
    await asyncio.sleep(0)
    (pending,) = handler.list()
    responded = await handler.respond({"pending_id": pending["pending_id"], "answers": RED})
    said.append("respond answers")
    await asking
    assert responded["success"]
    assert said == ["elicitation.requested", "agent is written accept", "elicitation.settled", "respond answers"]
