"""agentctl's answer problems reach the operator as sentences naming the question, never as raw entries."""

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation.answers import Problem, ProblemCode
from kandev_web.agentctl.stream_client import ValidationFailed
from kandev_web.clarifications import elicitations
from kandev_web.clarifications.models import Status
from kandev_web.clarifications.problems import MALFORMED, explain, question_name
from testing_support.questions import requested
from testing_support.runner import FakeRunner

QUESTIONS = [
    {"id": "question_0", "title": "Colour", "prompt": "Pick a colour"},
    {"id": "apiKey", "title": "", "prompt": "apiKey"},
    {"id": "long", "title": "", "prompt": "Which of these many deployment targets should the release go to first?"},
]


def describe(problems, questions):
    return tuple(said.sentence for said in explain(problems, questions))


def _wire(code, question_id=None, option_id=None, index=0, limit=None):
    return Problem(ProblemCode(code), index, question_id, option_id, limit).to_wire()


@pytest.mark.parametrize(
    ("problem", "sentence"),
    [
        (
            _wire("unknown_option", "question_0", "Purple"),
            "Your answer to “Colour” picks an option the question does not offer.",
        ),
        (_wire("too_many_options", "question_0"), "Pick only one option for “Colour”."),
        (_wire("text_not_accepted", "question_0"), "“Colour” takes no typed text, only one of its options."),
        (_wire("text_too_long", "apiKey"), "Typed text for “apiKey” may be at most 10000 characters."),
        (_wire("duplicate_question", "question_0"), "“Colour” was answered twice."),
        (_wire("unknown_question", "nope"), "Your answer names a question this form does not have."),
        (
            _wire("bad_custom_text", "question_0"),
            "The page sent your answer in a shape the agent cannot read. Reload the page and answer again.",
        ),
    ],
)
def test_each_code_is_a_sentence_naming_the_question(problem, sentence):
    assert describe([problem], QUESTIONS) == (sentence,)


def test_every_code_agentctl_has_is_worded():
    """A new problem code in agentctl gets its own sentence here, not the fallback."""
    limit = {ProblemCode.FORMAT_MISMATCH: "email", ProblemCode.WRONG_TYPE: "integer"}
    for code in ProblemCode:
        problem = _wire(code.value, "question_0", limit=limit.get(code, 3))
        del problem["message"]  # agentctl's own sentence would hide a code this module does not word
        [sentence] = describe([problem], QUESTIONS)
        assert sentence != "The agent refused your answer.", code


def test_a_long_prompt_is_named_by_its_start():
    assert question_name(QUESTIONS[2]) == "Which of these many deployment targets should the release…"


def test_a_code_from_a_newer_agentctl_uses_its_message_and_repeats_are_said_once():
    newer = {"code": "from_the_future", "question_id": "question_0", "message": "“Colour” must rhyme."}
    unknown = [_wire("unknown_option", "question_0", "X"), _wire("unknown_option", "question_0", "Y")]
    assert describe([newer, *unknown], QUESTIONS) == (
        "“Colour” must rhyme.",
        "Your answer to “Colour” picks an option the question does not offer.",
    )


def test_a_question_name_is_quoted_never_read_as_a_template():
    hostile = [{"id": "q", "title": "%(limit)s %(question)s %s %", "prompt": ""}]
    [sentence] = describe([{"code": "below_minimum", "question_id": "q", "limit": 3}], hostile)
    assert sentence == "“%(limit)s %(question)s %s %” must be at least 3."


def test_the_request_level_codes_are_worded():
    for code in MALFORMED:
        [sentence] = describe([{"code": code, "index": None, "question_id": None, "option_id": None}], QUESTIONS)
        assert sentence.startswith("The page sent your answer in a shape")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
problems = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "code": st.sampled_from([c.value for c in ProblemCode]) | json_values,
            "question_id": st.sampled_from(["question_0", "apiKey", "other"]) | json_values,
            "option_id": json_values,
            "limit": json_values,
        },
    )
    | json_values,
    max_size=6,
)


@given(problems)
def test_any_problem_list_becomes_sentences_and_never_a_raw_entry(listed):
    sentences = describe(listed, QUESTIONS)
    assert sentences
    for sentence in sentences:
        assert sentence.endswith(".")
        assert "{'" not in sentence
        assert "'code'" not in sentence


@pytest.fixture
def execution(make_task, make_session, make_execution, operator):
    return make_execution(make_session(make_task("Paint"), acp_session_id="acp-1"))


@pytest.mark.django_db(transaction=True)
def test_the_operator_is_shown_the_sentence_not_the_dict(execution, operator, monkeypatch):
    record = requested(execution)
    problem = _wire("unknown_option", "question_0", "Purple")
    refusal = ValidationFailed("the answers do not fit the elicitation's questions", details={"problems": [problem]})
    monkeypatch.setattr(elicitations, "runner", FakeRunner(refusal))
    client = Client()
    client.force_login(operator)
    response = client.post(f"/clarifications/{record.pending_id}/respond/", {"answer-question_0-option": "Purple"})
    assert response.status_code == 200
    assert 'data-testid="toast"' in response.text
    assert "Your answer to “Colour” picks an option the question does not offer." in response.text
    assert "unknown_option" not in response.text
    assert "{" not in response.text.split('data-testid="toast-body">')[1]
    record.refresh_from_db()
    assert record.status == Status.PENDING
