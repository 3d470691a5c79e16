"""Pending actions: Kandev's latest-turn rules, and reading many sessions at once."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession, Turn
from kandev_web.sessions.pending import (
    RequestMessage,
    pending_actions,
    session_pending_action,
    task_pending_action,
)

CLAR, PERM = MessageType.CLARIFICATION_REQUEST, MessageType.PERMISSION_REQUEST


def test_clarification_pending_when_any_is_unanswered():
    assert session_pending_action([RequestMessage(CLAR, "answered"), RequestMessage(CLAR, "")]) == "clarification"
    assert session_pending_action([RequestMessage(CLAR, "pending")]) == "clarification"
    assert session_pending_action([RequestMessage(CLAR, "answered")]) is None


def test_permission_counts_only_when_the_latest_is_pending():
    assert session_pending_action([RequestMessage(PERM, "approved"), RequestMessage(PERM, "pending")]) == "permission"
    assert session_pending_action([RequestMessage(PERM, "pending"), RequestMessage(PERM, "approved")]) is None


def test_per_session_clarification_beats_permission():
    assert session_pending_action([RequestMessage(PERM, "pending"), RequestMessage(CLAR, "pending")]) == (
        "clarification"
    )


def test_per_task_permission_beats_clarification():
    assert task_pending_action(["clarification", "permission"]) == "permission"
    assert task_pending_action(["clarification", None]) == "clarification"
    assert task_pending_action([]) is None


def _session_with(task, requests, *, older_turn_requests=()):
    session = TaskSession.objects.create(task=task, state=SessionState.RUNNING)
    for turn_requests in (older_turn_requests, requests):
        turn = Turn.objects.create(session=session)
        for type_, status in turn_requests:
            Message.objects.create(session=session, turn=turn, type=type_, metadata={"status": status})
    return session


def test_only_the_current_turn_counts(make_task):
    task = make_task()
    stale = _session_with(task, [(MessageType.MESSAGE, "")], older_turn_requests=[(CLAR, "pending")])
    live = _session_with(task, [(CLAR, "pending")])
    assert pending_actions(TaskSession.objects.all()) == {live.pk: "clarification"}
    assert stale.pk not in pending_actions(TaskSession.objects.filter(pk=stale.pk))


@pytest.mark.parametrize("sessions", [3, 30])
def test_many_sessions_are_read_with_one_query(make_task, sessions):
    task = make_task()
    for i in range(sessions):
        _session_with(task, [(CLAR if i % 2 else PERM, "pending")])
    with CaptureQueriesContext(connection) as queries:
        actions = pending_actions(TaskSession.objects.filter(task=task))
    assert len(queries) == 1
    assert sorted(actions.values()).count("clarification") == sessions // 2
