"""Codex's `request_user_input` forms (`docs/decisions/mapping.md#codex-forms`).

The requests are codex-acp 2.6.0's own, captured (`tests/fixtures/codex-acp-2.6.0/`);
what the model reads of our answers is folded back by `testing_support.codex_foldback`,
which is checked against the recorded fold-back first.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import (
    Decline,
    DeclineReason,
    MappedForm,
    Problem,
    ProblemCode,
    build_response,
    cancel_response,
    map_elicitation,
    normalise,
    reported_response,
    validate_answers,
)
from testing_support.codex_foldback import fold_back, recorded_output

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "codex-acp-2.6.0"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture
def request_params() -> dict[str, Any]:
    return load("request_user_input_elicitation.json")


@pytest.fixture
def form(request_params: dict[str, Any]) -> MappedForm:
    mapped = map_elicitation(request_params)
    assert isinstance(mapped, MappedForm)
    return mapped


def respond(form: MappedForm, answers: list[dict[str, Any]]) -> dict[str, Any]:
    assert validate_answers(form, answers) == []
    return build_response(form, normalise(form, answers), rejected=False)


# --- the mapping -------------------------------------------------------------------


def test_the_note_is_the_questions_companion_not_a_question_of_its_own(form: MappedForm) -> None:
    """Old code: two questions, the note a free-text one prompted "Codex needs your input to continue."."""
    assert [question.id for question in form.questions] == ["colour"]
    (colour,) = form.questions
    assert colour.companion_key == "colour_note"
    assert colour.accepts_text
    assert colour.note
    assert "colour_note" not in json.dumps(form.wire_questions())


def test_the_question_is_asked_by_its_title_under_its_description(form: MappedForm) -> None:
    (colour,) = form.questions
    assert colour.prompt == "Which colour should I use?"
    assert colour.title == "Colour"


def test_none_of_the_above_is_surfaced_as_the_option_that_says_the_note_is_the_answer(form: MappedForm) -> None:
    (colour,) = form.questions
    assert [option.id for option in colour.options] == ["Red", "Blue", "None of the above"]
    assert colour.other_option == "None of the above"
    assert colour.kind == "single"
    assert colour.required
    assert not colour.sensitive


def test_the_announcement_says_so(form: MappedForm) -> None:
    (wire,) = form.wire_questions()
    assert wire == {
        "id": "colour",
        "title": "Colour",
        "prompt": "Which colour should I use?",
        "kind": "single",
        "accepts_text": True,
        "sensitive": False,
        "options": [
            {"id": "Red", "label": "Red", "description": "The warm one."},
            {"id": "Blue", "label": "Blue", "description": "The cool one."},
            {
                "id": "None of the above",
                "label": "None of the above",
                "description": "Provide a different answer in the note field.",
            },
        ],
        "required": True,
        "note": True,
        "other_option": "None of the above",
    }
    assert form.delivery is None


def test_the_async_variant_is_marked_and_asked_like_any_form() -> None:
    form = map_elicitation(load("request_user_input_async_elicitation.json"))
    assert isinstance(form, MappedForm)
    assert form.delivery == "async"
    assert form.tool_call_id is None
    (question,) = form.questions
    assert question.id == "question_0"
    assert question.companion_key == "question_0_note"
    assert question.prompt == "Pick_a_colour"
    assert question.title is None  # Codex sends no header for an async question
    assert question.other_option == "None of the above"
    assert not question.required


def test_delivery_is_read_from_codexs_marker_only(request_params: dict[str, Any]) -> None:
    for meta in ({"delivery": "async"}, {"codex": {"delivery": "inline"}}, {"codex": "async"}):
        params = {**request_params, "_meta": meta}
        mapped = map_elicitation(params)
        assert isinstance(mapped, MappedForm)
        assert mapped.delivery is None


def test_a_secret_question_is_a_credential_whatever_its_words(request_params: dict[str, Any]) -> None:
    params = copy.deepcopy(request_params)
    params["requestedSchema"]["properties"]["colour"]["_meta"]["codex"]["isSecret"] = True
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    (colour,) = form.questions
    assert colour.sensitive
    result = respond(form, [{"question_id": "colour", "selected_options": ["Red"], "custom_text": "hunter2"}])
    assert result["content"] == {"colour": "Red", "colour_note": "hunter2"}  # the agent gets it
    reported = reported_response(form, result)  # the web app never does
    assert reported["content"] == {}
    assert reported["withheld"] == ["colour"]
    assert "hunter2" not in json.dumps(reported)


def test_a_secret_note_makes_its_question_a_credential(request_params: dict[str, Any]) -> None:
    params = copy.deepcopy(request_params)
    params["requestedSchema"]["properties"]["colour_note"]["_meta"]["codex"]["isSecret"] = True
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert form.questions[0].sensitive


def test_a_secret_free_text_question_is_a_credential() -> None:
    params = {
        "sessionId": "s",
        "mode": "form",
        "message": "Codex needs your input to continue.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "token": {
                    "type": "string",
                    "title": "Paste the deploy credential",
                    "description": "Deploy",
                    "_meta": {"codex": {"isOther": False, "isSecret": True}},
                }
            },
            "required": ["token"],
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    (question,) = form.questions
    assert (question.kind, question.sensitive, question.title, question.prompt) == (
        "text",
        True,
        "Deploy",
        "Paste the deploy credential",
    )
    assert question.default is None


def test_a_schema_marked_codex_swaps_every_property() -> None:
    params = {
        "sessionId": "s",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "_meta": {"codex": {}},
            "properties": {"name": {"type": "string", "title": "What is it called?", "description": "Name"}},
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert (form.questions[0].title, form.questions[0].prompt) == ("Name", "What is it called?")


def test_an_unmarked_form_keeps_title_as_header_and_description_as_prompt() -> None:
    """An MCP server's form forwarded through Codex carries no `_meta.codex`: it maps as it always did."""
    params = {
        "sessionId": "s",
        "mode": "form",
        "_meta": {"codex": {"autoResolutionMs": None}},
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name", "description": "What is it called?"}},
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert (form.questions[0].title, form.questions[0].prompt) == ("Name", "What is it called?")


def test_a_note_naming_no_question_with_options_is_neither_companion_nor_question() -> None:
    note = {"type": "string", "title": "Note", "_meta": {"codex": {"role": "user_note", "questionId": "name"}}}
    params = {
        "sessionId": "s",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "What is it called?", "_meta": {"codex": {}}},
                "name_note": note,
                "ghost_note": {**note, "_meta": {"codex": {"role": "user_note", "questionId": "ghost"}}},
                "bad_note": {**note, "_meta": {"codex": {"role": "user_note", "questionId": 3}}},
            },
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert [(q.id, q.companion_key, q.note) for q in form.questions] == [("name", None, False)]


