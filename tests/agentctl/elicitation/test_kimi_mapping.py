"""Kimi Code's AskUserQuestion forms (tests/fixtures/kimi-code-2.1.0/), mapped and answered by the pure half.

Kimi 2.1.0 sends every question of one AskUserQuestion call in one form:
properties ``q0``, ``q1``… in the tool's order, each titled by its header, every
one required, no free-text companion, and the questions joined one a line as
the ``message`` (docs/decisions/agents.md#kimi-code). Each question is prompted
by its own line; the model reads the answers by question text, multi-select
joined in declared order (tests/kimi proves that against the real Kimi).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import MappedForm, build_response, map_elicitation, normalise

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "kimi-code-2.1.0" / "ask_user_question_elicitation.json"


def kimi_request(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The params Kimi 2.1.0's ``questionRequestToElicitationParams`` builds for these AskUserQuestion questions."""
    properties: dict[str, Any] = {}
    for index, question in enumerate(questions):
        options = [{"const": o, "title": o, "description": f"{o}."} for o in question["options"]]
        title = question.get("header") or question["question"]
        properties[f"q{index}"] = (
            {"type": "array", "title": title, "minItems": 1, "items": {"anyOf": options}}
            if question.get("multi_select")
            else {"type": "string", "title": title, "oneOf": options}
        )
    return {
        "sessionId": "session_1",
        "toolCallId": "0:call_fake_1",
        "mode": "form",
        "message": "\n".join(q["question"] for q in questions),
        "requestedSchema": {"type": "object", "properties": properties, "required": list(properties)},
    }


def mapped(params: dict[str, Any]) -> MappedForm:
    form = map_elicitation(params)
    assert isinstance(form, MappedForm), form
    return form


def test_the_captured_frame_is_one_required_question_titled_by_its_header_without_a_companion() -> None:
    form = mapped(json.loads(FIXTURE.read_text()))
    assert form.tool_call_id == "0:call_fake_1_c9c0bedd"
    (question,) = form.questions
    assert (question.id, question.title, question.prompt, question.kind) == ("q0", "Colour", "Pick a colour", "single")
    assert question.required
    assert question.companion_key is None
    assert not question.accepts_text
    assert [(o.id, o.label, o.description) for o in question.options] == [
        ("Red", "Red", "The warm one."),
        ("Blue", "Blue", "The cool one."),
    ]
    answers = normalise(form, [{"question_id": "q0", "selected_options": ["Red"]}])
    assert build_response(form, answers, False) == {"action": "accept", "content": {"q0": "Red"}}
    assert build_response(form, None, True) == {"action": "decline"}


def test_each_question_of_a_kimi_form_is_prompted_by_its_own_line() -> None:
    form = mapped(
        kimi_request(
            [
                {"question": "Pick a colour", "header": "Colour", "options": ["Red", "Blue"]},
                {"question": "Which clusters?", "header": "Envs", "options": ["Red", "Green"], "multi_select": True},
            ]
        )
    )
    assert form.message == "Pick a colour\nWhich clusters?"
    assert [(q.id, q.title, q.prompt, q.kind, q.required) for q in form.questions] == [
        ("q0", "Colour", "Pick a colour", "single", True),
        ("q1", "Envs", "Which clusters?", "multi", True),
    ]
    answers = normalise(
        form,
        [
            {"question_id": "q1", "selected_options": ["Green", "Red"]},
            {"question_id": "q0", "selected_options": ["Blue"]},
        ],
    )
    assert build_response(form, answers, False) == {
        "action": "accept",
        "content": {"q0": "Blue", "q1": ["Red", "Green"]},
    }


def two_questions(message: str, keys: tuple[str, str] = ("q0", "q1"), **extra: Any) -> dict[str, Any]:
    prop = {"type": "string", "oneOf": [{"const": "a", "title": "a"}], **extra}
    return {
        "sessionId": "s",
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {keys[0]: prop, keys[1]: dict(prop)}},
    }


def test_only_kimis_exact_shape_is_split() -> None:
    # Other keys, keys out of order, another number of lines, a blank line: the whole message, as before.
    assert {q.prompt for q in mapped(two_questions("One?\nTwo?", ("a", "b"))).questions} == {"One?\nTwo?"}
    assert {q.prompt for q in mapped(two_questions("One?\nTwo?", ("q1", "q0"))).questions} == {"One?\nTwo?"}
    assert {q.prompt for q in mapped(two_questions("One?\nTwo?\nThree?")).questions} == {"One?\nTwo?\nThree?"}
    assert {q.prompt for q in mapped(two_questions("One?\n ")).questions} == {"One?\n "}
    # A question's own description still comes first in the prompt chain.
    assert {q.prompt for q in mapped(two_questions("One?\nTwo?", description="Own")).questions} == {"Own"}


lines = st.text(alphabet=st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), min_size=1).filter(
    str.strip
)


@given(st.lists(lines, min_size=2, max_size=12))
def test_any_kimi_form_prompts_question_n_with_line_n(questions: list[str]) -> None:
    params = kimi_request([{"question": text, "header": f"H{i}", "options": ["x"]} for i, text in enumerate(questions)])
    form = map_elicitation(params)
    if isinstance(form, MappedForm):  # a question text the timeline cannot store declines the whole form
        assert {q.id: q.prompt for q in form.questions} == {f"q{i}": text for i, text in enumerate(questions)}
        assert form.message == "\n".join(questions)
