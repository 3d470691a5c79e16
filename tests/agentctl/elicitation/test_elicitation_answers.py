"""F10 (agentctl validates the answers) and F12 (agentctl normalises them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import (
    Answer,
    InvalidAnswers,
    MappedForm,
    Problem,
    ProblemCode,
    build_response,
    map_elicitation,
    normalise,
    validate_answers,
)
from kandev_web.agentctl.elicitation.answers import MAX_TEXT_CHARS

Load = Callable[[str, str], Any]


@pytest.fixture
def form(load_fixture: Load) -> MappedForm:
    """question_0: single, companion; question_1: multi, companion."""
    result = map_elicitation(load_fixture("0.65.0", "ask_two_request.json"))
    assert isinstance(result, MappedForm)
    return result


@pytest.fixture
def refusal(load_fixture: Load) -> MappedForm:
    """choice: single, no companion, so it accepts no text."""
    result = map_elicitation(load_fixture("0.65.0", "refusal_fallback.json")["request_full"])
    assert isinstance(result, MappedForm)
    return result


@pytest.fixture
def api_key(load_fixture: Load) -> MappedForm:
    """apiKey: free text, no options."""
    result = map_elicitation(load_fixture("0.101.0", "mcp_create_requests.json")["form_apiKey"])
    assert isinstance(result, MappedForm)
    return result


def test_F10_valid_answers_have_no_problems(form: MappedForm) -> None:
    answers = [
        {"question_id": "question_0", "selected_options": ["Postgres"], "custom_text": ""},
        {"question_id": "question_1", "selected_options": ["dev", "prod"], "custom_text": "  qa  "},
    ]

    assert validate_answers(form, answers) == []


def test_F10_empty_submission_is_valid(form: MappedForm) -> None:
    assert validate_answers(form, []) == []


def test_F10_absent_or_null_fields_mean_none(form: MappedForm) -> None:
    answers = [
        {"question_id": "question_0"},
        {"question_id": "question_1", "selected_options": None, "custom_text": None},
    ]

    assert validate_answers(form, answers) == []
    assert normalise(form, answers) == (Answer("question_0"), Answer("question_1"))


def test_F10_unknown_question(form: MappedForm) -> None:
    problems = validate_answers(form, [{"question_id": "question_0_custom", "custom_text": "x"}])

    assert problems == [Problem(ProblemCode.UNKNOWN_QUESTION, 0, "question_0_custom")]


def test_F10_duplicated_question(form: MappedForm) -> None:
    answers = [
        {"question_id": "question_1", "selected_options": ["dev"]},
        {"question_id": "question_1", "selected_options": ["prod"]},
    ]

    assert validate_answers(form, answers) == [Problem(ProblemCode.DUPLICATE_QUESTION, 1, "question_1")]


def test_F10_more_than_one_option_on_single_select(form: MappedForm) -> None:
    answers = [{"question_id": "question_0", "selected_options": ["Postgres", "SQLite"]}]

    assert validate_answers(form, answers) == [Problem(ProblemCode.TOO_MANY_OPTIONS, 0, "question_0")]


def test_F10_a_repeated_option_on_single_select_is_one_option(form: MappedForm) -> None:
    answers = [{"question_id": "question_0", "selected_options": ["SQLite", "SQLite"]}]

    assert validate_answers(form, answers) == []
    assert normalise(form, answers) == (Answer("question_0", ("SQLite",)),)


def test_F10_option_that_is_not_a_const(form: MappedForm, api_key: MappedForm) -> None:
    # The label of an option is not its id when they differ; only consts are accepted.
    answers = [{"question_id": "question_1", "selected_options": ["dev", "Prod", "qa", "qa"]}]

    assert validate_answers(form, answers) == [
        Problem(ProblemCode.UNKNOWN_OPTION, 0, "question_1", "Prod"),
        Problem(ProblemCode.UNKNOWN_OPTION, 0, "question_1", "qa"),
    ]
    assert validate_answers(api_key, [{"question_id": "apiKey", "selected_options": ["x"]}]) == [
        Problem(ProblemCode.UNKNOWN_OPTION, 0, "apiKey", "x")
    ]


def test_F10_option_labels_are_not_ids(refusal: MappedForm) -> None:
    answers = [{"question_id": "choice", "selected_options": ["Retry with Opus"]}]

    assert validate_answers(refusal, answers) == [Problem(ProblemCode.UNKNOWN_OPTION, 0, "choice", "Retry with Opus")]


def test_F10_free_text_on_a_question_that_accepts_none(refusal: MappedForm) -> None:
    answers = [{"question_id": "choice", "selected_options": ["cancelled"], "custom_text": "edit my prompt"}]

    assert validate_answers(refusal, answers) == [Problem(ProblemCode.TEXT_NOT_ACCEPTED, 0, "choice")]


def test_F10_whitespace_only_text_is_no_text(refusal: MappedForm) -> None:
    assert validate_answers(refusal, [{"question_id": "choice", "custom_text": " \n\t "}]) == []


def test_F10_text_over_10000_characters(api_key: MappedForm) -> None:
    at_limit = "é" * MAX_TEXT_CHARS
    assert validate_answers(api_key, [{"question_id": "apiKey", "custom_text": f"  {at_limit}  "}]) == []

    problems = validate_answers(api_key, [{"question_id": "apiKey", "custom_text": at_limit + "x"}])
    assert problems == [Problem(ProblemCode.TEXT_TOO_LONG, 0, "apiKey")]


@pytest.mark.parametrize(
    ("payload", "problems"),
    [
        (None, [Problem(ProblemCode.ANSWERS_NOT_A_LIST)]),
        ({"question_id": "question_0"}, [Problem(ProblemCode.ANSWERS_NOT_A_LIST)]),
        (["question_0"], [Problem(ProblemCode.ANSWER_NOT_AN_OBJECT, 0)]),
        ([{"selected_options": ["Postgres"]}], [Problem(ProblemCode.BAD_QUESTION_ID, 0)]),
        ([{"question_id": 0}], [Problem(ProblemCode.BAD_QUESTION_ID, 0)]),
        (
            [{"question_id": "question_0", "selected_options": "Postgres"}],
            [Problem(ProblemCode.BAD_SELECTED_OPTIONS, 0, "question_0")],
        ),
        (
            [{"question_id": "question_0", "selected_options": [1]}],
            [Problem(ProblemCode.BAD_SELECTED_OPTIONS, 0, "question_0")],
        ),
        (
            [{"question_id": "question_0", "selected_options": 0}],
            [Problem(ProblemCode.BAD_SELECTED_OPTIONS, 0, "question_0")],
        ),
        (
            [{"question_id": "question_0", "custom_text": ["x"]}],
            [Problem(ProblemCode.BAD_CUSTOM_TEXT, 0, "question_0")],
        ),
        (
            [{"question_id": "question_0", "custom_text": False}],
            [Problem(ProblemCode.BAD_CUSTOM_TEXT, 0, "question_0")],
        ),
        (
            [{"question_id": "question_0", "selected_options": {}, "custom_text": 1}],
            [
                Problem(ProblemCode.BAD_SELECTED_OPTIONS, 0, "question_0"),
                Problem(ProblemCode.BAD_CUSTOM_TEXT, 0, "question_0"),
            ],
        ),
    ],
    ids=[
        "null",
        "object",
        "entry_not_object",
        "missing_question_id",
        "numeric_question_id",
        "options_string",
        "options_numbers",
        "options_falsy_number",
        "text_list",
        "text_false",
        "both_fields",
    ],
)
def test_F10_malformed_payload_shapes(form: MappedForm, payload: object, problems: list[Problem]) -> None:
    assert validate_answers(form, payload) == problems


def test_F10_every_problem_is_reported_in_payload_order(form: MappedForm) -> None:
    answers = [
        {
            "question_id": "question_0",
            "selected_options": ["Postgres", "Oracle"],
            "custom_text": "x" * (MAX_TEXT_CHARS + 1),
        },
        7,
        {"question_id": "nope"},
        {"question_id": "question_0"},
        {"question_id": "question_1", "selected_options": ["dev"]},
    ]

    assert validate_answers(form, answers) == [
        Problem(ProblemCode.TOO_MANY_OPTIONS, 0, "question_0"),
        Problem(ProblemCode.UNKNOWN_OPTION, 0, "question_0", "Oracle"),
        Problem(ProblemCode.TEXT_TOO_LONG, 0, "question_0"),
        Problem(ProblemCode.ANSWER_NOT_AN_OBJECT, 1),
        Problem(ProblemCode.UNKNOWN_QUESTION, 2, "nope"),
        Problem(ProblemCode.DUPLICATE_QUESTION, 3, "question_0"),
    ]


def test_F10_problems_never_quote_the_operators_text(form: MappedForm) -> None:
    secret = "hunter2-" + "x" * MAX_TEXT_CHARS
    problems = validate_answers(form, [{"question_id": "question_0", "custom_text": secret}])

    assert [p.to_wire() for p in problems] == [
        {
            "code": "text_too_long",
            "index": 0,
            "question_id": "question_0",
            "option_id": None,
            "message": "The answer to “Datastore” is longer than 10,000 characters.",
        }
    ]
    assert "hunter2" not in json.dumps([p.to_wire() for p in problems])


def test_F10_normalise_refuses_what_validation_refuses(form: MappedForm) -> None:
    with pytest.raises(InvalidAnswers) as raised:
        normalise(form, [{"question_id": "question_0", "selected_options": ["Postgres", "SQLite"]}])

    assert raised.value.problems == (Problem(ProblemCode.TOO_MANY_OPTIONS, 0, "question_0"),)


def test_F10_build_response_refuses_answers_that_skipped_validation(form: MappedForm) -> None:
    with pytest.raises(InvalidAnswers):
        build_response(form, [Answer("question_0", ("Postgres", "SQLite"))], rejected=False)


def test_F12_options_deduplicated_and_in_declaration_order(form: MappedForm) -> None:
    answers = [{"question_id": "question_1", "selected_options": ["prod", "dev", "prod", "dev"]}]

    assert normalise(form, answers) == (Answer("question_1", ("dev", "prod")),)


def test_F12_answers_come_back_in_question_order_with_text_untouched(form: MappedForm) -> None:
    answers = [
        {"question_id": "question_1", "selected_options": ["staging"]},
        {"question_id": "question_0", "custom_text": "  CockroachDB  "},
    ]

    assert normalise(form, answers) == (
        Answer("question_0", (), "  CockroachDB  "),
        Answer("question_1", ("staging",)),
    )


def test_AC_55_prod_then_dev_is_sent_as_dev_prod(form: MappedForm) -> None:
    answers = normalise(form, [{"question_id": "question_1", "selected_options": ["prod", "dev"], "custom_text": ""}])

    assert answers == (Answer("question_1", ("dev", "prod")),)
    assert build_response(form, answers, rejected=False) == {
        "action": "accept",
        "content": {"question_1": ["dev", "prod"]},
    }


def test_AC_55_build_response_puts_options_in_declaration_order_even_unnormalised(form: MappedForm) -> None:
    assert build_response(form, [Answer("question_1", ("prod", "dev"))], rejected=False) == {
        "action": "accept",
        "content": {"question_1": ["dev", "prod"]},
    }
