"""Codex's ``request_user_input``, through the real adapter, under a real agentctl, offline.

The real ``@agentclientprotocol/codex-acp`` (with its Codex binary) is signed
in through the ACP ``gateway`` method to a scripted Responses API on
127.0.0.1 and put in Plan mode by the session's config options; the model
asks one question with options; the operator's answer, as agentctl builds it,
is what the model reads in the same turn.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from testing_support.agentctl import text_prompt
from testing_support.codex import Codex
from testing_support.codex.fake_responses_api import Call, FakeResponsesApi
from testing_support.codex.harness import GATEWAY_HEADERS, CodexRun, codex_session, initialize, open_session

MARKER = "KANDEV-CODEX-ASK-PROBE"
QUESTION = "Which colour should I use?"
ASK = Call(
    "request_user_input",
    {
        "questions": [
            {
                "id": "colour",
                "header": "Colour",
                "question": QUESTION,
                "options": [
                    {"label": "Red", "description": "The warm one."},
                    {"label": "Blue", "description": "The cool one."},
                ],
            }
        ]
    },
)
FINAL_TEXT = "Red it is."
#: What Codex tells the model when it got no answer (declined, cancelled, or no form support).
NO_ANSWERS = '{"answers":{}}'


def fake_api() -> FakeResponsesApi:
    return FakeResponsesApi(marker=MARKER, call=ASK, final_text=FINAL_TEXT)


async def ask(run: CodexRun, *, elicitation: bool = True) -> tuple[str, dict[str, Any]]:
    """Open a Plan-mode session, send the prompt; the session id and the question agentctl announced."""
    session_id = await open_session(run, elicitation=elicitation)
    await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(f"{MARKER}: pick a colour")})
    action, payload = await run.first_of("elicitation.requested", "turn.completed")
    assert action == "elicitation.requested", f"no question reached agentctl\n{run.explain()}"
    return session_id, payload


def assert_clean(run: CodexRun) -> None:
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_the_gateway_sign_in_is_offered_only_when_asked_for(codex: Codex, tmp_path: Path) -> None:
    async with codex_session(codex, tmp_path / "plain", fake_api()) as run:
        plain = await initialize(run, auth_gateway=False)
    async with codex_session(codex, tmp_path / "gateway", fake_api()) as run:
        asked = await initialize(run, auth_gateway=True)

    assert "auth" not in plain["client_capabilities"]
    assert [method["id"] for method in plain["auth_methods"]] == ["api-key"]
    assert asked["client_capabilities"]["auth"] == {"_meta": {"gateway": True}}
    assert [method["id"] for method in asked["auth_methods"]] == ["api-key", "gateway"]
    gateway = next(method for method in asked["auth_methods"] if method["id"] == "gateway")
    assert gateway["needs_person"] is False


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_a_plan_mode_question_answered_with_pick_and_note_reaches_the_model_in_the_same_turn(
    codex: Codex, tmp_path: Path
) -> None:
    api = fake_api()
    async with codex_session(codex, tmp_path, api) as run:
        session_id, requested = await ask(run)

        # One question, with Codex's note as its companion (the free text), not a second question.
        (question,) = requested["questions"]
        # Asked by Codex's title (the question), headed by its description (the header).
        assert (question["id"], question["title"], question["prompt"]) == ("colour", "Colour", QUESTION)
        assert (question["accepts_text"], question["note"], question["other_option"]) == (
            True,
            True,
            "None of the above",
        )

        answer = {"question_id": "colour", "selected_options": ["Red"], "custom_text": "because it is warm"}
        await run.request(
            "agent.elicitations.respond",
            {"pending_id": requested["pending_id"], "rejected": False, "reject_reason": "", "answers": [answer]},
        )
        completed = await run.next("turn.completed")
        assert completed["session_id"] == session_id
        assert completed["stop_reason"] == "end_turn", run.explain()

        assert api.outputs_received() == ['{"answers":{"colour":{"answers":["Red","user_note: because it is warm"]}}}']
        assert [e.kind for e in api.of_kind("call", "after_output")] == ["call", "after_output"]
        # Signed in through the gateway: Codex called the fake with the profile's headers.
        (call,) = api.of_kind("call")
        assert call.headers.get("x-kandev-gateway") == GATEWAY_HEADERS["X-Kandev-Gateway"], call.headers
    assert_clean(run)


@pytest.mark.asyncio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["decline", "cancel"])
async def test_a_skipped_question_tells_the_model_no_answers_and_a_cancelled_turn_stops(
    codex: Codex, tmp_path: Path, how: str
) -> None:
    api = fake_api()
    async with codex_session(codex, tmp_path, api) as run:
        session_id, requested = await ask(run)
        if how == "decline":
            await run.request(
                "agent.elicitations.respond",
                {"pending_id": requested["pending_id"], "rejected": True, "reject_reason": "", "answers": []},
            )
        else:
            await run.request("agent.cancel", {"session_id": session_id})
        settled = await run.next("elicitation.settled")
        completed = await run.next("turn.completed")
        if how == "decline":
            # Skip: Codex tells the model it got no answers, and the turn goes on to its end.
            assert settled["outcome"] == "declined"
            assert completed["stop_reason"] == "end_turn", run.explain()
            assert api.outputs_received() == [NO_ANSWERS]
        else:
            # Cancelling the turn: the question is withdrawn and Codex stops; the model hears nothing more.
            assert settled["outcome"] == "cancelled"
            assert completed["stop_reason"] == "cancelled", run.explain()
            assert api.outputs_received() == []
    assert_clean(run)


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_a_session_ends_promptly_and_quietly(codex: Codex, tmp_path: Path) -> None:
    """The adapter lingers ~2-5 s after its stdin closes; agentctl ends it after 1 s, without a warning."""
    async with codex_session(codex, tmp_path, fake_api()) as run:
        await open_session(run)
        started = time.monotonic()
        await run.request("agent.shutdown", {})
        exited = await run.next("agent.exited", timeout=10)
        took = time.monotonic() - started
    # Before: 2 s of waiting, a warning, then SIGTERM. Now SIGTERM follows 1 s after stdin closed.
    assert took < 1.95, f"the session took {took:.2f} s to end"
    assert exited["signal"] in ("SIGTERM", None), exited
    assert_clean(run)
