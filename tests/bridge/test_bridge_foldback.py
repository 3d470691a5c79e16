"""What the model is told, computed by the real bridge from the content agentctl builds.

For each installed bridge version: the bridge's own ``askUserQuestionsToCreateRequest``
turns an AskUserQuestion tool input into the ``elicitation/create`` params it would
send; our pure code maps them (``map_elicitation``), takes the operator's answers as
``agent.elicitations.respond`` carries them (``normalise``) and builds the ACP result
(``build_response``); the bridge's own ``applyAskElicitationResponse`` folds that
result back into the tool input. The ``answers`` it produces, keyed by question
text, are what the model reads, and must be what the operator chose.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import MappedForm, build_response, map_elicitation, normalise
from testing_support.bridge import Bridge

DATASTORE = "Which database should the new service use?"
ENVS = "Which environments should it deploy to?"
REGION = "Which region should it run in?"

TOOL_INPUT: dict[str, Any] = {
    "questions": [
        {
            "question": DATASTORE,
            "header": "Datastore",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "Relational, already operated by the team."},
                {"label": "SQLite", "description": "Embedded; no ops burden.", "preview": "file:./app.db"},
                {"label": "DynamoDB"},
            ],
        },
        {
            "question": ENVS,
            "header": "Envs",
            "multiSelect": True,
            "options": [{"label": "dev"}, {"label": "staging"}, {"label": "prod"}],
        },
        {
            "question": REGION,
            "header": "Region",
            "multiSelect": False,
            "options": [{"label": "eu-west-1"}, {"label": "us-east-1"}],
        },
    ],
}


@dataclass(frozen=True)
class Case:
    """The operator's submission, and what the model must be told."""

    answers: list[dict[str, Any]]
    expected_content: dict[str, Any] | None  # None: a decline
    model_sees: dict[str, str]
    rejected: bool = False
    notes: dict[str, Any] = field(default_factory=dict)


CASES = {
    "single": Case(
        answers=[{"question_id": "question_0", "selected_options": ["Postgres"], "custom_text": ""}],
        expected_content={"question_0": "Postgres"},
        model_sees={DATASTORE: "Postgres"},
    ),
    "multi_in_declaration_order": Case(
        # Clicked prod first: the bridge keeps the order it receives, agentctl sorts.
        answers=[{"question_id": "question_1", "selected_options": ["prod", "dev", "prod"]}],
        expected_content={"question_1": ["dev", "prod"]},
        model_sees={ENVS: "dev, prod"},
    ),
    "custom_pick_and_text_single": Case(
        # AC-12i: the typed text replaces the pick, trimmed; on >= 0.78 it is no mere note.
        answers=[{"question_id": "question_0", "selected_options": ["SQLite"], "custom_text": "  CockroachDB  "}],
        expected_content={"question_0_custom": "CockroachDB"},
        model_sees={DATASTORE: "CockroachDB"},
    ),
    "custom_pick_and_text_multi": Case(
        answers=[{"question_id": "question_1", "selected_options": ["dev"], "custom_text": " qa "}],
        expected_content={"question_1_custom": "qa"},
        model_sees={ENVS: "qa"},
    ),
    "custom_text_only": Case(
        answers=[{"question_id": "question_0", "custom_text": "MySQL"}],
        expected_content={"question_0_custom": "MySQL"},
        model_sees={DATASTORE: "MySQL"},
    ),
    "whitespace_text_is_no_answer": Case(
        # AC-12j
        answers=[{"question_id": "question_2", "selected_options": [], "custom_text": "   "}],
        expected_content={},
        model_sees={},
    ),
    "partial": Case(
        # AC-12h: only the answered question contributes a key.
        answers=[{"question_id": "question_1", "selected_options": ["staging"]}],
        expected_content={"question_1": ["staging"]},
        model_sees={ENVS: "staging"},
    ),
    "all_three": Case(
        answers=[
            {"question_id": "question_2", "selected_options": ["us-east-1"]},
            {"question_id": "question_0", "selected_options": ["DynamoDB"]},
            {"question_id": "question_1", "selected_options": ["prod", "staging", "dev"]},
        ],
        expected_content={
            "question_0": "DynamoDB",
            "question_1": ["dev", "staging", "prod"],
            "question_2": "us-east-1",
        },
        model_sees={DATASTORE: "DynamoDB", ENVS: "dev, staging, prod", REGION: "us-east-1"},
    ),
    "empty_submission": Case(
        # AC-12b: Submit with nothing answered is accept {}; the model hears "not answered".
        answers=[],
        expected_content={},
        model_sees={},
    ),
    "skip": Case(
        # AC-14: Skip is decline; answers are ignored.
        answers=[{"question_id": "question_0", "selected_options": ["Postgres"]}],
        expected_content=None,
        model_sees={},
        rejected=True,
    ),
}


def create_request(bridge: Bridge, *, air_client: bool = False) -> dict[str, Any]:
    """The elicitation/create params this bridge sends for TOOL_INPUT (a fresh copy)."""
    return json.loads(_create_request(bridge, air_client))


@functools.cache
def _create_request(bridge: Bridge, air_client: bool) -> str:
    params = bridge.call(
        {
            "op": "create",
            "toolInput": TOOL_INPUT,
            "sessionId": "sess-1",
            "toolCallId": "toolu_01",
            "airClient": air_client,
        }
    )
    assert isinstance(params, dict)
    return json.dumps(params)


def mapped(params: dict[str, Any]) -> MappedForm:
    form = map_elicitation(params)
    assert isinstance(form, MappedForm), form
    return form


