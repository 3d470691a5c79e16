"""Clarification records: dedup, first answer wins, messages, and agents that move on."""

import asyncio

import pytest
from django.db import connection

from kandev_web.clarifications import services, timeline
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.clarifications.settlement import Answerer, ending_of_record
from kandev_web.clarifications.validation import InvalidBundle, parse_bundle
from kandev_web.notifications.models import Delivery
from kandev_web.sessions import events
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession, Turn
from kandev_web.sessions.pending import pending_actions
from testing_support.questions import timeline_rows

#: What agents report, on SQLite and again on PostgreSQL (scripts/test).
pytestmark = pytest.mark.postgres

QUESTIONS = parse_bundle(
    [
        {
            "id": "db",
            "title": "Database",
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        },
        {
            "prompt": "Which language?",
            "options": [{"label": "Python", "description": "Known"}, {"label": "Go", "description": "Fast"}],
        },
    ]
)


@pytest.fixture
def session(make_task, make_session, operator):
    return make_session(make_task("Pick a stack"))


def test_a_bundle_is_one_message_per_question_with_kandevs_metadata(session):
    record, created = services.request_clarification(session, QUESTIONS, "New service")
    assert created
    messages = list(Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).order_by("pk"))
    assert [m.requests_input for m in messages] == [False, True]
    # Each message keeps only its link to the record, which the timeline reads the question from.
    assert [m.metadata for m in messages] == [
        {"pending_id": record.pending_id, "question_index": 0},
        {"pending_id": record.pending_id, "question_index": 1},
    ]
    first = timeline.asked(messages[0])
    assert (first.record.pk, first.question_id, first.index, first.total, first.record.context, first.status) == (
        record.pk,
        "db",
        0,
        2,
        "New service",
        "pending",
    )
    assert messages[0].author_type == "agent"
    assert messages[0].content == "Which database?"
    session.refresh_from_db()
    assert session.state == SessionState.WAITING_FOR_INPUT
    assert pending_actions(TaskSession.objects.all()) == {session.pk: "clarification"}


def test_the_same_questions_return_the_pending_record(session):
    first, _ = services.request_clarification(session, QUESTIONS)
    again, created = services.request_clarification(session, QUESTIONS)
    assert (again.pk, created) == (first.pk, False)
    assert Clarification.objects.count() == 1
    assert Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).count() == 2


ANSWERS = [{"question_id": "db", "selected_options": ["db_opt2"]}, {"question_id": "q2", "custom_text": "Rust"}]


def test_a_retried_call_in_the_same_turn_gets_the_answer_already_given(session):
    first, _ = services.request_clarification(session, QUESTIONS)
    services.respond(first.pending_id, answers=ANSWERS)
    again, created = services.request_clarification(session, QUESTIONS)
    assert (again.pk, created, again.status) == (first.pk, False, Status.ANSWERED)
    assert Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).count() == 2


def test_the_same_questions_in_a_later_turn_ask_the_operator_again(session, django_capture_on_commit_callbacks):
    first, _ = services.request_clarification(session, QUESTIONS)
    services.respond(first.pending_id, answers=ANSWERS)
    Turn.objects.create(session=session)
    with django_capture_on_commit_callbacks():
        again, created = services.request_clarification(session, QUESTIONS)
    assert created
    assert again.pk != first.pk
    assert again.status == Status.PENDING
    assert [row.status for row in timeline_rows()].count("pending") == 2
    assert pending_actions(TaskSession.objects.all()) == {session.pk: "clarification"}
    # It is a new occurrence: the operator is notified again.
    assert Delivery.objects.filter(occurrence=again.pending_id).count() == 1


def test_a_skipped_bundle_is_asked_again_even_in_the_same_turn(session):
    first, _ = services.request_clarification(session, QUESTIONS)
    services.respond(first.pending_id, rejected=True)
    again, created = services.request_clarification(session, QUESTIONS)
    assert created
    assert again.pk != first.pk


def test_first_answer_wins(session):
    record, _ = services.request_clarification(session, QUESTIONS)
    answers = [
        {"question_id": "db", "selected_options": ["db_opt2"]},
        {"question_id": "q2", "custom_text": "Rust"},
    ]
    services.respond(record.pending_id, answers=answers)
    with pytest.raises(services.AlreadyAnswered):
        services.respond(record.pending_id, rejected=True)
    record.refresh_from_db()
    assert record.status == Status.ANSWERED
    assert record.response["answers"][1]["custom_text"] == "Rust"
    assert {row.status for row in timeline_rows()} == {"answered"}
    session.refresh_from_db()
    assert session.state == SessionState.RUNNING
    assert pending_actions(TaskSession.objects.all()) == {}


