"""Kandev's validation of ask_user_question_kandev bundles and answers, messages verbatim."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.clarifications.validation import (
    Answer,
    InvalidBundle,
    dedup_key,
    parse_answers,
    parse_bundle,
    tool_result,
)


def option(label="A"):
    return {"label": label, "description": f"{label} it is"}


def question(**fields):
    return {"prompt": "Which?", "options": [option("A"), option("B")], **fields}


def errors(questions):
    with pytest.raises(InvalidBundle) as raised:
        parse_bundle(questions)
    return raised.value.errors


def test_bundle_limits_and_messages():
    assert errors([]) == ["questions must contain at least 1 question"]
    assert errors([question()] * 5)[0] == "questions must contain at most 4 questions"
    assert errors([question(options=[option()])]) == ["question 1 must have at least 2 options"]
    assert errors([question(options=[option(str(i)) for i in range(7)])]) == ["question 1 must have at most 6 options"]
    assert errors([question(prompt="  ")]) == ["question 1 is missing required 'prompt'"]
    assert errors([question(id="x"), question(id="x")]) == ["duplicate question id 'x'"]
    assert errors([question(title="Thirteen chars")]) == ["question 1 title must be at most 12 characters"]
    assert errors([question(options=[option(), {"label": "B"}])]) == [
        "question 1 option 2 is missing required 'description'"
    ]
    assert errors("nope") == ["questions must contain at least 1 question"]


def test_missing_ids_are_filled_in():
    bundle = parse_bundle([question(), question(id="db")])
    assert [q["id"] for q in bundle] == ["q1", "db"]
    assert [o["id"] for o in bundle[1]["options"]] == ["db_opt1", "db_opt2"]


def test_dedup_key_ignores_ids_and_titles_but_not_prompts_or_options():
    a = parse_bundle([question(id="x", title="One")])
    b = parse_bundle([question(id="x", title="Two")])
    c = parse_bundle([question(id="x", prompt="Which one?")])
    assert dedup_key(a) == dedup_key(b)
    assert dedup_key(a) != dedup_key(c)


def answer_errors(bundle, answers):
    with pytest.raises(InvalidBundle) as raised:
        parse_answers(bundle, answers)
    return raised.value.errors


def test_every_question_is_answered_exactly_once_with_one_choice_or_text():
    bundle = parse_bundle([question(id="a"), question(id="b")])
    assert answer_errors(bundle, [{"question_id": "a", "selected_options": ["a_opt1"]}]) == [
        "expected 2 answers, got 1"
    ]
    both = [{"question_id": "a", "selected_options": ["a_opt1"]}, {"question_id": "a", "custom_text": "x"}]
    assert "answer 2 duplicates question id 'a'" in answer_errors(bundle, both)
    assert "answer 1 references unknown question id 'z'" in answer_errors(bundle, [{"question_id": "z"}, {}])
    assert "answer 2 is missing question_id" in answer_errors(bundle, [{"question_id": "a", "custom_text": "x"}, {}])
    mixed = [
        {"question_id": "a", "selected_options": ["a_opt1"], "custom_text": "x"},
        {"question_id": "b", "custom_text": "y"},
    ]
    assert answer_errors(bundle, mixed) == ["answer 1 has both a selected option and custom text"]
    two = [{"question_id": "a", "selected_options": ["a_opt1", "a_opt2"]}, {"question_id": "b", "custom_text": "y"}]
    assert answer_errors(bundle, two) == ["answer 1 selects more than one option"]
    alien = [{"question_id": "a", "selected_options": ["b_opt1"]}, {"question_id": "b", "custom_text": "y"}]
    assert answer_errors(bundle, alien) == ["answer 1 selects an option that question 'a' does not have"]


def test_answers_come_back_in_question_order_and_shape_the_tool_result():
    bundle = parse_bundle([question(id="a"), question(id="b")])
    answers = parse_answers(
        bundle, [{"question_id": "b", "custom_text": "  mine  "}, {"question_id": "a", "selected_options": ["a_opt2"]}]
    )
    assert answers == (Answer("a", "a_opt2", ""), Answer("b", None, "mine"))
    assert tool_result(bundle, answers, False, "") == {"a": {"selected_option": "a_opt2"}, "b": {"custom_text": "mine"}}
    assert tool_result(bundle, (), True, "busy") == {
        "a": {"answered": False},
        "b": {"answered": False},
        "rejected": True,
        "reject_reason": "busy",
    }


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    )
)
def test_any_input_is_either_a_bundle_or_a_list_of_errors(raw):
    try:
        bundle = parse_bundle(raw)
    except InvalidBundle as invalid:
        assert invalid.errors
        assert all(isinstance(e, str) for e in invalid.errors)
    else:
        assert 1 <= len(bundle) <= 4
        assert all(2 <= len(q["options"]) <= 6 and q["prompt"] for q in bundle)