def our_response(form: MappedForm, case: Case) -> dict[str, Any]:
    """What agentctl writes to the agent for this submission."""
    answers = None if case.rejected else normalise(form, case.answers)
    return build_response(form, answers, case.rejected)


def fold_back(bridge: Bridge, response: dict[str, Any], **options: Any) -> dict[str, Any]:
    result = bridge.call({"op": "apply", "response": response, "toolInput": TOOL_INPUT, "options": options})
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize("name", list(CASES))
def test_the_model_sees_what_the_operator_chose(bridge: Bridge, name: str) -> None:
    case = CASES[name]
    form = mapped(create_request(bridge))

    response = our_response(form, case)
    if case.expected_content is None:
        assert response == {"action": "decline"}
    else:
        assert response == {"action": "accept", "content": case.expected_content}
    # Never null, never "" (docs/decisions/answers.md#response-content; the <= 0.99 null trap).
    for value in (response.get("content") or {}).values():
        assert value not in (None, "", [])

    result = fold_back(bridge, response)
    assert result["action"] == "answered", result
    updated = result["updatedInput"]
    assert updated["answers"] == case.model_sees
    # The tool input is passed on unchanged around the answers.
    assert updated["questions"] == TOOL_INPUT["questions"]
    # Text sent through the companion is the answer, never demoted to a note (>= 0.78).
    assert "annotations" not in updated


@pytest.mark.parametrize("name", ["partial", "empty_submission", "skip", "custom_text_only"])
def test_reporting_unanswered_questions_does_not_change_the_answers(bridge: Bridge, name: str) -> None:
    """>= 0.99 marks unanswered questions when the CLI supports it; the answers stay the same."""
    case = CASES[name]
    form = mapped(create_request(bridge))
    result = fold_back(bridge, our_response(form, case), reportUnanswered=True)
    assert result["action"] == "answered", result
    assert result["updatedInput"]["answers"] == case.model_sees
    if bridge.version == "0.65.0":
        assert "annotations" not in result["updatedInput"]
    else:
        unanswered = {q: a for q, a in result["updatedInput"].get("annotations", {}).items() if "unanswered" in a}
        expected = "dismissed" if case.rejected else "skipped"
        assert unanswered == {
            q: {"unanswered": expected} for q in (DATASTORE, ENVS, REGION) if q not in case.model_sees
        }


def test_every_question_gets_its_companion_and_nothing_else(bridge: Bridge) -> None:
    """Question ids are the bridge's keys, options its consts in order, and each
    ``question_N_custom`` is question N's companion: by marker on 0.65.0, and on
    0.101.0 (no marker for non-AIR clients) by the marker-less rule."""
    params = create_request(bridge)
    companions = {key: prop for key, prop in params["requestedSchema"]["properties"].items() if key.endswith("_custom")}
    assert sorted(companions) == ["question_0_custom", "question_1_custom", "question_2_custom"]
    has_marker = {"_meta" in prop for prop in companions.values()}
    assert has_marker == ({True} if bridge.version == "0.65.0" else {False})

    form = mapped(params)
    assert [q.id for q in form.questions] == ["question_0", "question_1", "question_2"]
    assert [q.kind for q in form.questions] == ["single", "multi", "single"]
    assert [[o.id for o in q.options] for q in form.questions] == [
        ["Postgres", "SQLite", "DynamoDB"],
        ["dev", "staging", "prod"],
        ["eu-west-1", "us-east-1"],
    ]
    assert [q.companion_key for q in form.questions] == ["question_0_custom", "question_1_custom", "question_2_custom"]
    assert all(q.accepts_text for q in form.questions)
    assert [q.prompt for q in form.questions] == [DATASTORE, ENVS, REGION]
    assert form.tool_call_id == "toolu_01"


def test_a_lone_question_is_prompted_by_the_message(bridge: Bridge) -> None:
    tool_input = {"questions": [TOOL_INPUT["questions"][0]]}
    params = bridge.call({"op": "create", "toolInput": tool_input, "sessionId": "sess-1", "toolCallId": "toolu_02"})
    form = mapped(params)
    (question,) = form.questions
    assert (question.id, question.title, question.prompt) == ("question_0", "Datastore", DATASTORE)
    assert question.companion_key == "question_0_custom"

    answers = normalise(form, [{"question_id": "question_0", "selected_options": ["SQLite"]}])
    response = build_response(form, answers, False)
    result = bridge.call({"op": "apply", "response": response, "toolInput": tool_input})
    assert result["updatedInput"]["answers"] == {DATASTORE: "SQLite"}


@pytest.mark.parametrize(
    "name", ["custom_pick_and_text_single", "custom_pick_and_text_multi", "multi_in_declaration_order"]
)
def test_the_marked_companion_of_air_clients_maps_the_same(bridge: Bridge, name: str) -> None:
    """0.101.0 still marks companions for JetBrains AIR clients; the marker wins and agrees."""
    if bridge.version == "0.65.0":
        params = create_request(bridge)  # 0.65.0 marks every companion anyway
    else:
        params = create_request(bridge, air_client=True)
        assert all(
            "_meta" in prop for key, prop in params["requestedSchema"]["properties"].items() if key.endswith("_custom")
        )
    case = CASES[name]
    form = mapped(params)
    response = our_response(form, case)
    assert response == {"action": "accept", "content": case.expected_content}
    assert fold_back(bridge, response)["updatedInput"]["answers"] == case.model_sees
