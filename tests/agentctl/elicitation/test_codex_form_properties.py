"""Properties of Codex's forms over any form codex-acp could build (`docs/decisions/mapping.md#codex-forms`).

Schemas are drawn as codex-acp 2.6.0's `buildUserInputSchema` writes them: a `oneOf`
string per question, titled by the question and described by its header, with an
`isOther` question getting "None of the above" and a `<id>_note` companion; answers
are any the operator could give; what the model reads is folded back by
`testing_support.codex_foldback`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import MappedForm, build_response, map_elicitation, normalise, validate_answers
from testing_support.codex_foldback import fold_back

OTHER = "None of the above"

ids = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)  # never ends in "_note"
labels = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and s != OTHER
)
notes = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)


@st.composite
def codex_questions(draw: st.DrawFn) -> list[dict[str, Any]]:
    keys = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    return [
        {
            "id": key,
            "question": draw(labels),
            "header": draw(st.none() | labels),
            "options": draw(st.lists(labels, min_size=1, max_size=4, unique=True)),
            "isOther": draw(st.booleans()),
            "isSecret": draw(st.booleans()),
            "required": draw(st.booleans()),
        }
        for key in keys
    ]


def codex_params(questions: list[dict[str, Any]], *, delivery: bool = False) -> dict[str, Any]:
    """The `elicitation/create` params codex-acp 2.6.0 sends for these questions."""
    properties: dict[str, Any] = {}
    for q in questions:
        oneof = [{"const": label, "title": label} for label in q["options"]]
        if q["isOther"]:
            note_hint = "Provide a different answer in the note field."
            oneof.append({"const": OTHER, "title": OTHER, "description": note_hint})
        properties[q["id"]] = {
            "title": q["question"],
            **({"description": q["header"]} if q["header"] else {}),
            "_meta": {"codex": {"isOther": q["isOther"], "isSecret": q["isSecret"]}},
            "type": "string",
            "oneOf": oneof,
        }
        if q["isOther"]:
            properties[f"{q['id']}_note"] = {
                "type": "string",
                "title": "Additional answer or note",
                "_meta": {"codex": {"questionId": q["id"], "role": "user_note", "isSecret": q["isSecret"]}},
            }
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [q["id"] for q in questions if q["required"]]
    if required:
        schema["required"] = required
    params: dict[str, Any] = {"sessionId": "s", "mode": "form", "message": "Codex needs your input to continue."}
    if delivery:
        params["_meta"] = {"codex": {"delivery": "async"}}
    else:
        params["toolCallId"] = "call_1"
    return {**params, "requestedSchema": schema}


@given(codex_questions(), st.booleans())
def test_every_companion_is_attached_and_none_is_a_question(questions: list[dict[str, Any]], delivery: bool) -> None:
    form = map_elicitation(codex_params(questions, delivery=delivery))
    assert isinstance(form, MappedForm)
    assert {q.id for q in form.questions} == {q["id"] for q in questions}
    assert not any(q.id.endswith("_note") for q in form.questions)
    assert form.delivery == ("async" if delivery else None)
    for drawn in questions:
        mapped = form.question(drawn["id"])
        assert mapped is not None
        assert mapped.prompt == drawn["question"]
        assert mapped.title == drawn["header"]
        assert mapped.required == drawn["required"]
        if drawn["isSecret"]:
            assert mapped.sensitive
        if drawn["isOther"]:
            assert (mapped.companion_key, mapped.note, mapped.other_option) == (f"{drawn['id']}_note", True, OTHER)
            assert mapped.accepts_text
        else:
            assert (mapped.companion_key, mapped.note, mapped.other_option, mapped.accepts_text) == (
                None,
                False,
                None,
                False,
            )


@st.composite
def answered(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions = draw(codex_questions())
    answers = []
    for q in questions:
        if not draw(st.booleans()):
            continue
        entry: dict[str, Any] = {"question_id": q["id"]}
        choices = q["options"] + ([OTHER] if q["isOther"] else [])
        pick = draw(st.none() | st.sampled_from(choices))
        if pick is not None:
            entry["selected_options"] = [pick]
        if q["isOther"]:
            entry["custom_text"] = draw(notes)
        answers.append(entry)
    return questions, answers


@given(answered())
def test_any_valid_answer_reaches_the_model_as_the_operators_pick_and_note(
    drawn: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    questions, answers = drawn
    params = codex_params(questions)
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    assume(validate_answers(form, answers) == [])
    response = build_response(form, normalise(form, answers), rejected=False)

    expected: dict[str, Any] = {}
    for entry in answers:
        note = entry.get("custom_text", "").strip()
        picks = entry.get("selected_options", [])
        if note and not picks:
            picks = [OTHER]  # the note is the answer: "None of the above" says so
        said = [*picks, *([f"user_note: {note}"] if note else [])]
        if said:
            expected[entry["question_id"]] = {"answers": said}
    assert fold_back(params, response) == {"answers": expected}


@given(codex_questions())
def test_a_required_question_is_answered_by_a_note_alone_only_through_none_of_the_above(
    questions: list[dict[str, Any]],
) -> None:
    form = map_elicitation(codex_params(questions))
    assert isinstance(form, MappedForm)
    answers = [{"question_id": q["id"], "custom_text": "mine"} for q in questions if q["isOther"]]
    answers += [{"question_id": q["id"], "selected_options": [q["options"][0]]} for q in questions if not q["isOther"]]
    assert validate_answers(form, answers) == []
    content = build_response(form, normalise(form, answers), rejected=False)["content"]
    assert isinstance(content, dict)
    for q in questions:
        if q["isOther"]:
            assert content[q["id"]] == OTHER
            assert content[f"{q['id']}_note"] == "mine"
