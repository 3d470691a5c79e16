"""With features.acpElicitation off, a declined question is said once per session, with what to do about it."""

import pytest
from django.test import Client

from kandev_web.clarifications import elicitations
from kandev_web.clarifications.models import Clarification
from kandev_web.pages.task import fragments
from kandev_web.sessions.models import Message, SessionState, TaskSession
from kandev_web.sessions.pending import pending_actions

DECLINED = {"session_id": "acp-1", "reason": "elicitation_off"}


@pytest.fixture
def session(make_task, make_session, make_execution, operator):
    session = make_session(make_task("Paint"), acp_session_id="acp-1")
    make_execution(session)
    return session


def notices(session):
    return list(Message.objects.filter(session=session, metadata__notice="elicitation_off"))


def test_every_question_declined_in_a_session_makes_one_notice_and_nothing_to_answer(session):
    for _ in range(3):
        elicitations.record_declined(session.pk, DECLINED)

    (notice,) = notices(session)
    assert (notice.type, notice.author_type) == ("status", "system")
    assert notice.metadata == {"notice": "elicitation_off", "flag": "features.acpElicitation"}
    assert not Clarification.objects.exists()
    assert pending_actions(TaskSession.objects.filter(pk=session.pk)) == {}


def test_a_new_session_of_the_task_is_told_again(session):
    elicitations.record_declined(session.pk, DECLINED)
    later = TaskSession.objects.create(task=session.task, state=SessionState.RUNNING)
    elicitations.record_declined(later.pk, DECLINED)
    assert len(notices(session)) == len(notices(later)) == 1


def test_another_reason_is_not_said(session):
    elicitations.record_declined(session.pk, {**DECLINED, "reason": "something_else"})
    assert notices(session) == []


def test_the_task_page_links_superusers_to_the_toggle_and_tells_others_to_ask_an_admin(session, make_operator):
    elicitations.record_declined(session.pk, DECLINED)
    workspace = session.task.board.workspace
    pages = {}
    for name, staff in (("admin", True), ("bob", False)):
        client = Client()
        client.force_login(make_operator(name, workspace=workspace, superuser=staff))
        pages[staff] = client.get(f"/tasks/{session.task_id}/").text

    link = 'href="/settings/feature-toggles/#feature-toggle-featuresacpelicitation"'
    link += ' data-testid="elicitation-off-toggle"'
    assert pages[True].count('data-testid="elicitation-off-notice"') == 1
    assert link in pages[True]
    assert "elicitation-off-ask-admin" not in pages[True]
    assert "Ask an administrator to turn them on." in pages[False]
    assert "elicitation-off-toggle" not in pages[False]


def test_the_live_row_is_rendered_for_its_viewer(session, make_operator):
    elicitations.record_declined(session.pk, DECLINED)
    (notice,) = notices(session)
    staff, other = make_operator("admin", superuser=True), make_operator("bob")

    def row(user):
        return fragments.render_message(session.task_id, notice.pk, created=True, user=user)

    assert "elicitation-off-toggle" in row(staff)
    assert "elicitation-off-ask-admin" in row(other)
