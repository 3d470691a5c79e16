"""Every ``elicitation/create`` frame captured from the real Claude bridge, through a real agentctl.

For each ``tests/fixtures/claude-agent-acp/<version>/wire_*.json``: the scripted
agent sends the frame verbatim (only ``sessionId`` is the scripted session's),
agentctl announces the questions an operator would see, and each answer below
reaches the agent as the ACP result docs/decisions/answers.md#response-content gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testing_support.scripted_elicitation import SESSION, ask, run_script

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-agent-acp"
WIRE_FRAMES = sorted(FIXTURES.glob("*/wire_*.json"))


def _options(*entries: tuple[str, str | None]) -> list[dict[str, Any]]:
    return [{"id": const, "label": const, "description": description} for const, description in entries]


COLOUR = {
    "id": "question_0",
    "title": "Colour",
    "prompt": "Pick a colour",
    "kind": "single",
    "accepts_text": True,
    "sensitive": False,
    "options": _options(("Red", "The warm one."), ("Blue", "The cool one.")),
}
DATASTORE = {
    "id": "question_0",
    "title": "Datastore",
    "prompt": "Which database should the new service use?",
    "kind": "single",
    "accepts_text": True,
    "sensitive": False,
    "options": _options(
        ("Postgres", "Relational, already operated by the team."),
        ("SQLite", "Embedded; no ops burden."),
        ("DynamoDB", "Managed KV."),
    ),
}
ENVS = {
    "id": "question_1",
    "title": "Envs",
    "prompt": "Which environments should it deploy to?",
    "kind": "multi",
    "accepts_text": True,
    "sensitive": False,
    "options": _options(("dev", "d"), ("staging", "s"), ("prod", "p")),
}
API_KEY = {
    "id": "apiKey",
    "title": None,
    "prompt": "Need your key",
    "kind": "text",
    "accepts_text": True,
    "sensitive": True,
    "options": [],
}
REFUSAL = {
    "id": "choice",
    "title": None,
    "prompt": "claude-fable-5 declined this request (cyber). Retry with claude-opus-4-8?",
    "kind": "single",
    "accepts_text": False,
    "sensitive": False,
    "options": [
        {
            "id": "retry_fallback",
            "label": "Retry with claude-opus-4-8",
            "description": "The session continues on claude-opus-4-8.",
        },
        {"id": "cancelled", "label": "Keep the refusal", "description": "You can send a new message."},
    ],
}

Answer = tuple[list[dict[str, Any]] | None, dict[str, Any]]  # (answers, or None for Skip; the ACP result)

SINGLE_ANSWERS: list[Answer] = [
    ([{"question_id": "question_0", "selected_options": ["Blue"]}], {"question_0": "Blue"}),
    (
        [{"question_id": "question_0", "selected_options": ["Red"], "custom_text": " Green "}],
        {"question_0_custom": "Green"},
    ),
    ([{"question_id": "question_0", "custom_text": "Teal"}], {"question_0_custom": "Teal"}),
    ([], {}),
    (None, {}),
]
TWO_ANSWERS: list[Answer] = [
    (
        [
            {"question_id": "question_1", "selected_options": ["prod", "dev"]},
            {"question_id": "question_0", "selected_options": ["SQLite"]},
        ],
        {"question_0": "SQLite", "question_1": ["dev", "prod"]},
    ),
    (
        [{"question_id": "question_1", "selected_options": ["staging"], "custom_text": "qa"}],
        {"question_1_custom": "qa"},
    ),
    ([{"question_id": "question_0", "custom_text": "CockroachDB"}], {"question_0_custom": "CockroachDB"}),
    ([], {}),
    (None, {}),
]
API_KEY_ANSWERS: list[Answer] = [
    ([{"question_id": "apiKey", "custom_text": "T"}], {"apiKey": "T"}),
    ([{"question_id": "apiKey", "custom_text": "  "}], {}),
    (None, {}),
]
REFUSAL_ANSWERS: list[Answer] = [
    ([{"question_id": "choice", "selected_options": ["retry_fallback"]}], {"choice": "retry_fallback"}),
    ([{"question_id": "choice", "selected_options": ["cancelled"]}], {"choice": "cancelled"}),
    (None, {}),
]

#: file name -> (tool call id, message, announced questions, answers)
EXPECTED: dict[str, tuple[str | None, str, list[dict[str, Any]], list[Answer]]] = {
    "0.65.0/wire_single_question_elicitation_0.65.0.json": (
        "toolu_fake_aa901482735f47b8",
        "Pick a colour",
        [COLOUR],
        SINGLE_ANSWERS,
    ),
    "0.65.0/wire_two_questions_elicitation_0.65.0.json": (
        "toolu_fake_1738d0467a854b93",
        "Please answer the following questions.",
        [DATASTORE, ENVS],
        TWO_ANSWERS,
    ),
    "0.65.0/wire_mcp_apiKey_elicitation_0.65.0.json": (None, "Need your key", [API_KEY], API_KEY_ANSWERS),
    "0.65.0/wire_refusal_fallback_elicitation_0.65.0.json": (None, REFUSAL["prompt"], [REFUSAL], REFUSAL_ANSWERS),
    # 0.101.0 dropped the companion marker (bridge >= 0.82): the bare `_custom` "Other" is still found.
    "0.101.0/wire_single_question_elicitation.json": (
        "toolu_fake_9261d3108cc54d5f",
        "Pick a colour",
        [COLOUR],
        SINGLE_ANSWERS,
    ),
    "0.101.0/wire_two_questions_elicitation.json": (
        "toolu_fake_e06fa939ab434122",
        "Please answer the following questions.",
        [DATASTORE, ENVS],
        TWO_ANSWERS,
    ),
    "0.101.0/wire_mcp_apiKey_elicitation.json": (None, "Need your key", [API_KEY], API_KEY_ANSWERS),
}


def test_every_wire_frame_has_expectations() -> None:
    assert len(WIRE_FRAMES) == 7
    assert {str(path.relative_to(FIXTURES)) for path in WIRE_FRAMES} == set(EXPECTED)


def _cases() -> list[Any]:
    return [
        pytest.param(name, index, id=f"{name}-answer{index}")
        for name in sorted(EXPECTED)
        for index in range(len(EXPECTED[name][3]))
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize(("name", "index"), _cases())
async def test_a_captured_frame_round_trips(start_agentctl, connect, scripted, name: str, index: int) -> None:
    tool_call_id, message, questions, answers = EXPECTED[name]
    frame = json.loads((FIXTURES / name).read_text())
    frame["sessionId"] = SESSION
    run = await run_script(start_agentctl, connect, scripted, ask(frame))
    requested = await run.requested()
    assert (requested["tool_call_id"], requested["message"], requested["questions"]) == (
        tool_call_id,
        message,
        questions,
    )

    given, content = answers[index]
    answer = await run.respond(requested["pending_id"], given, rejected=given is None)
    expected = {"action": "decline"} if given is None else {"action": "accept", "content": content}
    # What agentctl reports back leaves out what a credential-looking question got (docs/decisions/operator.md#secrets).
    secret = {q["id"] for q in questions if q["sensitive"]}
    reported = dict(expected)
    if given is not None and secret & set(content):
        reported["content"] = {key: value for key, value in content.items() if key not in secret}
        reported["withheld"] = sorted(secret & set(content))
    assert answer == {"success": True, **reported}
    await run.finished()
    assert run.echoed() == [{"jsonrpc": "2.0", "id": 0, "result": expected}]
