"""Session actions are reachable only by the task's workspace members."""

import pytest
from django.test import Client

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.models import AgentProfile, TaskSession


@pytest.fixture
def foreign_session(db):
    workspace = Workspace.objects.create(name="Theirs")
    board = Board.objects.create(workspace=workspace, name="B")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="Secret")
    return TaskSession.objects.create(task=task)


@pytest.fixture
def client(operator):
    client = Client()
    client.force_login(operator)
    return client


@pytest.mark.parametrize("action", ["prompt", "cancel", "stop", "permissions/p1"])
def test_another_workspaces_session_is_404(client, foreign_session, action):
    response = client.post(f"/sessions/{foreign_session.pk}/{action}/", {"prompt": "x", "option_id": "ok"})
    assert response.status_code == 404


def test_starting_on_another_workspaces_task_is_404(client, foreign_session):
    response = client.post(f"/tasks/{foreign_session.task_id}/sessions/", {"prompt": "x"})
    assert response.status_code == 404
    assert foreign_session.task.sessions.count() == 1


def test_a_profile_of_another_workspace_cannot_be_used(client, make_task, foreign_session):
    task = make_task()
    theirs = AgentProfile.objects.create(
        workspace=foreign_session.task.board.workspace, name="x", agent_id="x", command=["true"]
    )
    response = client.post(f"/tasks/{task.pk}/sessions/", {"profile": theirs.pk, "prompt": "go"})
    assert 'data-testid="toast"' in response.text
    assert not TaskSession.objects.filter(task=task).exists()


def test_an_action_on_a_session_with_no_agent_says_so(client, make_task):
    session = TaskSession.objects.create(task=make_task())
    response = client.post(f"/sessions/{session.pk}/cancel/")
    assert response.status_code == 200
    assert "not running any more" in response.text
    assert response["HX-Reswap"] == "none"


def test_start_without_csrf_token_is_403(operator, make_task):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    task = make_task()
    assert client.post(f"/tasks/{task.pk}/sessions/", {"prompt": "x"}).status_code == 403
