"""The mock agent's elicitation scenarios, played through a real agentctl with form elicitation on.

Each scenario ends by saying the ACP answer it received (``Answer: <JSON>``), so
these tests, the web app's and the e2e specs can all assert exactly what the
agent got.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kandev_web.agentctl.launcher import launch
from kandev_web.agentctl.stream_client import AgentStreamClient, NotFound
from kandev_web.mock_agent.engine import SCENARIOS_DIR
from testing_support.agentctl import Inbox, open_session
from testing_support.agents import MOCK_AGENT

pytestmark = pytest.mark.asyncio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-agent-acp" / "0.65.0"

#: Forms the mock agent ships, and the captured bridge frame each one copies.
COPIED_FRAMES = {
    "single-question-0.65.0.json": "wire_single_question_elicitation_0.65.0.json",
    "two-questions-0.65.0.json": "wire_two_questions_elicitation_0.65.0.json",
    "refusal-fallback-0.65.0.json": "wire_refusal_fallback_elicitation_0.65.0.json",
    "mcp-apikey-0.65.0.json": "wire_mcp_apiKey_elicitation_0.65.0.json",
}


class Session:
    """One mock-agent session behind agentctl."""

    def __init__(self, client: AgentStreamClient, inbox: Inbox, session_id: str) -> None:
        self.client = client
        self.inbox = inbox
        self.session_id = session_id

    async def play(self, scenario: str) -> str:
        payload = {"session_id": self.session_id, "prompt": [{"type": "text", "text": f"/e2e:{scenario}"}]}
        return (await self.client.request("agent.prompt", payload))["turn_id"]

    async def requested(self) -> dict[str, Any]:
        return await self.inbox.next("elicitation.requested")

    async def respond(self, pending_id: str, answers: list[dict[str, Any]], *, rejected: bool = False) -> dict:
        payload = {"pending_id": pending_id, "answers": answers, "rejected": rejected, "reject_reason": ""}
        return await self.client.request("agent.elicitations.respond", payload)

    async def said(self) -> str:
        """Once the turn has ended with end_turn: everything the agent said in it."""
        assert (await self.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
        return "".join(
            note["update"]["content"]["text"]
            for note in self.inbox.all("session.update")
            if note["update"]["sessionUpdate"] == "agent_message_chunk"
        )

    async def answer_received(self) -> Any:
        text = await self.said()
        assert text.startswith("Answer: ")
        return json.loads(text.removeprefix("Answer: "))


Open = Callable[..., Awaitable[Session]]


@pytest_asyncio.fixture
async def mock() -> AsyncIterator[Open]:
    """Start agentctl for the mock agent and open a session, with the flag on unless told otherwise."""
    started: list[Any] = []

    async def open_mock(*, elicitation: bool = True, env: dict[str, str] | None = None) -> Session:
        agentctl = await launch(MOCK_AGENT, env=None if env is None else {**os.environ, **env})
        inbox = Inbox()
        client = agentctl.client(on_notification=inbox)
        started.append((agentctl, client))
        await client.connect()
        return Session(client, inbox, await open_session(client, agent_id="claude-acp", elicitation=elicitation))

    yield open_mock
    for agentctl, client in started:
        await client.close()
        await agentctl.stop()


async def test_the_shipped_forms_are_the_captured_bridge_frames() -> None:
    for shipped, captured in COPIED_FRAMES.items():
        assert json.loads((SCENARIOS_DIR / "forms" / shipped).read_text()) == json.loads(
            (FIXTURES / captured).read_text()
        )


async def test_elicit_single(mock) -> None:
    session = await mock()
    await session.play("elicit-single")
    requested = await session.requested()
    assert (requested["session_id"], requested["tool_call_id"]) == (session.session_id, "toolu_fake_aa901482735f47b8")
    (question,) = requested["questions"]
    assert (question["id"], question["kind"], question["accepts_text"]) == ("question_0", "single", True)
    assert [option["id"] for option in question["options"]] == ["Red", "Blue"]
    await session.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    assert await session.answer_received() == {"action": "accept", "content": {"question_0": "Red"}}


async def test_elicit_single_with_custom_text(mock) -> None:
    session = await mock()
    await session.play("elicit-single")
    requested = await session.requested()
    answers = [{"question_id": "question_0", "selected_options": ["Blue"], "custom_text": "  Green "}]
    await session.respond(requested["pending_id"], answers)
    assert await session.answer_received() == {"action": "accept", "content": {"question_0_custom": "Green"}}


async def test_elicit_two(mock) -> None:
    session = await mock()
    await session.play("elicit-two")
    requested = await session.requested()
    assert [(q["id"], q["kind"]) for q in requested["questions"]] == [("question_0", "single"), ("question_1", "multi")]
    answers = [
        {"question_id": "question_0", "selected_options": ["Postgres"]},
        {"question_id": "question_1", "selected_options": ["prod", "dev"]},
    ]
    await session.respond(requested["pending_id"], answers)
    expected = {"action": "accept", "content": {"question_0": "Postgres", "question_1": ["dev", "prod"]}}
    assert await session.answer_received() == expected


async def test_elicit_refusal(mock) -> None:
    session = await mock()
    await session.play("elicit-refusal")
    requested = await session.requested()
    assert requested["tool_call_id"] is None
    (question,) = requested["questions"]
    assert [option["id"] for option in question["options"]] == ["retry_fallback", "cancelled"]
    await session.respond(requested["pending_id"], [{"question_id": "choice", "selected_options": ["retry_fallback"]}])
    assert await session.answer_received() == {"action": "accept", "content": {"choice": "retry_fallback"}}


async def test_elicit_mcp_apikey(mock) -> None:
    session = await mock()
    await session.play("elicit-mcp-apikey")
    requested = await session.requested()
    assert requested["tool_call_id"] is None
    (question,) = requested["questions"]
    assert (question["id"], question["kind"], question["sensitive"]) == ("apiKey", "text", True)
    assert question["options"] == []
    await session.respond(requested["pending_id"], [{"question_id": "apiKey", "custom_text": "T"}])
    assert await session.answer_received() == {"action": "accept", "content": {"apiKey": "T"}}


async def test_elicit_eleven(mock) -> None:
    form = json.loads((SCENARIOS_DIR / "forms" / "eleven-questions.json").read_text())
    declared = list(form["requestedSchema"]["properties"])
    in_order = [f"question_{n}" for n in range(11)]
    assert sorted(declared) == sorted(in_order)
    assert declared != in_order

    session = await mock()
    await session.play("elicit-eleven")
    requested = await session.requested()
    assert [q["id"] for q in requested["questions"]] == in_order
    answers = [{"question_id": key, "selected_options": [f"yes-{key[9:]}"]} for key in reversed(declared)]
    await session.respond(requested["pending_id"], answers)
    received = await session.answer_received()
    assert list(received["content"].items()) == [(key, f"yes-{key[9:]}") for key in in_order]


async def test_elicit_twice(mock) -> None:
    session = await mock()
    await session.play("elicit-twice")
    first, second = await session.requested(), await session.requested()
    assert first["pending_id"] != second["pending_id"]
    assert first["questions"] == second["questions"]
    await session.respond(first["pending_id"], [{"question_id": "question_0", "selected_options": ["Blue"]}])
    assert await session.client.request("agent.elicitations.list") == {"pending": [second]}
    await session.respond(second["pending_id"], [], rejected=True)
    assert await session.said() == (
        'First answer: {"action": "accept", "content": {"question_0": "Blue"}}\nSecond answer: {"action": "decline"}'
    )


async def test_elicit_then_cancel_request(mock) -> None:
    session = await mock()
    await session.play("elicit-then-cancel-request")
    requested = await session.requested()
    settled = await session.inbox.next("elicitation.settled", timeout=10)
    assert (settled["pending_id"], settled["outcome"], settled["reason"]) == (
        requested["pending_id"],
        "cancelled",
        "agent_cancelled_request",
    )
    assert await session.answer_received() == {"action": "cancel"}
    with pytest.raises(NotFound):
        await session.respond(requested["pending_id"], [])


async def test_an_elicit_scenario_answered_before_the_agent_withdraws_it(mock) -> None:
    session = await mock()
    await session.play("elicit-then-cancel-request")
    requested = await session.requested()
    await session.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    assert await session.answer_received() == {"action": "accept", "content": {"question_0": "Red"}}


async def test_an_async_codex_question_answered_while_the_agent_works_reaches_it_in_the_turn(mock) -> None:
    session = await mock()
    await session.play("elicit-codex-async")
    requested = await session.requested()
    assert requested["delivery"] == "async"
    working = await session.inbox.next("session.update")
    assert working["update"]["content"]["text"].startswith("I keep")  # said before any answer
    await session.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    said = await session.said()
    assert said.startswith("I keep working while you answer.")
    answer = json.loads(said[said.index("Answer: ") + len("Answer: ") :])
    assert answer == {"action": "accept", "content": {"question_0": "Red"}}


async def test_an_async_codex_question_still_open_when_the_turn_ends_is_withdrawn(mock) -> None:
    session = await mock()
    await session.play("elicit-codex-async 0")  # waits 0 ms for the answer
    requested = await session.requested()
    settled = await session.inbox.next("elicitation.settled")
    assert (settled["pending_id"], settled["outcome"], settled["reason"]) == (
        requested["pending_id"],
        "cancelled",
        "agent_cancelled_request",
    )
    assert (await session.said()).endswith("Answer: none")
    with pytest.raises(NotFound):
        await session.respond(requested["pending_id"], [])


async def test_elicit_answer_timeout(mock) -> None:
    session = await mock(env={"KANDEV_ELICITATION_ANSWER_TIMEOUT": "1s"})
    await session.play("elicit-single")
    await session.requested()
    assert (await session.inbox.next("elicitation.settled", timeout=10))["reason"] == "answer_timeout"
    assert await session.answer_received() == {"action": "decline"}


@pytest.mark.parametrize("scenario", ["elicit-single", "elicit-twice"])
async def test_cancelling_an_elicit_scenario(mock, scenario: str) -> None:
    session = await mock()
    await session.play(scenario)
    pendings = [await session.requested() for _ in range(2 if scenario == "elicit-twice" else 1)]
    await session.client.request("agent.cancel", {"session_id": session.session_id})
    assert (await session.inbox.next("turn.completed"))["stop_reason"] == "cancelled"
    settled = session.inbox.all("elicitation.settled")
    assert sorted(s["pending_id"] for s in settled) == sorted(p["pending_id"] for p in pendings)
    assert {s["reason"] for s in settled} == {"turn_cancelled"}
    assert session.inbox.all("session.update") == []


async def test_AC_20_with_the_flag_off_the_agent_is_declined_and_nobody_is_asked(mock) -> None:
    session = await mock(elicitation=False)
    await session.play("elicit-single")
    assert await session.answer_received() == {"action": "decline"}
    assert [a for a in session.inbox.actions() if a.startswith("elicitation.")] == ["elicitation.declined"]
    declined = {"session_id": session.session_id, "reason": "elicitation_off"}
    assert session.inbox.all("elicitation.declined") == [declined]


def _without_tool_call_ids(value: Any) -> Any:
    """Tool call ids carry each turn's random tag; everything else must match exactly."""
    if isinstance(value, dict):
        return {k: "<id>" if k == "toolCallId" else _without_tool_call_ids(v) for k, v in value.items()}
    return value


async def test_AC_19_wire_half_an_agent_that_never_elicits_streams_the_same_with_the_flag_on_or_off(mock) -> None:
    streams = []
    for flag in (True, False):
        session = await mock(elicitation=flag)
        await session.play("tool-calls")
        await session.said()
        streams.append(
            [
                (action, _without_tool_call_ids(payload.get("update")), payload.get("stop_reason"))
                for action, payload in session.inbox.received
            ]
        )
    on, off = streams
    assert on == off
    assert [action for action, _, _ in on if action.startswith("elicitation.")] == []
