"""For socket tests: a communicator with the patience a loaded machine needs, two workspaces, an operator's cookie.

Channels' ``WebsocketCommunicator`` gives up a wait after one second by
default. A consumer's connect (its authorisation, its groups, the catch-up it
sends) took longer than that on a clean-clone run, two cores busy with four
workers' servers, agents and browsers, and the test failed on the timeout, not
on what it checks. :class:`Communicator` gives up after :data:`PATIENCE`; each
wait still ends as soon as its frame comes. ``receive_nothing``, which waits
on purpose, keeps its own timeout.
"""

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.models import SessionState, TaskSession, Turn

#: Seconds before a wait for a socket's frame gives up.
PATIENCE = 20

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


class Communicator(WebsocketCommunicator):
    async def connect(self, timeout=PATIENCE):
        return await super().connect(timeout)

    async def receive_output(self, timeout=PATIENCE):
        return await super().receive_output(timeout)

    async def receive_from(self, timeout=PATIENCE):
        return await super().receive_from(timeout)

    async def receive_json_from(self, timeout=PATIENCE):
        return await super().receive_json_from(timeout)

    async def disconnect(self, code=1000, timeout=PATIENCE):
        return await super().disconnect(code, timeout)