def test_an_invalid_answer_leaves_the_record_open(session):
    record, _ = services.request_clarification(session, QUESTIONS)
    with pytest.raises(InvalidBundle):
        services.respond(record.pending_id, answers=[{"question_id": "db", "selected_options": ["db_opt1"]}])
    record.refresh_from_db()
    assert record.status == Status.PENDING


def test_turn_end_marks_pending_questions_agent_disconnected_but_pending(session):
    record, _ = services.request_clarification(session, QUESTIONS)
    events.record_turn_completed(session.pk, {"stop_reason": "cancelled"})
    record.refresh_from_db()
    assert (record.status, record.agent_disconnected) == (Status.PENDING, True)
    assert {row.record.agent_disconnected for row in timeline_rows()} == {True}


def test_late_answer_is_recorded_and_becomes_a_prompt(session):
    record, _ = services.request_clarification(session, QUESTIONS)
    services.agent_moved_on(session.pk)
    answered = services.respond(
        record.pending_id,
        answers=[
            {"question_id": "db", "selected_options": ["db_opt1"]},
            {"question_id": "q2", "custom_text": "Go, probably"},
        ],
    )
    assert answered.status == Status.ANSWERED
    assert answered.agent_disconnected
    prompt = services.late_answer_prompt(answered)
    assert prompt.startswith('You previously asked the user: "Which database?". They answered: Postgres')
    assert "They answered: Go, probably" in prompt


@pytest.mark.django_db(transaction=True)
def test_a_late_answer_while_the_agent_is_busy_with_another_turn_is_recorded_and_says_so(session):
    from asgiref.sync import async_to_sync

    from kandev_web.clarifications import answering
    from kandev_web.clarifications.delivery import Outcome

    record, _ = services.request_clarification(session, QUESTIONS)
    services.agent_moved_on(session.pk)
    TaskSession.objects.filter(pk=session.pk).update(acp_session_id="acp-1", state=SessionState.RUNNING)
    Turn.objects.create(session=session)  # the operator's next prompt, still being worked on
    messages_before = Message.objects.count()
    record.refresh_from_db()
    delivery = async_to_sync(answering.answer)(
        record,
        answers=[{"question_id": "db", "selected_options": ["db_opt1"]}, {"question_id": "q2", "custom_text": "Go"}],
        rejected=False,
        reject_reason="",
    )
    assert delivery.outcome == Outcome.AGENT_BUSY
    assert "busy with another turn" in delivery.message
    assert Clarification.objects.get(pk=record.pk).status == Status.ANSWERED
    assert not Message.objects.filter(type=MessageType.MESSAGE, author_type="user").exists()
    assert Message.objects.count() == messages_before


def test_one_notification_per_pending_id_naming_the_task_not_the_question(
    session, operator, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        services.request_clarification(session, QUESTIONS)
        services.request_clarification(session, QUESTIONS)
    [delivery] = Delivery.objects.all()
    assert (delivery.event, delivery.user) == ("session.clarification_requested", operator)


@pytest.mark.django_db(transaction=True)
def test_wait_wakes_on_an_answer_from_another_thread(make_task):
    session = TaskSession.objects.create(task=make_task(), state=SessionState.RUNNING)
    Turn.objects.create(session=session)
    record, _ = services.request_clarification(session, QUESTIONS)
    keepalives = []

    async def keepalive():
        keepalives.append(1)
        if len(keepalives) == 2:
            await asyncio.to_thread(services.respond, record.pending_id, rejected=True, reject_reason="later")

    answered = asyncio.run(services.wait_for_answer(record.pending_id, keepalive=keepalive, interval=0.05))
    assert answered.status == Status.REJECTED
    assert answered.response["reject_reason"] == "later"
    connection.close()


@pytest.mark.django_db(transaction=True)
def test_wait_times_out_and_expires_the_record(make_task):
    session = TaskSession.objects.create(task=make_task(), state=SessionState.RUNNING)
    Turn.objects.create(session=session)
    record, _ = services.request_clarification(session, QUESTIONS)
    with pytest.raises(services.ClarificationTimedOut):
        asyncio.run(services.wait_for_answer(record.pending_id, timeout=0.1, interval=0.05))
    record.refresh_from_db()
    assert record.status == Status.EXPIRED
    connection.close()


def test_an_answer_records_who_gave_it_and_through_which_surface(session, operator):
    record, _ = services.request_clarification(session, QUESTIONS)
    services.respond(record.pending_id, answers=ANSWERS, answerer=Answerer.of(operator, "api"))
    record.refresh_from_db()
    assert (record.answered_by, record.answered_via, record.answered_from) == (operator, "api", "")
    assert record.responded_at is not None
    for row in timeline_rows():
        ending = ending_of_record(row.record)
        assert (ending.answered_by, ending.answered_via, ending.reason) == ("alice", "api", "operator")
