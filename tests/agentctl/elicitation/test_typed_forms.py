"""Typed forms (docs/decisions/mapping.md#typed-forms): booleans, numbers, integers, string
constraints and formats, item counts, defaults and `required`; mapped, validated,
and sent as typed JSON."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import (
    Decline,
    DeclineReason,
    MappedForm,
    build_response,
    map_elicitation,
    normalise,
    validate_answers,
)
from kandev_web.agentctl.elicitation.constraints import MAX_PATTERN_CHARS, compile_pattern


def request(properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {
        "mode": "form",
        "sessionId": "sess-1",
        "message": "Settings",
        "requestedSchema": {"type": "object", "properties": properties, **schema},
    }


def mapped(properties: dict[str, Any], **schema: Any) -> MappedForm:
    form = map_elicitation(request(properties, **schema))
    assert isinstance(form, MappedForm), form
    return form


def wire(properties: dict[str, Any], **schema: Any) -> list[dict[str, Any]]:
    return mapped(properties, **schema).wire_questions()


def problems(form: MappedForm, answers: list[dict[str, Any]]) -> list[tuple[str, str | None, object]]:
    return [(p.code.value, p.question_id, p.limit) for p in validate_answers(form, answers)]


def content(form: MappedForm, answers: list[dict[str, Any]]) -> dict[str, Any]:
    assert validate_answers(form, answers) == []
    response = build_response(form, normalise(form, answers), rejected=False)
    assert response["action"] == "accept"
    return response["content"]  # type: ignore[return-value]


DEPLOY = {
    "overwrite": {"type": "boolean", "title": "Overwrite existing file?"},
    "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5},
    "ratio": {"type": "number", "minimum": 0, "maximum": 1},
    "contact": {"type": "string", "format": "email", "title": "Contact"},
}


# Mapping ------------------------------------------------------------------------


def test_booleans_numbers_and_integers_are_questions_of_their_own_kinds() -> None:
    questions = {q["id"]: q for q in wire(DEPLOY)}

    assert questions["overwrite"]["kind"] == "boolean"
    assert questions["overwrite"]["title"] == "Overwrite existing file?"
    assert questions["replicas"] == {
        "id": "replicas",
        "title": "Replicas",
        "prompt": "Settings",
        "kind": "integer",
        "accepts_text": False,
        "sensitive": False,
        "options": [],
        "constraints": {"minimum": 1, "maximum": 5},
    }
    assert questions["ratio"]["kind"] == "number"
    assert questions["contact"]["constraints"] == {"format": "email"}


def test_string_constraints_and_multi_select_item_counts_are_carried() -> None:
    questions = {
        q["id"]: q
        for q in wire(
            {
                "name": {"type": "string", "minLength": 2, "maxLength": 20, "pattern": "^[a-z-]+$"},
                "envs": {"type": "array", "items": {"enum": ["dev", "staging", "prod"]}, "minItems": 1, "maxItems": 2},
            }
        )
    }

    assert questions["name"]["constraints"] == {"minLength": 2, "maxLength": 20, "pattern": "^[a-z-]+$"}
    assert questions["envs"]["constraints"] == {"minItems": 1, "maxItems": 2}


def test_a_form_without_typed_additions_is_announced_exactly_as_before() -> None:
    (question,) = wire({"q": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]}})
    assert set(question) == {"id", "title", "prompt", "kind", "accepts_text", "sensitive", "options"}
    assert mapped({"q": {"type": "string"}}).wire_heading() == {}


def test_the_schemas_own_title_and_description_head_the_form() -> None:
    form = mapped(DEPLOY, title="Deployment", description="How the service is rolled out.")
    assert form.wire_heading() == {"form_title": "Deployment", "form_description": "How the service is rolled out."}


def test_required_marks_questions() -> None:
    questions = {q["id"]: q for q in wire(DEPLOY, required=["replicas", "contact"])}
    assert [qid for qid, q in questions.items() if q.get("required")] == ["contact", "replicas"]


@pytest.mark.parametrize(
    "required",
    [["nowhere"], ["blob"]],
    ids=["absent_property", "unrecognised_property"],
)
def test_a_required_property_that_is_no_question_declines_the_form(required: list[str]) -> None:
    params = request({**DEPLOY, "blob": {"type": "object"}}, required=required)
    assert map_elicitation(params) == Decline(DeclineReason.UNRECOGNISED_REQUIRED)


def test_AC_18_a_form_of_only_unrecognised_fields_is_still_declined() -> None:
    params = request(
        {"o": {"type": "object"}, "z": {"type": "null"}, "deep": {"type": "array", "items": {"type": "array"}}}
    )
    assert map_elicitation(params) == Decline(DeclineReason.NO_QUESTIONS)


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "(a+)\\1"},
        {"type": "string", "pattern": "(?=x)x"},
        {"type": "string", "pattern": "["},
        {"type": "string", "pattern": "a" * (MAX_PATTERN_CHARS + 1)},
        {"type": "string", "format": "hostname"},
        {"type": "string", "minLength": -1},
        {"type": "string", "minLength": 5, "maxLength": 2},
        {"type": "integer", "minimum": 1.2, "maximum": 1.8},
        {"type": "number", "minimum": "1"},
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "number", "multipleOf": 5},
        {"type": "array", "items": {"enum": ["a"]}, "minItems": 2},
    ],
    ids=[
        "backreference",
        "lookahead",
        "unparseable",
        "too_long",
        "unknown_format",
        "negative_length",
        "lengths_crossed",
        "no_integer_in_range",
        "minimum_not_a_number",
        "exclusive_minimum",
        "multiple_of",
        "more_items_than_options",
    ],
)
def test_constraints_that_cannot_be_honoured_refuse_the_property(prop: dict[str, Any]) -> None:
    assert [q["id"] for q in wire({"x": prop, "keep": {"type": "boolean"}})] == ["keep"]


def test_a_pattern_runs_in_linear_time_on_input_that_would_stall_a_backtracking_engine() -> None:
    compiled = compile_pattern("^(a+)+$")
    assert compiled is not None
    started = time.monotonic()
    assert compiled.search("a" * 50_000 + "!") is None
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    ("prop", "default", "kept"),
    [
        ({"type": "boolean"}, True, True),
        ({"type": "boolean"}, "yes", None),
        ({"type": "integer", "minimum": 1, "maximum": 5}, 3, 3),
        ({"type": "integer", "minimum": 1, "maximum": 5}, 3.0, 3),
        ({"type": "integer", "minimum": 1, "maximum": 5}, 9, None),
        ({"type": "integer"}, 2.5, None),
        ({"type": "number", "maximum": 1}, 0.5, 0.5),
        ({"type": "number"}, False, None),
        ({"type": "string", "format": "email"}, "ops@example.com", "ops@example.com"),
        ({"type": "string", "format": "email"}, "not an address", None),
        ({"type": "string", "maxLength": 3}, "toolong", None),
        ({"type": "string", "enum": ["r", "g"]}, "g", "g"),
        ({"type": "string", "enum": ["r", "g"]}, "b", None),
        ({"type": "array", "items": {"enum": ["a", "b", "c"]}}, ["c", "a"], ["a", "c"]),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1}, ["a", "b"], None),
    ],
)
def test_a_default_pre_fills_only_when_it_fits_its_question(
    prop: dict[str, Any], default: object, kept: object
) -> None:
    (question,) = wire({"x": {**prop, "default": default}})
    assert question.get("default") == kept
    assert type(question.get("default")) is type(kept)


def test_a_credential_looking_field_is_never_pre_filled() -> None:
    (question,) = wire({"apiKey": {"type": "string", "default": "sk-live-123"}})
    assert question["sensitive"] is True
    assert "default" not in question


# Validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"question_id": "overwrite", "value": "yes"}, ("wrong_type", "overwrite", "boolean")),
        ({"question_id": "overwrite", "value": 1}, ("wrong_type", "overwrite", "boolean")),
        ({"question_id": "ratio", "value": True}, ("wrong_type", "ratio", "number")),
        ({"question_id": "replicas", "value": "3"}, ("wrong_type", "replicas", "integer")),
        ({"question_id": "replicas", "value": 2.5}, ("not_an_integer", "replicas", None)),
        ({"question_id": "replicas", "value": 0}, ("below_minimum", "replicas", 1)),
        ({"question_id": "replicas", "value": 6}, ("above_maximum", "replicas", 5)),
        ({"question_id": "ratio", "value": 1.5}, ("above_maximum", "ratio", 1)),
        ({"question_id": "contact", "custom_text": "ops at example"}, ("format_mismatch", "contact", "email")),
        ({"question_id": "name", "custom_text": "a"}, ("too_short", "name", 2)),
        ({"question_id": "name", "custom_text": "abcdefghijk"}, ("too_long", "name", 10)),
        ({"question_id": "name", "custom_text": "Ab"}, ("pattern_mismatch", "name", "^[a-z]+$")),
        ({"question_id": "envs", "selected_options": ["dev", "staging", "prod"]}, ("too_many_items", "envs", 2)),
        ({"question_id": "picks", "selected_options": ["a"]}, ("too_few_items", "picks", 2)),
        ({"question_id": "overwrite", "custom_text": "yes"}, ("text_not_accepted", "overwrite", None)),
        ({"question_id": "envs", "value": True}, ("value_not_accepted", "envs", None)),
        ({"question_id": "overwrite", "value": {"x": 1}}, ("bad_value", "overwrite", None)),
    ],
)
def test_each_kind_and_constraint_refuses_what_does_not_fit(answer: dict[str, Any], expected: tuple) -> None:
    form = mapped(
        {
            **DEPLOY,
            "name": {"type": "string", "minLength": 2, "maxLength": 10, "pattern": "^[a-z]+$"},
            "envs": {"type": "array", "items": {"enum": ["dev", "staging", "prod"]}, "maxItems": 2},
            "picks": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 2},
        }
    )
    assert problems(form, [answer]) == [expected]


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", "ops@example.com", "ops@"),
        ("uri", "https://example.com/a?b=c", "not a url"),
        ("date", "2026-12-01", "2026-02-30"),
        ("date-time", "2026-12-01T10:30:00+01:00", "2026-12-01T10:30"),
    ],
)
def test_formats_are_checked(fmt: str, good: str, bad: str) -> None:
    form = mapped({"x": {"type": "string", "format": fmt}})
    assert content(form, [{"question_id": "x", "custom_text": good}]) == {"x": good}
    assert problems(form, [{"question_id": "x", "custom_text": bad}]) == [("format_mismatch", "x", fmt)]


def test_a_required_question_unanswered_on_accept_is_refused_and_named() -> None:
    form = mapped(DEPLOY, required=["replicas"])
    refused = validate_answers(form, [{"question_id": "overwrite", "value": True}])

    assert [(p.code.value, p.index, p.question_id) for p in refused] == [("required_unanswered", None, "replicas")]
    assert refused[0].to_wire()["message"] == "“Replicas” needs an answer."
    assert problems(form, []) == [("required_unanswered", "replicas", None)]


def test_problems_are_sentences_naming_the_question_and_the_limit() -> None:
    form = mapped(DEPLOY)
    (problem,) = validate_answers(form, [{"question_id": "replicas", "value": 9}])
    assert problem.to_wire() == {
        "code": "above_maximum",
        "index": 0,
        "question_id": "replicas",
        "option_id": None,
        "limit": 5,
        "message": "“Replicas” must be at most 5.",
    }


# Content -----------------------------------------------------------------------------


def test_content_is_typed_json() -> None:
    form = mapped(DEPLOY)
    sent = content(
        form,
        [
            {"question_id": "overwrite", "value": False},
            {"question_id": "replicas", "value": 3.0},
            {"question_id": "ratio", "value": 0.25},
            {"question_id": "contact", "custom_text": " ops@example.com "},
        ],
    )

    assert sent == {"contact": "ops@example.com", "overwrite": False, "ratio": 0.25, "replicas": 3}
    assert type(sent["overwrite"]) is bool
    assert type(sent["replicas"]) is int


def test_omission_is_the_only_unanswered() -> None:
    form = mapped(DEPLOY)
    assert content(form, [{"question_id": "overwrite"}, {"question_id": "replicas", "value": None}]) == {}
    # False and 0 are answers, not "nothing".
    assert content(form, [{"question_id": "overwrite", "value": False}]) == {"overwrite": False}
    zero = mapped({"n": {"type": "integer"}})
    assert content(zero, [{"question_id": "n", "value": 0}]) == {"n": 0}


def test_a_text_question_takes_its_text_as_value_too() -> None:
    form = mapped({"name": {"type": "string", "maxLength": 5}})
    assert content(form, [{"question_id": "name", "value": " abc "}]) == {"name": "abc"}
    assert problems(form, [{"question_id": "name", "value": 7}]) == [("wrong_type", "name", "text")]
