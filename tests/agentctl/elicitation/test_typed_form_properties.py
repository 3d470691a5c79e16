"""Typed forms over open-ended schemas, with a JSON Schema validator as the oracle.

Schemas are drawn from the whole vocabulary ACP and MCP forms use (strings with
lengths, formats and patterns, enums with and without titles, multi-selects with
item counts, booleans, numbers, integers, defaults, `required`), plus shapes the
mapping must refuse. For each: mapping never raises; every default the mapping
keeps is valid for its property under `jsonschema`; and every `content` agentctl
builds from answers it accepts is valid for the schema it came from.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import (
    Decline,
    MappedForm,
    build_response,
    map_elicitation,
    normalise,
    validate_answers,
)

FORMAT_CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
FORMATS = ["email", "uri", "date", "date-time", "hostname"]

keys = st.sampled_from(["a", "b", "question_0", "question_10", "n", "ok", "email", "when"])
counts = st.integers(0, 6)
numbers = st.integers(-10, 10) | st.floats(-10, 10, allow_nan=False, allow_infinity=False)
consts = st.lists(st.sampled_from(["r", "g", "b", "dev", "prod"]), min_size=1, max_size=4, unique=True)
patterns = st.sampled_from(["^[a-z]+$", "\\d", "^x", "^(a|b)*$", "(a)\\1", "(?=a)a", "[", "^.{2,4}$"])
formats = st.sampled_from(FORMATS)
text_defaults = st.sampled_from(["abc", "x", "a@b.co", "https://a.b/c", "2026-12-01", "2026-12-01T10:30:00Z", " x", ""])


def _with(base: dict[str, Any], optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: st.just(v) for k, v in base.items()}, optional=optional)


strings = _with(
    {"type": "string"},
    {
        "title": st.sampled_from(["Name", "Email"]),
        "description": st.just("Type it"),
        "minLength": counts,
        "maxLength": counts,
        "pattern": patterns,
        "format": formats,
        "default": text_defaults | numbers,
    },
)
single_selects = consts.flatmap(
    lambda cs: st.one_of(
        _with(
            {"type": "string", "oneOf": [{"const": c, "title": c.upper()} for c in cs]},
            {"default": st.sampled_from([*cs, "nope"])},
        ),
        _with(
            {"type": "string", "enum": cs},
            {"enumNames": st.just([c.title() for c in cs]), "default": st.sampled_from([*cs, "nope"])},
        ),
    )
)
multi_selects = consts.flatmap(
    lambda cs: st.sampled_from([{"enum": cs}, {"anyOf": [{"const": c, "title": c} for c in cs]}]).flatmap(
        lambda items: _with(
            {"type": "array", "items": items},
            {
                "minItems": counts,
                "maxItems": counts,
                "default": st.lists(st.sampled_from([*cs, "nope"]), max_size=3),
            },
        )
    )
)
booleans = _with({"type": "boolean"}, {"title": st.just("Overwrite?"), "default": st.booleans() | numbers})
number_props = st.sampled_from(["number", "integer"]).flatmap(
    lambda kind: _with(
        {"type": kind},
        {"minimum": numbers, "maximum": numbers, "default": numbers | st.booleans() | st.just("3")},
    )
)
unrecognised = st.sampled_from(
    [
        {"type": "object", "properties": {"x": {"type": "string"}}},
        {"type": "null"},
        {"type": "array", "items": {"type": "array"}},
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "integer", "enum": [1, 2]},
    ]
)
properties = st.one_of(
    strings, strings, single_selects, multi_selects, booleans, number_props, number_props, unrecognised
)


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(keys, properties, min_size=1, max_size=3))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = draw(st.lists(st.sampled_from([*props, *props, "absent"]), unique=True, max_size=2))
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["title"] = "Deployment"
    return schema


def params(schema: dict[str, Any]) -> dict[str, Any]:
    return {"mode": "form", "sessionId": "sess-1", "message": "Settings", "requestedSchema": schema}


def _valid(instance: object, schema: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema, format_checker=FORMAT_CHECKER).is_valid(instance)


def test_the_oracle_checks_every_format_the_forms_use() -> None:
    """jsonschema skips a format whose checker is not installed: the oracle would pass anything there."""
    assert set(FORMATS) <= set(FORMAT_CHECKER.checkers)
    assert not FORMAT_CHECKER.conforms("not a date", "date-time")
    assert not FORMAT_CHECKER.conforms("no spaces allowed.example", "hostname")
    assert not FORMAT_CHECKER.conforms("no scheme", "uri")


@given(schemas())
def test_schemas_over_the_vocabulary_map_or_decline_without_crashing(schema: dict[str, Any]) -> None:
    form = map_elicitation(params(schema))
    assert isinstance(form, MappedForm | Decline)
    if isinstance(form, MappedForm):
        wire = json.loads(json.dumps(form.wire_questions(), allow_nan=False))
        assert {q["id"] for q in wire} <= set(schema["properties"])
        assert {q["id"] for q in wire if q.get("required")} == set(schema.get("required", []))


@given(schemas())
def test_every_default_the_mapping_keeps_is_valid_for_its_property(schema: dict[str, Any]) -> None:
    form = map_elicitation(params(schema))
    assume(isinstance(form, MappedForm))
    assert isinstance(form, MappedForm)
    for question in form.wire_questions():
        if "default" in question:
            assert _valid(question["default"], schema["properties"][question["id"]]), question


def _answers(form: MappedForm) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Answers an operator (or a stale browser) might send: right, wrong, absent."""

    def one(question_id: str) -> st.SearchStrategy[dict[str, Any]]:
        question = form.question(question_id)
        assert question is not None
        option_ids = [o.id for o in question.options]
        if question.kind in ("boolean", "number", "integer"):
            value = {"boolean": st.booleans(), "number": numbers, "integer": st.integers(-12, 12)}[question.kind]
            return st.fixed_dictionaries({"question_id": st.just(question_id), "value": value | numbers})
        if question.kind == "text":
            # Lengths around the limits, and strings that fit or miss each format.
            texts = text_defaults | st.text(alphabet="abc", min_size=1, max_size=8)
            return st.fixed_dictionaries({"question_id": st.just(question_id), "custom_text": texts})
        return st.fixed_dictionaries(
            {"question_id": st.just(question_id)},
            optional={
                "selected_options": st.lists(st.sampled_from([*option_ids, "nope"]), max_size=4),
                "custom_text": st.sampled_from(["", "typed"]),
            },
        )

    # Each question mostly answered, sometimes left out; now and then one answered twice.
    def maybe(entry: st.SearchStrategy[dict[str, Any]], in_ten: int) -> st.SearchStrategy[dict[str, Any] | None]:
        keep = [True] * in_ten + [False] * (10 - in_ten)
        return st.sampled_from(keep).flatmap(lambda kept: entry if kept else st.none())

    per_question = [maybe(one(q.id), 8) for q in form.questions]
    return st.tuples(*per_question, maybe(one(form.questions[0].id), 1)).map(
        lambda entries: [entry for entry in entries if entry is not None]
    )


