"""The web app's half of typed forms: reading the overlay's fields as typed values, and
saying agentctl's problems as sentences beside their questions (docs/decisions/mapping.md#typed-forms)."""

from kandev_web.clarifications.answering import form_answers
from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.overlay_model import constraint_hint
from kandev_web.clarifications.problems import sentence
from kandev_web.clarifications.templatetags.clarifications import answer_text
from kandev_web.clarifications.timeline import AskedQuestion

QUESTIONS = [
    {"id": "overwrite", "kind": "boolean", "title": "Overwrite"},
    {"id": "replicas", "kind": "integer", "title": "Replicas", "constraints": {"minimum": 1, "maximum": 5}},
    {"id": "ratio", "kind": "number", "title": "", "prompt": "Canary share?"},
    {"id": "name", "kind": "text", "title": "Name"},
]


def fields(**values):
    return lambda name: values.get(name.replace("-", "_"), [])


def test_yes_no_and_number_fields_become_json_booleans_and_numbers():
    read = fields(answer_overwrite_option=["false"], answer_replicas_custom=["3"], answer_ratio_custom=[" 0.25 "])
    assert form_answers(QUESTIONS, read) == [
        {"question_id": "overwrite", "value": False},
        {"question_id": "replicas", "value": 3},
        {"question_id": "ratio", "value": 0.25},
    ]


def test_what_does_not_read_as_a_number_is_passed_on_for_agentctl_to_refuse():
    read = fields(answer_replicas_custom=["three"], answer_ratio_custom=["1e999"], answer_overwrite_option=["maybe"])
    assert form_answers(QUESTIONS, read) == [
        {"question_id": "overwrite", "value": "maybe"},
        {"question_id": "replicas", "value": "three"},
        {"question_id": "ratio", "value": "1e999"},
    ]


def test_empty_typed_fields_are_unanswered():
    assert form_answers(QUESTIONS, fields(answer_replicas_custom=["  "], answer_overwrite_option=[""])) == []


def test_problems_are_said_beside_their_question_in_the_operators_words():
    said = sentence({"code": "above_maximum", "question_id": "replicas", "limit": 5}, QUESTIONS)
    assert (said.question_id, said.sentence) == ("replicas", "“Replicas” must be at most 5.")
    untitled = sentence({"code": "wrong_type", "question_id": "ratio", "limit": "number"}, QUESTIONS)
    assert untitled.sentence == "“Canary share?” must be a number."
    required = sentence({"code": "required_unanswered", "question_id": "name", "index": None}, QUESTIONS)
    assert required.sentence == "“Name” needs an answer."


def test_a_code_the_web_app_does_not_know_is_said_with_agentctls_sentence_never_as_a_dict():
    said = sentence({"code": "from_the_future", "question_id": "name", "message": "Something is off."}, QUESTIONS)
    assert said.sentence == "Something is off."


def test_hints_say_each_constraint_in_words():
    assert constraint_hint(QUESTIONS[1]) == "A whole number from 1 to 5"
    assert constraint_hint({"kind": "text", "constraints": {"minLength": 3, "format": "email"}}) == (
        "An e-mail address · At least 3 characters"
    )
    assert constraint_hint({"kind": "multi", "constraints": {"maxItems": 2}}) == "Choose at most 2"


def test_the_record_says_a_typed_answer_as_the_operator_gave_it():
    def row(value):
        record = Clarification(
            questions=[{"id": "q"}], status="answered", response={"answers": [{"question_id": "q", "value": value}]}
        )
        return AskedQuestion(record, 0)

    assert [answer_text(row(v)) for v in (True, False, 0, 2.5)] == ["Yes", "No", "0", "2.5"]