def test_a_note_alone_is_no_form() -> None:
    params = {
        "sessionId": "s",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "x_note": {"type": "string", "_meta": {"codex": {"role": "user_note", "questionId": "x"}}},
            },
        },
    }
    assert map_elicitation(params) == Decline(DeclineReason.NO_QUESTIONS)


def test_is_other_without_a_note_surfaces_no_other_option(request_params: dict[str, Any]) -> None:
    """With no note to type in, "None of the above" is only an option."""
    params = copy.deepcopy(request_params)
    del params["requestedSchema"]["properties"]["colour_note"]
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    (colour,) = form.questions
    assert (colour.companion_key, colour.note, colour.other_option, colour.accepts_text) == (None, False, None, False)


# --- the answer, and what the model reads of it ---------------------------------------


def test_the_fold_back_model_reproduces_the_recorded_fold_back(request_params: dict[str, Any]) -> None:
    recorded = load("request_user_input_foldback.json")
    sent = {"action": "accept", "content": {"colour": "Red", "colour_note": "because it is warm"}}
    assert fold_back(request_params, sent) == recorded_output(recorded)


def test_pick_and_note_both_go_on_the_wire(request_params: dict[str, Any], form: MappedForm) -> None:
    """Old code sent the note alone (AC-12i), and the model lost the pick."""
    result = respond(
        form, [{"question_id": "colour", "selected_options": ["Red"], "custom_text": " because it is warm "}]
    )
    assert result == {"action": "accept", "content": {"colour": "Red", "colour_note": "because it is warm"}}
    assert fold_back(request_params, result) == recorded_output(load("request_user_input_foldback.json"))


def test_a_note_with_no_pick_goes_with_none_of_the_above(request_params: dict[str, Any], form: MappedForm) -> None:
    """The required question is answered, and the model reads that the note is the answer."""
    result = respond(form, [{"question_id": "colour", "custom_text": "green"}])
    assert result["content"] == {"colour": "None of the above", "colour_note": "green"}
    assert fold_back(request_params, result) == {
        "answers": {"colour": {"answers": ["None of the above", "user_note: green"]}}
    }


