"""``for_user(user)``: every model an operator reaches shows them their workspaces' rows and nothing else.

The views and sockets answer 404 / 4403 for everything else (test_endpoints,
test_sockets) because they read through these querysets.
"""

import uuid

import pytest

from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.clarifications.models import Clarification
from kandev_web.sessions.models import TaskSession


def workspace_with_everything(name: str) -> dict:
    workspace = Workspace.objects.create(name=name)
    board = Board.objects.create(workspace=workspace, name=f"{name} board")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title=f"{name} task")
    session = TaskSession.objects.create(task=task)
    return {
        Workspace: workspace,
        Board: board,
        Task: task,
        TaskSession: session,
        AgentProfile: AgentProfile.objects.create(
            workspace=workspace, name=f"{name} agent", agent_id="x", command=["x"]
        ),
        Clarification: Clarification.objects.create(pending_id=str(uuid.uuid4()), session=session, questions=[]),
    }


MODELS = [Workspace, Board, Task, TaskSession, AgentProfile, Clarification]


@pytest.fixture
def two_workspaces(db):
    return workspace_with_everything("Ours"), workspace_with_everything("Theirs")


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_member_sees_their_workspaces_rows_only(two_workspaces, make_operator, model):
    ours, _theirs = two_workspaces
    alice = make_operator("alice", workspace=ours[Workspace])
    assert list(model.objects.for_user(alice)) == [ours[model]]


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_member_of_two_workspaces_sees_each_row_once(two_workspaces, make_operator, model):
    ours, theirs = two_workspaces
    bob = make_operator("bob", workspace=ours[Workspace])
    theirs[Workspace].members.add(bob)
    assert sorted(row.pk for row in model.objects.for_user(bob)) == sorted([ours[model].pk, theirs[model].pk])


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_an_operator_removed_from_a_workspace_sees_nothing_of_it(two_workspaces, make_operator, model):
    ours, _ = two_workspaces
    alice = make_operator("alice", workspace=ours[Workspace])
    ours[Workspace].members.remove(alice)
    assert not model.objects.for_user(alice).exists()