@pytest.mark.slow
@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow], max_examples=500)
@given(st.data())
def test_every_content_agentctl_builds_is_valid_for_the_schema_it_came_from(data: st.DataObject) -> None:
    schema = data.draw(schemas())
    form = map_elicitation(params(schema))
    assume(isinstance(form, MappedForm))
    assert isinstance(form, MappedForm)
    payload = data.draw(_answers(form))
    assume(not validate_answers(form, payload))

    response = build_response(form, normalise(form, payload), rejected=False)

    content = response["content"]
    assert _valid(content, schema), (content, schema)
    # Typed on the wire: booleans as booleans, integers as integers.
    for question in form.questions:
        if question.id in content:
            value = content[question.id]
            if question.kind == "boolean":
                assert type(value) is bool
            elif question.kind == "integer":
                assert type(value) is int
            elif question.kind == "number":
                assert type(value) in (int, float)


@given(schemas())
def test_the_pre_filled_defaults_sent_unchanged_are_accepted_and_valid(schema: dict[str, Any]) -> None:
    """Pre-filling every control with its default and pressing Submit is never refused."""
    form = map_elicitation(params(schema))
    assume(isinstance(form, MappedForm))
    assert isinstance(form, MappedForm)
    answers = []
    for question in form.questions:
        if question.default is None:
            continue
        if question.kind in ("single", "multi"):
            chosen = question.default if isinstance(question.default, tuple) else (question.default,)
            answers.append({"question_id": question.id, "selected_options": list(chosen)})
        elif question.kind == "text":
            answers.append({"question_id": question.id, "custom_text": question.default})
        else:
            answers.append({"question_id": question.id, "value": question.default})
    problems = validate_answers(form, answers)
    # Only a required question without a default can still be missing.
    assert {p.code.value for p in problems} <= {"required_unanswered"}
    if not problems:
        assert _valid(build_response(form, normalise(form, answers), rejected=False)["content"], schema)
