"""Resuming a session whose agentctl died: when it is offered, what it records, what the runner is given.

The whole path over real processes (agentctl killed, Resume clicked, the
conversation back) is ``e2e/test_resume_session.py``.
"""

import pytest
from django.utils import timezone

from kandev_web.board.models import TaskState
from kandev_web.sessions import events, resuming, services
from kandev_web.sessions.models import AgentExecution, Message, MessageType, SessionState

pytestmark = pytest.mark.postgres

CAN_RESUME = {"sessionCapabilities": {"resume": {}}}
CAN_LOAD = {"loadSession": True}


@pytest.fixture
def profile(make_profile):
    return make_profile()


@pytest.fixture
def died(make_task, make_session, profile):
    """A session whose agentctl was killed after the agent opened ``acp-1`` and said it can resume."""
    task = make_task("Work", state=TaskState.IN_PROGRESS)
    session = make_session(task, acp_session_id="acp-1", agent_profile=profile)
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/", token="t")
    resuming.record_agent_capabilities(execution.pk, CAN_RESUME)
    events.record_agent_exited(execution.pk, {"exit_code": -9, "signal": None}, agentctl_gone=True)
    session.refresh_from_db()
    assert session.state == SessionState.FAILED
    return session


@pytest.mark.parametrize("capabilities", [CAN_RESUME, CAN_LOAD])
def test_a_session_whose_agent_died_and_can_take_it_up_is_resumable(died, capabilities) -> None:
    died.executions.update(agent_capabilities=capabilities)
    assert resuming.resumable(died)


@pytest.mark.parametrize("capabilities", [{}, {"loadSession": False}, {"sessionCapabilities": {"resume": None}}])
def test_an_agent_that_cannot_take_a_session_up_offers_no_resume(died, capabilities) -> None:
    died.executions.update(agent_capabilities=capabilities)
    assert not resuming.resumable(died)


def test_a_session_an_operator_stopped_is_not_resumable(died) -> None:
    died.executions.update(stop_requested=True)
    assert not resuming.resumable(died)


def test_a_session_whose_agent_never_opened_its_acp_session_is_not_resumable(died) -> None:
    died.acp_session_id = ""
    assert not resuming.resumable(died)


def test_a_live_session_is_not_resumable(make_task, make_session) -> None:
    session = make_session(make_task(), acp_session_id="acp-1")
    AgentExecution.objects.create(session=session, agent_capabilities=CAN_RESUME)
    assert not resuming.resumable(session)


def test_resumed_says_which_session_and_waits_for_the_operator(died) -> None:
    resuming.record_resumed(died.pk, "acp-1")
    died.refresh_from_db()
    assert (died.state, died.acp_session_id) == (SessionState.WAITING_FOR_INPUT, "acp-1")
    assert died.task.state == TaskState.REVIEW
    status = Message.objects.filter(session=died, type=MessageType.STATUS).last()
    assert status.content == "Resumed the agent's session acp-1."


def test_a_failed_resume_ends_its_execution_and_can_be_tried_again(died) -> None:
    died.state = SessionState.STARTING
    died.acp_session_id = ""
    died.save()
    attempt = AgentExecution.objects.create(session=died)  # agentctl did not start: no capabilities recorded

    resuming.record_resume_failed(died.pk, attempt.pk, "acp-1", "the agent refused session/resume: gone")

    died.refresh_from_db()
    attempt.refresh_from_db()
    assert attempt.ended_at is not None
    assert (died.state, died.acp_session_id) == (SessionState.FAILED, "acp-1")
    assert died.error == "The agent's session could not be resumed: the agent refused session/resume: gone"
    assert Message.objects.filter(session=died, type=MessageType.ERROR).last().content == died.error
    # The earlier execution's answer to initialize still says the agent can.
    assert resuming.resumable(died)


class FakeRunner:
    """What ``services`` hands the runner after commit, kept for the test."""

    def __init__(self) -> None:
        self.resumed: list[tuple] = []

    def submit(self, coroutine) -> None:
        coroutine.close()

    def resume(self, plan, acp_session_id):
        self.resumed.append((plan, acp_session_id))
        return _nothing()


async def _nothing() -> None:
    return None


@pytest.fixture
def fake_runner(monkeypatch) -> FakeRunner:
    fake = FakeRunner()
    monkeypatch.setattr(services, "runner", fake)
    return fake


def test_resume_starts_a_new_execution_for_the_old_acp_session(
    operator_client, died, fake_runner, django_capture_on_commit_callbacks
) -> None:
    old_token = died.mcp_token_hash
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(f"/sessions/{died.pk}/resume/")
    assert response.status_code == 204

    [(plan, acp_session_id)] = fake_runner.resumed
    newest = died.executions.latest("pk")
    assert (acp_session_id, plan.execution_id, plan.session_id) == ("acp-1", newest.pk, died.pk)
    assert plan.mcp_servers[0]["name"] == "kandev"
    died.refresh_from_db()
    assert (died.state, died.acp_session_id, died.error) == (SessionState.STARTING, "", "")
    assert died.mcp_token_hash != old_token  # the old token went to the agent that died
    assert newest.ended_at is None


def test_resume_is_refused_for_a_session_that_cannot_be(operator_client, died, fake_runner) -> None:
    died.executions.update(agent_capabilities={})
    response = operator_client.post(f"/sessions/{died.pk}/resume/")
    assert "This session cannot be resumed." in response.text
    assert died.executions.count() == 1
    assert fake_runner.resumed == []


def test_only_the_newest_session_of_a_task_can_be_resumed(operator_client, died, make_session, fake_runner) -> None:
    make_session(died.task, state=SessionState.COMPLETED, turn=None)
    response = operator_client.post(f"/sessions/{died.pk}/resume/")
    assert "This session cannot be resumed." in response.text


def test_the_task_page_offers_resume_only_when_it_can_be(operator_client, died) -> None:
    page = operator_client.get(f"/tasks/{died.task_id}/").text
    assert 'data-testid="resume-session"' in page
    died.executions.update(agent_capabilities={})
    page = operator_client.get(f"/tasks/{died.task_id}/").text
    assert 'data-testid="resume-session"' not in page


def test_a_session_that_ended_without_a_failure_is_not_offered_resume(operator_client, died) -> None:
    died.executions.update(stop_requested=True, ended_at=timezone.now())
    assert 'data-testid="resume-session"' not in operator_client.get(f"/tasks/{died.task_id}/").text
