"""An open ``GET /mcp/`` stream ends when its session stops, rather than outliving the token that opened it."""

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.db import database_sync_to_async
from django.test import override_settings

from kandev_web.asgi import application
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.mcp_tokens import MCP_PATH, new_token
from kandev_web.sessions.models import SessionState, TaskSession

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("no_agent_runner")]


@database_sync_to_async
def _running_session() -> tuple[TaskSession, str]:
    workspace = Workspace.objects.create(name="W")
    board = Board.objects.create(workspace=workspace, name="B")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="T")
    token, digest = new_token()
    return TaskSession.objects.create(task=task, state=SessionState.RUNNING, mcp_token_hash=digest), token


@database_sync_to_async
def _stop(session: TaskSession) -> None:
    TaskSession.objects.filter(pk=session.pk).update(state=SessionState.COMPLETED)


def _get(token: str) -> ApplicationCommunicator:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"accept", b"text/event-stream"),
            (b"authorization", f"Bearer {token}".encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    return ApplicationCommunicator(application, scope)


async def _the_body_ends(communicator: ApplicationCommunicator) -> bool:
    """Whether the response ends (a timeout cancels the app, as asgiref's communicator does)."""
    while True:
        message = await communicator.receive_output(timeout=5)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            return True


@override_settings(KANDEV_LIVE_ACCESS_RECHECK_SECONDS=0.1)
async def test_an_open_stream_ends_once_its_session_stops():
    session, token = await _running_session()
    communicator = _get(token)
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(timeout=10)
    assert start["type"] == "http.response.start"
    assert start["status"] == 200
    assert await communicator.receive_nothing(timeout=0.5), "open while the session runs"

    await _stop(session)

    assert await _the_body_ends(communicator)
    await communicator.send_input({"type": "http.disconnect"})
    await communicator.wait(timeout=5)
