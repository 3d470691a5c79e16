"""Two workspaces and a logged-in operator's cookie, for socket tests."""

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.models import SessionState, TaskSession, Turn

#: The Host header of a page on http://127.0.0.1, whose sockets send Origin ``http://127.0.0.1``.
HOST = (b"host", b"127.0.0.1")


@database_sync_to_async
def two_workspaces():
    """Alice's task in her workspace and Mallory's in theirs: ``(mine, theirs, alice, mallory)``."""
    users = get_user_model().objects
    mine, theirs = Workspace.objects.create(name="Mine"), Workspace.objects.create(name="Theirs")
    alice, mallory = users.create_user("alice"), users.create_user("mallory")
    mine.members.add(alice)
    theirs.members.add(mallory)
    tasks = []
    for workspace in (mine, theirs):
        board = Board.objects.create(workspace=workspace, name="Main")
        board.add_default_steps()
        tasks.append(Task.objects.create(board=board, step=board.steps.first(), title=f"{workspace.name} task"))
    return tasks[0], tasks[1], alice, mallory


@database_sync_to_async
def session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


@database_sync_to_async
def running_sessions(*tasks):
    """A running agent session (ACP session ``acp-1``) with an open turn on each of ``tasks``."""
    for task in tasks:
        session = TaskSession.objects.create(task=task, state=SessionState.RUNNING, acp_session_id="acp-1")
        Turn.objects.create(session=session)


async def two_running_tasks():
    """Alice's task and Mallory's, each with a running session, and Alice's session cookie."""
    mine, theirs, alice, _ = await two_workspaces()
    await running_sessions(mine, theirs)
    return mine, theirs, await session_cookie(alice)
