"""What of an answer is kept (``redaction``): never the typed text of a sensitive question."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.clarifications.redaction import is_withheld, stored_response

QUESTIONS = [
    {"id": "region", "sensitive": False, "options": [{"id": "eu"}, {"id": "us"}]},
    {"id": "apiKey", "sensitive": True, "options": []},
    {"id": "dbPassword", "sensitive": True, "options": [{"id": "from-env"}]},
]


def test_typed_text_of_a_sensitive_question_is_withheld_and_the_rest_kept():
    response = {
        "outcome": "accepted",
        "answers": [
            {"question_id": "region", "selected_options": ["eu"], "custom_text": "north"},
            {"question_id": "apiKey", "selected_options": [], "custom_text": "sk-1"},
            {"question_id": "dbPassword", "selected_options": ["from-env"], "custom_text": ""},
        ],
        "content": {"region_custom": "north", "apiKey": "sk-1", "dbPassword": "from-env"},
    }
    assert stored_response(QUESTIONS, response) == {
        "outcome": "accepted",
        "answers": [
            {"question_id": "region", "selected_options": ["eu"], "custom_text": "north"},
            {"question_id": "apiKey", "selected_options": [], "custom_text": "", "withheld": True},
            {"question_id": "dbPassword", "selected_options": ["from-env"], "custom_text": ""},
        ],
        "content": {"region_custom": "north"},
    }
    assert is_withheld(stored_response(QUESTIONS, response), "apiKey")
    assert not is_withheld(stored_response(QUESTIONS, response), "dbPassword")


def test_agentctls_withheld_list_says_a_value_was_sent():
    stored = stored_response(QUESTIONS, {"outcome": "accepted", "content": {}, "withheld": ["dbPassword"]})
    assert is_withheld(stored, "dbPassword")
    assert not is_withheld(stored, "region")


def test_nothing_changes_without_sensitive_questions():
    response = {"answers": [{"question_id": "region", "custom_text": "sk-1"}], "content": {"region": "sk-1"}}
    assert stored_response([QUESTIONS[0]], response) is response
    assert stored_response(QUESTIONS, None) is None


answers = st.lists(
    st.fixed_dictionaries(
        {
            "question_id": st.sampled_from(["region", "apiKey", "dbPassword", "unknown"]),
            "selected_options": st.lists(st.text(max_size=5), max_size=2),
            "custom_text": st.text(),
        }
    ),
    max_size=4,
)


SENSITIVE = {"apiKey", "dbPassword"}


@given(answers, st.dictionaries(st.sampled_from(["region", "apiKey", "dbPassword", "x"]), st.text(), max_size=4))
def test_no_text_typed_for_a_sensitive_question_is_kept_and_nothing_else_is_lost(given_answers, content):
    stored = stored_response(QUESTIONS, {"answers": given_answers, "content": content})
    assert len(stored["answers"]) == len(given_answers)
    for given_answer, kept in zip(given_answers, stored["answers"], strict=True):
        if given_answer["question_id"] not in SENSITIVE:
            assert kept == given_answer
            continue
        assert kept["custom_text"] == ""
        assert kept["selected_options"] == given_answer["selected_options"]
        assert kept.get("withheld", False) == bool(given_answer["custom_text"])
    assert stored["content"] == {key: value for key, value in content.items() if key not in SENSITIVE}
