"""Every HTTP endpoint of kandev-web, read from the URLconf, and a workspace with an object for each
URL parameter: what the security tests go through, so a new endpoint is covered the day it is added.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

from kandev_web.agents.models import AgentProfile, Executor
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.clarifications.models import Clarification
from kandev_web.repositories.models import Repository, ReviewComment, Worktree
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession, Turn
from kandev_web.webhooks.models import Webhook
from testing_support.executor import unreachable_ssh_host

#: Namespaces whose views are not ours: the Django admin has its own login and its own tests.
FOREIGN_NAMESPACES = {"admin"}


@dataclass(frozen=True)
class Endpoint:
    name: str
    parameters: tuple[str, ...]

    def __str__(self) -> str:
        return self.name


def _walk(patterns, namespace: str = "", inherited: tuple[str, ...] = ()):
    for entry in patterns:
        parameters = inherited + tuple(entry.pattern.converters)
        if isinstance(entry, URLResolver):
            if entry.namespace in FOREIGN_NAMESPACES:
                continue
            inner = ":".join(part for part in (namespace, entry.namespace) if part)
            yield from _walk(entry.url_patterns, inner, parameters)
        elif isinstance(entry, URLPattern):
            assert entry.name, f"every URL pattern needs a name to be tested: {entry.pattern}"
            yield Endpoint(f"{namespace}:{entry.name}" if namespace else entry.name, parameters)


#: Every endpoint, by name (``namespace:name``) with its URL parameters.
ENDPOINTS = sorted(set(_walk(get_resolver().url_patterns)), key=str)


def workspace_objects(name: str) -> dict[str, object]:
    """A workspace named ``name`` with one of everything a URL names, and the URL parameters' values for them."""
    workspace = Workspace.objects.create(name=name)
    board = Board.objects.create(workspace=workspace, name=f"{name} board")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title=f"{name} task")
    session = TaskSession.objects.create(task=task, state=SessionState.RUNNING, acp_session_id=f"acp-{name}")
    turn = Turn.objects.create(session=session)
    pending_id = f"{name}-pending-1"
    clarification = Clarification.objects.create(
        pending_id=pending_id,
        session=session,
        turn=turn,
        questions=[
            {
                "id": "q",
                "title": "Q",
                "prompt": "Which?",
                "options": [
                    {"id": "q_opt1", "label": "A", "description": ""},
                    {"id": "q_opt2", "label": "B", "description": ""},
                ],
            }
        ],
    )
    permission = Message.objects.create(
        session=session,
        turn=turn,
        type=MessageType.PERMISSION_REQUEST,
        content="Edit it?",
        metadata={
            "pending_id": pending_id,
            "status": "pending",
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    )
    # Its check fails at once, starting nothing: nobody listens on port 9 (discard).
    nowhere = Executor.objects.create(name=f"{name} nowhere", **unreachable_ssh_host())
    profile = AgentProfile.objects.create(
        workspace=workspace, name=f"{name} agent", agent_id="mock", command=["true"], executor=nowhere
    )
    webhook = Webhook.objects.create(
        workspace=workspace, name=f"{name} hook", url="http://127.0.0.1:9/", secret="s", events=["turn.finished"]
    )
    repository = Repository.objects.create(workspace=workspace, name=f"{name} repository", path=f"/srv/{name}")
    # The task's branch, for its review page: on no disk, so every read of it fails the way a vanished one would.
    branch, checkout = f"kandev/task-{task.pk}", f"/srv/{name}-task"
    Worktree.objects.create(task=task, repository=repository, branch=branch, path=checkout, base_commit="0" * 40)
    comment = ReviewComment.objects.create(task=task, path="app.py", line=1, text="Why?")
    return {
        "workspace": workspace,
        "values": {
            "workspace_id": workspace.pk,
            "profile_id": profile.pk,
            "repository_id": repository.pk,
            "board_id": board.pk,
            "step_id": task.step_id,
            "task_id": task.pk,
            "session_id": session.pk,
            "pending_id": pending_id,
            "webhook_id": webhook.pk,
            "comment_id": comment.pk,
        },
        "task": task,
        "clarification": clarification,
        "permission": permission,
    }
