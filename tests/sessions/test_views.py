"""Session actions are reachable only by the task's workspace members."""

import re

import pytest
from django.test import Client

from kandev_web import limits
from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.models import TaskSession


@pytest.fixture
def foreign_session(db):
    workspace = Workspace.objects.create(name="Theirs")
    board = Board.objects.create(workspace=workspace, name="B")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="Secret")
    return TaskSession.objects.create(task=task)


@pytest.mark.parametrize("action", ["prompt", "cancel", "stop", "resume", "permissions/p1"])
def test_another_workspaces_session_is_404(operator_client, foreign_session, action):
    response = operator_client.post(f"/sessions/{foreign_session.pk}/{action}/", {"prompt": "x", "option_id": "ok"})
    assert response.status_code == 404


def test_starting_on_another_workspaces_task_is_404(operator_client, foreign_session):
    response = operator_client.post(f"/tasks/{foreign_session.task_id}/sessions/", {"prompt": "x"})
    assert response.status_code == 404
    assert foreign_session.task.sessions.count() == 1


def test_a_profile_of_another_workspace_cannot_be_used(operator_client, make_task, foreign_session):
    task = make_task()
    theirs = AgentProfile.objects.create(
        workspace=foreign_session.task.board.workspace, name="x", agent_id="x", command=["true"]
    )
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": theirs.pk, "prompt": "go"})
    assert 'data-testid="toast"' in response.text
    assert not TaskSession.objects.filter(task=task).exists()


def test_an_action_on_a_session_with_no_agent_says_so(operator_client, make_task):
    session = TaskSession.objects.create(task=make_task())
    response = operator_client.post(f"/sessions/{session.pk}/cancel/")
    assert response.status_code == 200
    assert "not running any more" in response.text
    assert response["HX-Reswap"] == "none"


def test_start_without_csrf_token_is_403(operator, make_task):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    task = make_task()
    assert client.post(f"/tasks/{task.pk}/sessions/", {"prompt": "x"}).status_code == 403


@pytest.fixture
def profile(make_profile):
    return make_profile()


def test_a_prompt_longer_than_an_agent_takes_is_refused_saying_so(operator_client, make_task, profile):
    task = make_task()
    too_long = "x" * (limits.PROMPT_CHARS + 1)
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk, "prompt": too_long})
    assert 'data-testid="toast"' in response.text
    expected = f"The prompt has {limits.PROMPT_CHARS + 1} characters; an agent takes at most {limits.PROMPT_CHARS}"
    assert expected in response.text
    assert not TaskSession.objects.filter(task=task).exists()


def test_a_start_without_a_prompt_or_an_agent_says_which(operator_client, make_task, profile):
    task = make_task()
    assert "Write a prompt first." in operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk}).text
    assert "Choose an agent." in operator_client.post(f"/tasks/{task.pk}/sessions/", {"prompt": "go"}).text
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": "abc", "prompt": "go"})
    assert "Choose one of this workspace&#x27;s agents." in response.text


def test_the_longest_description_is_a_default_prompt_that_starts_the_agent(operator_client, make_task, profile):
    task = make_task(description="d" * limits.TASK_DESCRIPTION_CHARS)
    page = operator_client.get(f"/tasks/{task.pk}/").text
    default = re.search(r'<textarea name="prompt"[^>]*session-start-prompt[^>]*>\n?(.*?)</textarea>', page, re.S)
    assert default is not None
    assert default.group(1) == task.description
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk, "prompt": default.group(1)})
    assert response.status_code == 204
    assert TaskSession.objects.filter(task=task).exists()


@pytest.mark.parametrize("form", ["create", "edit"])
def test_a_description_longer_than_a_prompt_is_refused_where_it_is_written(operator_client, board, make_task, form):
    """It would be the default prompt, which no agent could be sent."""
    too_long = "d" * (limits.TASK_DESCRIPTION_CHARS + 1)
    if form == "create":
        data = {"title": "Long", "description": too_long, "step": board.steps.first().pk}
        response = operator_client.post(f"/boards/{board.pk}/tasks/", data)
        assert not Task.objects.filter(title="Long").exists()
    else:
        task = make_task()
        response = operator_client.post(f"/tasks/{task.pk}/edit/", {"title": "Long", "description": too_long})
        task.refresh_from_db()
        assert task.description == ""
    assert f"Ensure this value has at most {limits.TASK_DESCRIPTION_CHARS} characters" in response.text
