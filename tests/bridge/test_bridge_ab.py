"""The bridge A/B (docs/decisions/bridge-ab.md#the-bridge-ab), against the real Claude ACP bridge under a real agentctl.

Each installed bridge version runs as agentctl's agent, its Claude CLI talking
to a scripted fake Messages API on 127.0.0.1 (``fake_messages_api.py``), which
answers the operator's prompt with an AskUserQuestion tool call whenever the
tool is offered.

- Flag on: the CLI offers AskUserQuestion; the bridge turns the call into
  ``elicitation/create``; agentctl announces ``elicitation.requested``; the
  operator's answer (``agent.elicitations.respond``) reaches the model as the
  tool result; and the same prompt ends with ``end_turn``, one
  ``agent.prompt`` (so one ``session/prompt``) and one ``turn.completed``
  for the whole exchange (AC-13).
- Flag off: the tool is not offered and nothing reaches the operator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testing_support.agentctl import message_text, text_prompt
from testing_support.bridge import Bridge
from testing_support.bridge.ask_script import COLOUR, ENVS, FINAL_TEXT, NO_TOOL_TEXT, fake_api, prompt
from testing_support.bridge.fake_messages_api import tool_result_text
from testing_support.bridge.harness import BridgeRun, bridge_session, open_session

MARKER = "KANDEV-AB-PROBE"
PROMPT = prompt(MARKER)

# The operator clicks prod before dev; agentctl answers in declaration order.
OPERATOR_ANSWERS = [
    {"question_id": "question_0", "selected_options": ["Blue"], "custom_text": ""},
    {"question_id": "question_1", "selected_options": ["prod", "dev"], "custom_text": ""},
]
EXPECTED_CONTENT = {"question_0": "Blue", "question_1": ["dev", "prod"]}


def turns_completed(run: BridgeRun, session_id: str) -> list[dict[str, Any]]:
    return [turn for turn in run.inbox.all("turn.completed") if turn["session_id"] == session_id]


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_flag_on_askuserquestion_round_trip_ends_the_same_prompt(bridge: Bridge, tmp_path: Path) -> None:
    async with bridge_session(bridge, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=True)
        turn = await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(PROMPT)})

        # The CLI offered the tool and the fake called it.
        action, requested = await run.first_of("elicitation.requested", "turn.completed")
        asks = run.api.of_kind("ask")
        assert len(asks) == 1, "the CLI did not offer AskUserQuestion once\n" + run.explain()
        ask = asks[0]
        assert "AskUserQuestion" in ask.tool_names
        assert action == "elicitation.requested", (
            "the turn ended without the operator being asked; the tool result the model got was "
            f"{[tool_result_text(b) for e in run.api.of_kind('after_tool_result') for b in e.tool_results()]}\n"
            + run.explain()
        )

        # The mapped question, for the AskUserQuestion call the fake made.
        assert requested["session_id"] == session_id
        assert requested["tool_call_id"] == ask.tool_use_id
        assert requested["message"] == "Please answer the following questions."
        questions = requested["questions"]
        assert [(q["id"], q["title"], q["prompt"], q["kind"], q["accepts_text"]) for q in questions] == [
            ("question_0", "Colour", COLOUR, "single", True),
            ("question_1", "Envs", ENVS, "multi", True),
        ]
        assert [[(o["id"], o["label"], o["description"]) for o in q["options"]] for q in questions] == [
            [("Red", "Red", "The warm one."), ("Blue", "Blue", "The cool one.")],
            [
                ("dev", "dev", "Developer sandbox."),
                ("staging", "staging", "Pre-production."),
                ("prod", "prod", "Customers."),
            ],
        ]
        assert [p["pending_id"] for p in (await run.request("agent.elicitations.list", {}))["pending"]] == [
            requested["pending_id"]
        ]

        # The operator answers; agentctl writes it to the bridge.
        answered = await run.request(
            "agent.elicitations.respond",
            {
                "pending_id": requested["pending_id"],
                "answers": OPERATOR_ANSWERS,
                "rejected": False,
                "reject_reason": "",
            },
        )
        assert answered == {"success": True, "action": "accept", "content": EXPECTED_CONTENT}
        settled = await run.next("elicitation.settled")
        assert (settled["pending_id"], settled["outcome"], settled["reason"]) == (
            requested["pending_id"],
            "accepted",
            "operator",
        )

        # The same prompt ends, with end_turn, after the model got the answer.
        completed = await run.next("turn.completed")
        assert completed == {"session_id": session_id, "turn_id": turn["turn_id"], "stop_reason": "end_turn"}, (
            run.explain()
        )
        follow_ups = run.api.of_kind("after_tool_result")
        assert len(follow_ups) == 1, run.explain()
        follow_up = follow_ups[0]
        (result_block,) = [b for b in follow_up.tool_results() if b.get("tool_use_id") == ask.tool_use_id]
        result = tool_result_text(result_block)
        assert f'"{COLOUR}"="Blue"' in result, result
        assert f'"{ENVS}"="dev, prod"' in result, result
        assert not result_block.get("is_error"), result
        assert FINAL_TEXT in message_text(run.inbox, session_id)

        # AC-13: one prompt for the whole exchange, one turn, one question, nothing else asked.
        assert len(turns_completed(run, session_id)) == 1
        assert [e.kind for e in run.api.main_requests()] == ["ask", "after_tool_result"], run.explain()
        assert len(run.inbox.all("elicitation.requested")) == 1
        assert run.inbox.all("permission.requested") == []
        assert (await run.request("agent.elicitations.list", {}))["pending"] == []
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_flag_off_offers_no_askuserquestion_and_asks_nobody(bridge: Bridge, tmp_path: Path) -> None:
    async with bridge_session(bridge, tmp_path, fake_api(MARKER)) as run:
        session_id = await open_session(run, elicitation=False)
        turn = await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(PROMPT)})

        completed = await run.next("turn.completed")
        assert completed == {"session_id": session_id, "turn_id": turn["turn_id"], "stop_reason": "end_turn"}, (
            run.explain()
        )
        (main,) = run.api.main_requests()
        assert main.kind == "no_tool", run.explain()
        assert main.tool_names, "the CLI offered no tools at all, so the absence below would prove nothing"
        assert "AskUserQuestion" not in main.tool_names
        assert run.api.issued == {}
        assert NO_TOOL_TEXT in message_text(run.inbox, session_id)

        assert run.inbox.all("elicitation.requested") == []
        assert run.inbox.all("elicitation.settled") == []
        assert run.inbox.all("permission.requested") == []
        assert (await run.request("agent.elicitations.list", {}))["pending"] == []
        assert len(turns_completed(run, session_id)) == 1
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"