def test_none_of_the_above_picked_with_a_note(request_params: dict[str, Any], form: MappedForm) -> None:
    result = respond(
        form, [{"question_id": "colour", "selected_options": ["None of the above"], "custom_text": "green"}]
    )
    assert fold_back(request_params, result) == {
        "answers": {"colour": {"answers": ["None of the above", "user_note: green"]}}
    }


def test_a_pick_alone(request_params: dict[str, Any], form: MappedForm) -> None:
    result = respond(form, [{"question_id": "colour", "selected_options": ["Blue"], "custom_text": "   "}])
    assert result["content"] == {"colour": "Blue"}
    assert fold_back(request_params, result) == {"answers": {"colour": {"answers": ["Blue"]}}}


@pytest.mark.parametrize("result", [build_response.__name__, cancel_response.__name__])
def test_decline_and_cancel_tell_the_model_nothing(
    request_params: dict[str, Any], form: MappedForm, result: str
) -> None:
    response = build_response(form, None, rejected=True) if result == "build_response" else cancel_response()
    assert response == {"action": "decline" if result == "build_response" else "cancel"}
    assert fold_back(request_params, response) == {"answers": {}}


def test_required_is_honoured(form: MappedForm) -> None:
    assert validate_answers(form, []) == [
        Problem(ProblemCode.REQUIRED_UNANSWERED, None, "colour", label="Colour"),
    ]
    assert validate_answers(form, [{"question_id": "colour", "custom_text": "  "}])[0].code == (
        ProblemCode.REQUIRED_UNANSWERED
    )


def test_a_note_alone_without_none_of_the_above_is_sent_alone(request_params: dict[str, Any]) -> None:
    params = copy.deepcopy(request_params)
    colour = params["requestedSchema"]["properties"]["colour"]
    colour["oneOf"] = colour["oneOf"][:2]
    params["requestedSchema"]["required"] = []
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert form.questions[0].other_option is None
    result = respond(form, [{"question_id": "colour", "custom_text": "green"}])
    assert result["content"] == {"colour_note": "green"}
    assert fold_back(params, result) == {"answers": {"colour": {"answers": ["user_note: green"]}}}


def test_without_none_of_the_above_a_required_question_needs_a_pick(request_params: dict[str, Any]) -> None:
    params = copy.deepcopy(request_params)
    colour = params["requestedSchema"]["properties"]["colour"]
    colour["oneOf"] = colour["oneOf"][:2]
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    problems = validate_answers(form, [{"question_id": "colour", "custom_text": "green"}])
    assert [problem.code for problem in problems] == [ProblemCode.REQUIRED_UNANSWERED]


def test_a_multi_select_keeps_its_picks_beside_the_note() -> None:
    params = {
        "sessionId": "s",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "envs": {
                    "type": "array",
                    "title": "Where?",
                    "items": {"anyOf": [{"const": "dev"}, {"const": "prod"}]},
                    "maxItems": 1,
                    "_meta": {"codex": {"isOther": True}},
                },
                "envs_note": {"type": "string", "_meta": {"codex": {"role": "user_note", "questionId": "envs"}}},
            },
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    result = respond(form, [{"question_id": "envs", "selected_options": ["prod"], "custom_text": "only eu"}])
    assert result["content"] == {"envs": ["prod"], "envs_note": "only eu"}
    # The picks are sent, so their count binds them even with a note.
    both = [{"question_id": "envs", "selected_options": ["dev", "prod"], "custom_text": "x"}]
    problems = validate_answers(form, both)
    assert [problem.code for problem in problems] == [ProblemCode.TOO_MANY_ITEMS]


def test_the_claude_bridges_companion_still_replaces_the_pick() -> None:
    """AC-12i stays the rule for the Claude bridge's companions."""
    params = {
        "sessionId": "s",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {"type": "string", "oneOf": [{"const": "Red"}, {"const": "Blue"}]},
                "question_0_custom": {
                    "type": "string",
                    "_meta": {"_askUserQuestionCustomAnswer": {"questionId": "question_0"}},
                },
            },
        },
    }
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assert not form.questions[0].note
    result = respond(form, [{"question_id": "question_0", "selected_options": ["Red"], "custom_text": "green"}])
    assert result["content"] == {"question_0_custom": "green"}
    assert "note" not in form.wire_questions()[0]
    assert "other_option" not in form.wire_questions()[0]
