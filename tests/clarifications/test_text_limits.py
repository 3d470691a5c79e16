"""An operator's skip reason is bounded (kandev_web/limits.py) and an over-long one is refused before anything is kept.

Unbounded, a 0.5 MB reason was recorded (the board said "Skipped") while the
``ask_user_question_kandev`` result it made outgrew the MCP client's 1 MiB
event, so the agent only got an error.
"""

import pytest
from asgiref.sync import async_to_sync

from kandev_web import limits
from kandev_web.clarifications import answering, elicitations, services
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions.models import AgentExecution, SessionState, TaskSession, Turn
from testing_support.questions import REQUESTED, timeline_rows
from testing_support.runner import FakeRunner

BUNDLE = parse_bundle(
    [
        {
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
)
HALF_A_MEGABYTE = "why " * 131_072


@pytest.fixture
def session(make_task, make_session):
    return make_session(make_task("Pick a stack"))


def _unchanged(record: Clarification) -> None:
    record.refresh_from_db()
    assert record.status == Status.PENDING
    assert record.response in (None, {})
    assert {row.status for row in timeline_rows()} == {Status.PENDING}


def _skip(client, record, reason):
    return client.post(f"/clarifications/{record.pending_id}/respond/", {"action": "skip", "reject_reason": reason})


def test_a_half_megabyte_skip_reason_is_refused_with_a_sentence_and_nothing_is_recorded(operator_client, session):
    record, _ = services.request_clarification(session, BUNDLE, "")
    response = _skip(operator_client, record, HALF_A_MEGABYTE)
    assert response.status_code == 200
    assert 'data-testid="toast"' in response.text
    assert f"Your reason for skipping has {len(HALF_A_MEGABYTE.strip())} characters" in response.text
    assert f"at most {limits.SKIP_REASON_CHARS} reach the agent" in response.text
    _unchanged(record)


def test_a_reason_at_the_limit_reaches_the_agent_whole(operator_client, session):
    record, _ = services.request_clarification(session, BUNDLE, "")
    reason = "r" * limits.SKIP_REASON_CHARS
    response = _skip(operator_client, record, f"  {reason}  ")
    assert response.status_code == 204
    record.refresh_from_db()
    assert record.status == Status.REJECTED
    assert record.response["reject_reason"] == reason


@pytest.mark.django_db(transaction=True)
def test_an_elicitations_over_long_skip_reason_is_not_forwarded(make_task, operator, monkeypatch):
    session = TaskSession.objects.create(task=make_task("Paint"), state=SessionState.RUNNING, acp_session_id="acp-1")
    Turn.objects.create(session=session)
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent/stream", token="t")
    record = elicitations.record_requested(execution.pk, session.pk, REQUESTED)
    fake = FakeRunner({"success": True, "action": "decline"})
    monkeypatch.setattr(elicitations, "runner", fake)
    delivery = async_to_sync(answering.answer)(record, answers=[], rejected=True, reject_reason=HALF_A_MEGABYTE)
    assert not delivery.delivered
    assert delivery.level == "error"
    assert "reason for skipping" in delivery.message
    assert fake.sent == []
    _unchanged(record)
