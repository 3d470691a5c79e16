"""Kimi Code's AskUserQuestion through a real kandev-agentctl, against a scripted Chat Completions API.

Real Kimi Code 2.1.0 (node 22) runs as agentctl's agent, its model a scripted
fake of OpenAI's Chat Completions API on 127.0.0.1 (``fake_chat_completions.py``)
that answers the operator's prompt with an AskUserQuestion tool call whenever
the tool is offered, and records the tool result the model received.

- Flag on: one ``elicitation.requested`` holding every question (``q0``, ``q1``;
  each titled by its header, prompted by its own question, required, no
  free-text companion); the operator's answer reaches the model as
  ``{"answers": {"<question>": "Red"}}`` (multi-select joined ``"Red, Green"``)
  and the same prompt ends ``end_turn``. Skip (decline) and cancel tell the
  model "User dismissed the question without answering."
- Flag off: Kimi asks the first question through ``session/request_permission``
  instead, and the option the operator picks reaches the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testing_support.agentctl import message_text, text_prompt
from testing_support.kimi import Kimi
from testing_support.kimi.ask_script import COLOUR, DISMISSED, ENVS, FINAL_TEXT, fake_api, prompt
from testing_support.kimi.harness import KimiRun, kimi_session, open_session

MARKER = "KANDEV-KIMI-PROBE"
PROMPT = prompt(MARKER)


def turns_completed(run: KimiRun, session_id: str) -> list[dict[str, Any]]:
    return [turn for turn in run.inbox.all("turn.completed") if turn["session_id"] == session_id]


async def asked(run: KimiRun, session_id: str) -> dict[str, Any]:
    """The prompt, then the elicitation it leads to (failing with what the fake saw if none comes)."""
    await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(PROMPT)})
    action, requested = await run.first_of("elicitation.requested", "permission.requested", "turn.completed")
    assert action == "elicitation.requested", f"Kimi did not ask through a form ({action})\n" + run.explain()
    return requested


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_flag_on_one_form_asks_every_question_and_the_model_reads_the_answers(kimi: Kimi, tmp_path: Path) -> None:
    async with kimi_session(kimi, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=True)
        requested = await asked(run, session_id)

        (ask,) = run.api.of_kind("ask")
        assert "AskUserQuestion" in ask.tool_names
        assert requested["session_id"] == session_id
        # Kimi prefixes the model's call id with its step: "0:call_fake_1".
        assert requested["tool_call_id"].endswith(f":{ask.call_id}"), requested["tool_call_id"]
        assert requested["message"] == f"{COLOUR}\n{ENVS}"
        questions = requested["questions"]
        assert [(q["id"], q["title"], q["prompt"], q["kind"], q["accepts_text"], q["required"]) for q in questions] == [
            ("q0", "Colour", COLOUR, "single", False, True),
            ("q1", "Envs", ENVS, "multi", False, True),
        ]
        assert [[(o["id"], o["description"]) for o in q["options"]] for q in questions] == [
            [("Red", "The warm one."), ("Blue", "The cool one.")],
            [("Red", "The red cluster."), ("Green", "The green cluster."), ("Blue", "The blue cluster.")],
        ]

        # Green clicked before Red: agentctl answers in declaration order, and so does Kimi.
        answered = await run.request(
            "agent.elicitations.respond",
            {
                "pending_id": requested["pending_id"],
                "answers": [
                    {"question_id": "q0", "selected_options": ["Red"]},
                    {"question_id": "q1", "selected_options": ["Green", "Red"]},
                ],
                "rejected": False,
                "reject_reason": "",
            },
        )
        assert answered == {"success": True, "action": "accept", "content": {"q0": "Red", "q1": ["Red", "Green"]}}

        completed = await run.next("turn.completed")
        assert completed["stop_reason"] == "end_turn", run.explain()
        assert run.api.answers() == [{"answers": {COLOUR: "Red", ENVS: "Red, Green"}}], run.explain()
        assert FINAL_TEXT in message_text(run.inbox, session_id)
        assert len(turns_completed(run, session_id)) == 1
        assert len(run.inbox.all("elicitation.requested")) == 1
        assert run.inbox.all("permission.requested") == []
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_a_lone_question_is_prompted_by_the_message(kimi: Kimi, tmp_path: Path) -> None:
    single = [fake_api(MARKER).questions[0]]
    async with kimi_session(kimi, tmp_path, fake_api(MARKER, single)) as run:
        session_id = await open_session(run, elicitation=True)
        requested = await asked(run, session_id)
        assert requested["message"] == COLOUR
        assert [(q["id"], q["title"], q["prompt"]) for q in requested["questions"]] == [("q0", "Colour", COLOUR)]
        await run.request(
            "agent.elicitations.respond",
            {
                "pending_id": requested["pending_id"],
                "answers": [{"question_id": "q0", "selected_options": ["Blue"]}],
                "rejected": False,
                "reject_reason": "",
            },
        )
        assert (await run.next("turn.completed"))["stop_reason"] == "end_turn", run.explain()
        assert run.api.answers() == [{"answers": {COLOUR: "Blue"}}], run.explain()
    assert run.leftovers == []


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_skip_tells_the_model_the_question_was_dismissed(kimi: Kimi, tmp_path: Path) -> None:
    async with kimi_session(kimi, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=True)
        requested = await asked(run, session_id)
        answered = await run.request(
            "agent.elicitations.respond",
            {
                "pending_id": requested["pending_id"],
                "answers": [{"question_id": "q0", "selected_options": ["Red"]}],
                "rejected": True,
                "reject_reason": "",
            },
        )
        assert answered == {"success": True, "action": "decline"}
        settled = await run.next("elicitation.settled")
        assert (settled["outcome"], settled["reason"]) == ("declined", "operator_skipped")
        assert (await run.next("turn.completed"))["stop_reason"] == "end_turn", run.explain()
        assert run.api.answers() == [{"answers": {}, "note": DISMISSED}], run.explain()
    assert run.leftovers == []


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_cancel_withdraws_the_form_and_tells_the_model_the_question_was_dismissed(
    kimi: Kimi, tmp_path: Path
) -> None:
    async with kimi_session(kimi, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=True)
        requested = await asked(run, session_id)
        await run.request("agent.cancel", {"session_id": session_id})
        settled = await run.next("elicitation.settled")
        assert (settled["pending_id"], settled["outcome"], settled["reason"]) == (
            requested["pending_id"],
            "cancelled",
            "turn_cancelled",
        )
        completed = await run.next("turn.completed")
        assert completed["stop_reason"] == "cancelled", run.explain()
        # The cancelled turn's tool result is in the conversation the next prompt carries.
        await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("And now?")})
        await run.next("turn.completed")
        assert run.api.answers() == [{"answers": {}, "note": DISMISSED}], run.explain()
        assert run.inbox.all("permission.requested") == []
    assert run.leftovers == []


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_flag_off_asks_through_a_permission_request_and_the_pick_reaches_the_model(
    kimi: Kimi, tmp_path: Path
) -> None:
    async with kimi_session(kimi, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=False)
        await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(PROMPT)})
        action, permission = await run.first_of("elicitation.requested", "permission.requested", "turn.completed")
        assert action == "permission.requested", run.explain()
        assert permission["tool_call"]["title"] == "AskUserQuestion"
        assert permission["tool_call"]["content"][0]["content"]["text"] == COLOUR
        options = {option["name"]: option for option in permission["options"]}
        assert list(options) == ["Red", "Blue", "Skip"]
        assert options["Skip"]["kind"] == "reject_once"

        blue = options["Blue"]["optionId"]
        await run.request("agent.permissions.respond", {"pending_id": permission["pending_id"], "option_id": blue})
        settled = await run.next("permission.settled")
        assert (settled["outcome"], settled["option_id"]) == ("selected", blue)
        assert (await run.next("turn.completed"))["stop_reason"] == "end_turn", run.explain()
        # Kimi's permission bridge asks one question: the first.
        assert run.api.answers() == [{"answers": {COLOUR: "Blue"}}], run.explain()
        assert run.inbox.all("elicitation.requested") == []
    assert run.leftovers == []
    assert run.proxy.attempts == []
