"""A follow-up prompt while the agent's turn is open is refused over HTTP, and nothing happens.

agentctl takes one prompt per turn (``CONFLICT``, docs/agent-stream.md) and
Kandev queues none: the server says what the turn waits for and records
nothing, sends nothing to agentctl, ends no turn and notifies nobody.
"""

import pytest

from kandev_web.board.models import TaskState
from kandev_web.notifications import services as notifications
from kandev_web.notifications.models import Delivery, Event
from kandev_web.sessions import runner as runner_module
from kandev_web.sessions import services
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession, Turn


class RecordingRunner:
    """The runner, as far as a prompt goes: records every request that would reach agentctl."""

    def __init__(self):
        self.calls = []

    def call(self, coroutine, timeout=None):
        self.calls.append(coroutine.__qualname__)
        coroutine.close()

    def submit(self, coroutine):
        self.calls.append(coroutine.__qualname__)
        coroutine.close()


@pytest.fixture
def runner(monkeypatch):
    fake = RecordingRunner()
    monkeypatch.setattr(services, "runner", fake)
    monkeypatch.setattr(runner_module, "runner", fake)
    return fake


@pytest.fixture
def client(operator_client, operator):
    """The operator's client, the operator told when a turn finishes."""
    notifications.set_enabled(operator, Event.TURN_FINISHED, True)
    return operator_client


@pytest.fixture
def session(make_task, make_session, make_execution, board):
    task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
    session = make_session(task, acp_session_id="acp-1", turn={"agent_turn_id": "turn-1"})
    make_execution(session)
    return session


def _permission_pending(session):
    Message.objects.create(
        session=session,
        turn=session.turns.get(),
        type=MessageType.PERMISSION_REQUEST,
        metadata={"pending_id": "p1", "status": "pending"},
        requests_input=True,
    )
    TaskSession.objects.filter(pk=session.pk).update(state=SessionState.WAITING_FOR_INPUT)


def _unchanged(session, before):
    session.refresh_from_db()
    assert (session.state, session.task.state) == before
    assert session.turns.count() == 1
    assert session.turns.get().completed_at is None
    assert not Message.objects.filter(author_type="user").exists()
    assert not Message.objects.filter(type=MessageType.ERROR).exists()
    assert not Delivery.objects.exists()


@pytest.mark.parametrize(
    ("waiting_for", "reason"),
    [
        (_permission_pending, "The agent is waiting for your permission. Answer it first; your message is kept here."),
        (lambda session: None, "The agent is still working on its turn. Wait for it to end or cancel it;"),
    ],
    ids=["permission", "generating"],
)
def test_a_prompt_during_an_open_turn_is_refused_with_the_reason_and_changes_nothing(
    client, session, runner, waiting_for, reason
):
    waiting_for(session)
    session.refresh_from_db()
    before = (session.state, session.task.state)

    response = client.post(f"/sessions/{session.pk}/prompt/", {"prompt": "And also the docs, please"})

    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert 'data-testid="toast"' in response.text
    assert 'data-reason="turn_open"' in response.text
    assert reason in response.text
    assert runner.calls == []
    _unchanged(session, before)


def test_a_prompt_after_the_turn_ended_opens_a_new_turn(client, session, runner):
    Turn.objects.filter(session=session).update(completed_at="2026-12-01T10:00:00Z", stop_reason="end_turn")
    TaskSession.objects.filter(pk=session.pk).update(state=SessionState.WAITING_FOR_INPUT)

    response = client.post(f"/sessions/{session.pk}/prompt/", {"prompt": "Next, the docs"})

    assert response.status_code == 204
    assert runner.calls == ["_deliver_prompt"]
    assert session.turns.count() == 2
    assert Message.objects.get(author_type="user").content == "Next, the docs"


def test_a_prompt_to_a_starting_agent_is_refused(client, session, runner):
    TaskSession.objects.filter(pk=session.pk).update(state=SessionState.STARTING, acp_session_id="")
    response = client.post(f"/sessions/{session.pk}/prompt/", {"prompt": "Hurry"})
    assert "still starting" in response.text
    assert runner.calls == []
    assert session.turns.count() == 1
