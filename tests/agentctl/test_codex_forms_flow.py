"""Codex's forms through a real agentctl, over real sockets (docs/decisions/mapping.md#codex-forms).

A scripted agent sends codex-acp 2.6.0's own `elicitation/create` frames
(`tests/fixtures/codex-acp-2.6.0/`); the answer goes in over the agent stream; the
test reads what the agent received, and what Codex would tell its model of it
(`testing_support.codex_foldback`, checked against the recorded fold-back).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from testing_support.codex_foldback import fold_back, recorded_output
from testing_support.scripted_elicitation import SESSION, answered, ask, elicit, run_script

pytestmark = pytest.mark.asyncio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex-acp-2.6.0"


def codex_request(name: str) -> dict[str, Any]:
    """A captured request, addressed to the scripted agent's session."""
    params = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return {**params, "sessionId": SESSION}


async def test_a_pick_and_a_note_reach_codex_as_both(start_agentctl, connect, scripted) -> None:
    params = codex_request("request_user_input_elicitation.json")
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    assert "delivery" not in requested
    assert requested["tool_call_id"] == "call_fake_1_9d37c48d"
    (question,) = requested["questions"]
    assert (question["id"], question["title"], question["prompt"]) == ("colour", "Colour", "Which colour should I use?")
    assert (question["accepts_text"], question["note"], question["other_option"]) == (True, True, "None of the above")

    answered = await run.respond(
        requested["pending_id"],
        [{"question_id": "colour", "selected_options": ["Red"], "custom_text": "because it is warm"}],
    )
    await run.finished()
    sent = {"action": "accept", "content": {"colour": "Red", "colour_note": "because it is warm"}}
    assert answered == {"success": True, **sent}
    (received,) = run.echoed()
    assert received["result"] == sent
    recorded = json.loads((FIXTURES / "request_user_input_foldback.json").read_text(encoding="utf-8"))
    assert fold_back(params, received["result"]) == recorded_output(recorded)


async def test_an_async_form_is_announced_as_such_and_a_note_alone_is_the_answer(
    start_agentctl, connect, scripted
) -> None:
    params = codex_request("request_user_input_async_elicitation.json")
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    assert requested["delivery"] == "async"
    assert requested["tool_call_id"] is None
    (question,) = requested["questions"]
    assert (question["prompt"], question["title"], question.get("required")) == ("Pick_a_colour", None, None)

    await run.respond(requested["pending_id"], [{"question_id": "question_0", "custom_text": "green"}])
    await run.finished()
    (received,) = run.echoed()
    assert received["result"] == {
        "action": "accept",
        "content": {"question_0": "None of the above", "question_0_note": "green"},
    }
    assert fold_back(params, received["result"]) == {
        "answers": {"question_0": {"answers": ["None of the above", "user_note: green"]}}
    }


async def test_the_turn_does_not_wait_for_an_async_form_which_stays_open_until_answered(
    start_agentctl, connect, scripted
) -> None:
    """agentctl leaves an async form open past its turn: withdrawing it is the agent's call (codex-acp's, then)."""
    params = codex_request("request_user_input_async_elicitation.json")
    steps = [
        {"expect": "session/prompt"},
        {"send": elicit(0, params)},
        {"reply": {"stopReason": "end_turn"}},
        *answered(0),
    ]
    run = await run_script(start_agentctl, connect, scripted, steps)
    requested = await run.requested()
    finished = await run.finished()
    assert finished["stop_reason"] == "end_turn"
    listed = await run.client.request("agent.elicitations.list")
    assert [each["pending_id"] for each in listed["pending"]] == [requested["pending_id"]]
    assert run.events(requested["pending_id"]) == [("elicitation.requested", requested)]

    await run.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Blue"]}])
    await run.settled(requested["pending_id"])
    assert (await run.client.request("agent.elicitations.list"))["pending"] == []
    # Said after its turn: nothing else tells when it arrives.
    await run.inbox.next("session.update", lambda note: note["update"].get("sessionUpdate") == "agent_message_chunk")
    (received,) = run.echoed()
    assert received["result"] == {"action": "accept", "content": {"question_0": "Blue"}}


async def test_a_secret_goes_to_codex_and_nowhere_else(start_agentctl, connect, scripted) -> None:
    params = copy.deepcopy(codex_request("request_user_input_elicitation.json"))
    params["requestedSchema"]["properties"]["colour"]["_meta"]["codex"]["isSecret"] = True
    params["requestedSchema"]["properties"]["colour_note"]["_meta"]["codex"]["isSecret"] = True
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    assert requested["questions"][0]["sensitive"] is True

    answered = await run.respond(
        requested["pending_id"],
        [{"question_id": "colour", "selected_options": ["Red"], "custom_text": "s3cr3t-n0te"}],
    )
    settled = await run.settled(requested["pending_id"])
    await run.finished()
    (received,) = run.echoed()
    assert received["result"]["content"] == {"colour": "Red", "colour_note": "s3cr3t-n0te"}
    assert answered == {"success": True, "action": "accept", "content": {}, "withheld": ["colour"]}
    assert (settled["content"], settled["withheld"]) == ({}, ["colour"])


@pytest.mark.parametrize("rejected", [True, False])
async def test_skip_and_an_empty_answer_tell_codex_nothing(start_agentctl, connect, scripted, rejected: bool) -> None:
    params = codex_request("request_user_input_async_elicitation.json")
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    await run.respond(requested["pending_id"], [], rejected=rejected)
    await run.finished()
    (received,) = run.echoed()
    assert received["result"] == ({"action": "decline"} if rejected else {"action": "accept", "content": {}})
    assert fold_back(params, received["result"]) == {"answers": {}}
