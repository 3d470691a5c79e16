"""Typed forms through a real agentctl and a scripted agent (docs/decisions/mapping.md#typed-forms).

One test per kind and constraint: the announced question carries it; each answer
that breaks it is refused with ``VALIDATION_ERROR`` (a sentence, the pending left
open); then a fitting answer is accepted and the agent reads typed JSON on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kandev_web.agentctl.stream_client import ValidationFailed
from testing_support.scripted_elicitation import ask, form, run_script

pytestmark = pytest.mark.asyncio


@dataclass(frozen=True)
class Case:
    prop: dict[str, Any]
    #: What the announced question says of it, beside id, prompt and the rest.
    announced: dict[str, Any]
    #: answer entry -> (code, limit, sentence) agentctl refuses it with
    refused: list[tuple[dict[str, Any], tuple[str, Any, str]]]
    accepted: dict[str, Any]
    #: what `content` holds for the accepted answer
    sent: Any
    required: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


CASES = {
    "boolean": Case(
        {"type": "boolean", "title": "Overwrite", "default": False},
        {"kind": "boolean", "default": False},
        [({"value": "yes"}, ("wrong_type", "boolean", "“Overwrite” must be yes or no."))],
        {"value": False},
        False,
    ),
    "integer_range": Case(
        {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5},
        {"kind": "integer", "constraints": {"minimum": 1, "maximum": 5}},
        [
            ({"value": 0}, ("below_minimum", 1, "“Replicas” must be at least 1.")),
            ({"value": 6}, ("above_maximum", 5, "“Replicas” must be at most 5.")),
            ({"value": 2.5}, ("not_an_integer", None, "“Replicas” must be a whole number.")),
            ({"value": "3"}, ("wrong_type", "integer", "“Replicas” must be a whole number.")),
        ],
        {"value": 3.0},
        3,
    ),
    "number": Case(
        {"type": "number", "title": "Ratio", "maximum": 1},
        {"kind": "number", "constraints": {"maximum": 1}},
        [
            ({"value": 1.5}, ("above_maximum", 1, "“Ratio” must be at most 1.")),
            ({"value": True}, ("wrong_type", "number", "“Ratio” must be a number.")),
        ],
        {"value": 0.25},
        0.25,
    ),
    "min_length": Case(
        {"type": "string", "title": "Name", "minLength": 3},
        {"kind": "text", "constraints": {"minLength": 3}},
        [({"custom_text": " ab "}, ("too_short", 3, "“Name” must be at least 3 characters long."))],
        {"custom_text": " abc "},
        "abc",
    ),
    "max_length": Case(
        {"type": "string", "title": "Name", "maxLength": 3},
        {"kind": "text", "constraints": {"maxLength": 3}},
        [({"custom_text": "abcd"}, ("too_long", 3, "“Name” must be at most 3 characters long."))],
        {"custom_text": "abc"},
        "abc",
    ),
    "pattern": Case(
        {"type": "string", "title": "Service", "pattern": "^[a-z-]+$"},
        {"kind": "text", "constraints": {"pattern": "^[a-z-]+$"}},
        [
            (
                {"custom_text": "Web API"},
                ("pattern_mismatch", "^[a-z-]+$", "“Service” does not match the form the agent asked for (^[a-z-]+$)."),
            )
        ],
        {"custom_text": "web-api"},
        "web-api",
    ),
    "email": Case(
        {"type": "string", "title": "Contact", "format": "email"},
        {"kind": "text", "constraints": {"format": "email"}},
        [({"custom_text": "ops at example"}, ("format_mismatch", "email", "“Contact” must be an e-mail address."))],
        {"custom_text": "ops@example.com"},
        "ops@example.com",
    ),
    "uri": Case(
        {"type": "string", "title": "Docs", "format": "uri"},
        {"kind": "text", "constraints": {"format": "uri"}},
        [({"custom_text": "the wiki"}, ("format_mismatch", "uri", "“Docs” must be a URL."))],
        {"custom_text": "https://wiki.example.com/runbook"},
        "https://wiki.example.com/runbook",
    ),
    "date": Case(
        {"type": "string", "title": "Day", "format": "date"},
        {"kind": "text", "constraints": {"format": "date"}},
        [({"custom_text": "2026-02-30"}, ("format_mismatch", "date", "“Day” must be a date."))],
        {"custom_text": "2026-12-24"},
        "2026-12-24",
    ),
    "date_time": Case(
        {"type": "string", "title": "Window", "format": "date-time"},
        {"kind": "text", "constraints": {"format": "date-time"}},
        [
            (
                {"custom_text": "2026-12-24T10:30"},
                ("format_mismatch", "date-time", "“Window” must be a date and time with its time zone."),
            )
        ],
        {"custom_text": "2026-12-24T10:30:00+01:00"},
        "2026-12-24T10:30:00+01:00",
    ),
    "item_counts": Case(
        {"type": "array", "title": "Regions", "items": {"enum": ["eu", "us", "ap"]}, "minItems": 2, "maxItems": 2},
        {"kind": "multi", "constraints": {"minItems": 2, "maxItems": 2}},
        [
            ({"selected_options": ["eu"]}, ("too_few_items", 2, "Choose at least 2 options for “Regions”.")),
            (
                {"selected_options": ["eu", "us", "ap"]},
                ("too_many_items", 2, "Choose at most 2 options for “Regions”."),
            ),
        ],
        {"selected_options": ["ap", "eu"]},
        ["eu", "ap"],
    ),
    "required": Case(
        {"type": "string", "title": "Owner"},
        {"kind": "text", "required": True},
        [({}, ("required_unanswered", None, "“Owner” needs an answer."))],
        {"custom_text": "ops"},
        "ops",
        required=True,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_each_kind_and_constraint_over_a_real_agentctl(start_agentctl, connect, scripted, name: str) -> None:
    case = CASES[name]
    schema_extra = {"required": ["field"]} if case.required else {}
    params = form({"field": case.prop}, message="Settings")
    params["requestedSchema"].update(schema_extra)
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    (question,) = requested["questions"]
    assert {key: question[key] for key in case.announced} == case.announced

    for entry, (code, limit, sentence) in case.refused:
        answers = [{"question_id": "field", **entry}] if entry else []
        payload = {"pending_id": requested["pending_id"], "answers": answers, "rejected": False, "reject_reason": ""}
        with pytest.raises(ValidationFailed) as refused:
            await run.client.request("agent.elicitations.respond", payload)
        (problem,) = refused.value.details["problems"]
        assert (problem["code"], problem.get("limit"), problem["message"]) == (code, limit, sentence)
        # The pending stays open, and nothing reached the agent.
        assert await run.client.request("agent.elicitations.list") == {"pending": [requested]}
        assert run.echoed() == []

    answered = await run.respond(requested["pending_id"], [{"question_id": "field", **case.accepted}])
    await run.finished()
    assert answered == {"success": True, "action": "accept", "content": {"field": case.sent}}
    (received,) = run.echoed()
    # Typed on the wire: what the agent read is JSON of the question's type.
    assert received["result"] == {"action": "accept", "content": {"field": case.sent}}
    assert type(received["result"]["content"]["field"]) is type(case.sent)


async def test_a_typed_form_is_announced_with_its_heading_and_omission_is_the_only_unanswered(
    start_agentctl, connect, scripted
) -> None:
    params = form(
        {"overwrite": {"type": "boolean"}, "count": {"type": "integer"}, "note": {"type": "string"}},
        message="Settings",
    )
    params["requestedSchema"].update(title="Deployment", description="How it rolls out.")
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    assert (requested["form_title"], requested["form_description"]) == ("Deployment", "How it rolls out.")

    await run.respond(
        requested["pending_id"],
        [{"question_id": "overwrite", "value": False}, {"question_id": "count", "value": 0}],
    )
    await run.finished()
    (received,) = run.echoed()
    assert received["result"] == {"action": "accept", "content": {"count": 0, "overwrite": False}}
