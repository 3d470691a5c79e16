"""Upgrading keys every stored option ``id``, as agentctl announces it, and a rollback keys it ``option_id`` again;
a bundle stored before the upgrade is still answered, and still reused, as before."""

import copy

import pytest

from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.overlay_model import bundle_view
from kandev_web.clarifications.validation import Answer, dedup_key, parse_answers, parse_bundle, tool_result
from testing_support.migrations import migrate, migrate_to_latest

# JSON columns differ between the two databases (jsonb on PostgreSQL).
pytestmark = pytest.mark.postgres

BEFORE = [("clarifications", "0007_attempt_accepted")]
AFTER = [("clarifications", "0008_options_keyed_id")]

#: What the agent sent, and the record it became before the upgrade.
ASKED = [
    {
        "id": "db",
        "title": "DB",
        "prompt": "Which database?",
        "options": [{"label": "Postgres", "description": "relational"}, {"label": "SQLite", "description": "embedded"}],
    }
]
ASK_RECORD = [
    {
        "id": "db",
        "title": "DB",
        "prompt": "Which database?",
        "kind": "single",
        "accepts_text": True,
        "sensitive": False,
        "options": [
            {"option_id": "db_opt1", "label": "Postgres", "description": "relational"},
            {"option_id": "db_opt2", "label": "SQLite", "description": "embedded"},
        ],
    }
]
ELICITATION_RECORD = [
    {
        "id": "question_0",
        "title": "Colour",
        "prompt": "Pick a colour",
        "kind": "multi",
        "accepts_text": False,
        "sensitive": False,
        "options": [
            {"option_id": "Red", "label": "Red", "description": ""},
            {"option_id": "Blue", "label": "Blue", "description": "the sky"},
        ],
        "default": ["Blue"],
    },
    {
        "id": "why",
        "title": "",
        "prompt": "Why?",
        "kind": "text",
        "accepts_text": True,
        "sensitive": False,
        "options": [],
    },
]


def keyed_id(questions):
    """``questions`` as the upgrade leaves them: each option's ``option_id`` under ``id``, nothing else changed."""
    upgraded = copy.deepcopy(questions)
    for question in upgraded:
        question["options"] = [
            {"id": option["option_id"], **{k: v for k, v in option.items() if k != "option_id"}}
            for option in question["options"]
        ]
    return upgraded


@pytest.mark.django_db(transaction=True)
def test_options_are_keyed_id_after_the_upgrade_and_option_id_after_a_rollback(make_task, make_session):
    session = make_session(make_task())
    old = migrate(BEFORE)
    OldClarification = old.get_model("clarifications", "Clarification")
    key = [["Which database?", [["db_opt1", "Postgres", "relational"], ["db_opt2", "SQLite", "embedded"]]]]
    ask = OldClarification.objects.create(
        pending_id="p-ask", session_id=session.pk, source="ask_user_question", questions=ASK_RECORD, dedup_key=key
    )
    elicited = OldClarification.objects.create(
        pending_id="p-elicit", session_id=session.pk, source="elicitation", questions=ELICITATION_RECORD
    )

    new = migrate(AFTER).get_model("clarifications", "Clarification")
    assert new.objects.get(pk=ask.pk).questions == keyed_id(ASK_RECORD)
    assert new.objects.get(pk=elicited.pk).questions == keyed_id(ELICITATION_RECORD)
    assert new.objects.get(pk=ask.pk).dedup_key == key

    old = migrate(BEFORE).get_model("clarifications", "Clarification")
    assert old.objects.get(pk=ask.pk).questions == ASK_RECORD
    assert old.objects.get(pk=elicited.pk).questions == ELICITATION_RECORD

    migrate_to_latest()
    record = Clarification.objects.get(pk=ask.pk)
    # The same call again is the same bundle, and the agent gets back the option ids it always got.
    assert dedup_key(parse_bundle(ASKED)) == record.dedup_key == dedup_key(record.questions)
    answers = parse_answers(record.questions, [{"question_id": "db", "selected_options": ["db_opt2"]}])
    assert answers == (Answer("db", "db_opt2", ""),)
    assert tool_result(record.questions, answers, False, "") == {"db": {"selected_option": "db_opt2"}}
    view = bundle_view("p-elicit", "elicitation", Clarification.objects.get(pk=elicited.pk).questions)
    assert [(o.id, o.picked) for o in view.questions[0].options] == [("Red", False), ("Blue", True)]
