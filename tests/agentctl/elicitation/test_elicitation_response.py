"""The ACP result for an operator's answers: the sparse content, Skip, cancel.

The content: docs/decisions/answers.md#response-content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import (
    Answer,
    MappedForm,
    build_response,
    cancel_response,
    decline_response,
    map_elicitation,
    normalise,
    reported_response,
)

Load = Callable[[str, str], Any]


def mapped(params: object) -> MappedForm:
    result = map_elicitation(params)
    assert isinstance(result, MappedForm), result
    return result


def respond(form: MappedForm, answers: list[dict[str, Any]]) -> dict[str, object]:
    """What agentctl does with an `agent.elicitations.respond` that is not a Skip."""
    return build_response(form, normalise(form, answers), rejected=False)


def three_questions() -> MappedForm:
    return mapped(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "Please answer the following questions.",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    f"question_{n}": {"type": "string", "oneOf": [{"const": "yes"}, {"const": "no"}]} for n in range(3)
                },
            },
        }
    )


@pytest.mark.parametrize(
    ("version", "name", "label"),
    [
        ("0.65.0", "wire_single_question_elicitation_0.65.0.json", "Red"),
        ("0.101.0", "wire_single_question_elicitation.json", "Blue"),
        ("0.65.0", "ask_single_request.json", "SQLite"),
    ],
)
def test_AC_10_selected_label_is_sent_at_the_schema_key(
    load_fixture: Load, version: str, name: str, label: str
) -> None:
    form = mapped(load_fixture(version, name))

    assert respond(form, [{"question_id": "question_0", "selected_options": [label], "custom_text": ""}]) == {
        "action": "accept",
        "content": {"question_0": label},
    }


def test_AC_11_free_text_goes_to_the_marked_companion_key() -> None:
    form = mapped(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "Which?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "question_0": {"type": "string", "oneOf": [{"const": "A"}, {"const": "B"}]},
                    "answer_freeform": {
                        "type": "string",
                        "_meta": {"_askUserQuestionCustomAnswer": {"questionId": "question_0", "isCustomAnswer": True}},
                    },
                },
            },
        }
    )

    assert respond(form, [{"question_id": "question_0", "custom_text": "T"}]) == {
        "action": "accept",
        "content": {"answer_freeform": "T"},
    }


@pytest.mark.parametrize(
    ("version", "name"),
    [("0.65.0", "wire_mcp_apiKey_elicitation_0.65.0.json"), ("0.101.0", "wire_mcp_apiKey_elicitation.json")],
)
def test_AC_11a_and_AC_56_free_text_of_a_zero_option_question_goes_to_its_own_key(
    load_fixture: Load, version: str, name: str
) -> None:
    form = mapped(load_fixture(version, name))
    question = form.questions[0]
    assert (question.kind, question.options, question.accepts_text) == ("text", (), True)

    assert respond(form, [{"question_id": "apiKey", "selected_options": [], "custom_text": "T"}]) == {
        "action": "accept",
        "content": {"apiKey": "T"},
    }


def test_AC_12_two_selected_options_are_sent_as_an_array(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.65.0", "wire_two_questions_elicitation_0.65.0.json"))

    assert respond(form, [{"question_id": "question_1", "selected_options": ["staging", "prod"]}]) == {
        "action": "accept",
        "content": {"question_1": ["staging", "prod"]},
    }


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_12a_free_text_with_a_selection_is_sent_trimmed_at_the_companion(load_fixture: Load, version: str) -> None:
    form = mapped(load_fixture(version, "ask_two_request.json"))

    response = respond(
        form, [{"question_id": "question_0", "selected_options": ["Postgres"], "custom_text": "  CockroachDB  "}]
    )

    assert response["content"] == {"question_0_custom": "CockroachDB"}


def test_AC_12b_empty_submission_is_accept_with_empty_content(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.65.0", "ask_two_request.json"))

    assert respond(form, []) == {"action": "accept", "content": {}}
    assert build_response(form, None, rejected=False) == {"action": "accept", "content": {}}
    assert respond(form, [{"question_id": "question_0", "selected_options": [], "custom_text": " "}]) == {
        "action": "accept",
        "content": {},
    }


def test_AC_12h_only_the_answered_question_contributes_a_key() -> None:
    form = three_questions()

    response = respond(
        form,
        [
            {"question_id": "question_0", "selected_options": [], "custom_text": ""},
            {"question_id": "question_1", "selected_options": ["no"], "custom_text": ""},
        ],
    )

    assert response == {"action": "accept", "content": {"question_1": "no"}}


@pytest.mark.parametrize(
    ("question_id", "selected", "companion"),
    [("question_0", ["SQLite"], "question_0_custom"), ("question_1", ["dev", "prod"], "question_1_custom")],
)
@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_12i_text_and_selection_sends_only_the_companion(
    load_fixture: Load, version: str, question_id: str, selected: list[str], companion: str
) -> None:
    form = mapped(load_fixture(version, "ask_two_request.json"))

    response = respond(form, [{"question_id": question_id, "selected_options": selected, "custom_text": "mine"}])

    assert response == {"action": "accept", "content": {companion: "mine"}}


@pytest.mark.parametrize("text", [" ", "\n\t  ", "\u3000"])
def test_AC_12j_whitespace_only_text_without_selection_contributes_no_key(load_fixture: Load, text: str) -> None:
    form = mapped(load_fixture("0.65.0", "ask_two_request.json"))
    api_key = mapped(load_fixture("0.65.0", "mcp_create_requests.json")["form_apiKey"])

    assert respond(form, [{"question_id": "question_0", "custom_text": text}])["content"] == {}
    assert respond(api_key, [{"question_id": "apiKey", "custom_text": text}])["content"] == {}


def test_AC_12j_whitespace_only_text_falls_back_to_the_selection(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.65.0", "ask_two_request.json"))

    assert respond(form, [{"question_id": "question_0", "selected_options": ["SQLite"], "custom_text": "   "}])[
        "content"
    ] == {"question_0": "SQLite"}


def test_AC_14_skip_is_decline_whatever_was_answered(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.65.0", "ask_two_request.json"))
    answers = (Answer("question_0", ("Postgres",)),)

    assert build_response(form, answers, rejected=True) == {"action": "decline"}
    assert build_response(form, None, rejected=True) == {"action": "decline"}
    assert decline_response() == {"action": "decline"}


def test_AC_15_cancel_response() -> None:
    assert cancel_response() == {"action": "cancel"}


def test_text_to_an_empty_enum_question_goes_to_its_own_key() -> None:
    form = mapped(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "m",
            "requestedSchema": {"properties": {"tags": {"type": "array", "items": {"anyOf": []}}}},
        }
    )

    assert respond(form, [{"question_id": "tags", "custom_text": " a, b "}])["content"] == {"tags": "a, b"}


def test_text_to_a_text_question_with_a_markerless_companion_goes_to_the_companion() -> None:
    form = mapped(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "m",
            "requestedSchema": {
                "properties": {"name": {"type": "string"}, "name_custom": {"type": "string", "title": "Other"}}
            },
        }
    )

    assert respond(form, [{"question_id": "name", "custom_text": "x"}])["content"] == {"name_custom": "x"}


def test_responses_are_fresh_objects_a_caller_may_mutate() -> None:
    cancel_response()["action"] = "accept"
    decline_response()["content"] = {"x": "y"}

    assert (cancel_response(), decline_response()) == ({"action": "cancel"}, {"action": "decline"})


# What agentctl reports back of a response (docs/decisions/operator.md#secrets) -----------------------------------


def credential_form() -> MappedForm:
    """A credential-looking question with options and a companion, beside an ordinary one."""
    return mapped(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "Connect the database",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "dbPassword": {"type": "string", "title": "Password", "oneOf": [{"const": "from-env"}]},
                    "dbPassword_custom": {"type": "string", "title": "Other"},
                    "region": {"type": "string", "oneOf": [{"const": "eu"}, {"const": "us"}]},
                },
            },
        }
    )


def test_a_sensitive_questions_typed_value_is_withheld_from_the_report() -> None:
    form = credential_form()
    assert [(q.id, q.sensitive, q.companion_key) for q in form.questions] == [
        ("dbPassword", True, "dbPassword_custom"),
        ("region", False, None),
    ]
    answers = [
        {"question_id": "dbPassword", "custom_text": "hunter2"},
        {"question_id": "region", "selected_options": ["eu"]},
    ]
    sent = respond(form, answers)
    assert sent == {"action": "accept", "content": {"dbPassword_custom": "hunter2", "region": "eu"}}
    reported = reported_response(form, sent)
    assert reported == {"action": "accept", "content": {"region": "eu"}, "withheld": ["dbPassword"]}


def test_a_report_without_sensitive_answers_is_the_response_itself(load_fixture: Load) -> None:
    form = credential_form()
    sent = respond(form, [{"question_id": "region", "selected_options": ["us"]}])
    assert reported_response(form, sent) == sent
    assert reported_response(form, decline_response()) == {"action": "decline"}
    api_key = mapped(load_fixture("0.65.0", "mcp_create_requests.json")["form_apiKey"])
    assert reported_response(api_key, respond(api_key, [{"question_id": "apiKey", "custom_text": "T"}])) == {
        "action": "accept",
        "content": {},
        "withheld": ["apiKey"],
    }


@given(
    secret=st.text(min_size=1).filter(str.strip),
    region=st.none() | st.sampled_from(["eu", "us"]),
    picked=st.booleans(),
)
def test_no_value_given_to_a_sensitive_question_is_reported(secret: str, region: str | None, picked: bool) -> None:
    form = credential_form()
    answers: list[dict[str, Any]] = [
        {"question_id": "dbPassword", "selected_options": ["from-env"] if picked else [], "custom_text": secret}
    ]
    if region:
        answers.append({"question_id": "region", "selected_options": [region]})
    reported = reported_response(form, respond(form, answers))
    assert reported["content"] == ({"region": region} if region else {})
    assert reported["withheld"] == ["dbPassword"]
