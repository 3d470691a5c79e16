"""The MCP endpoint's bearer token, in process: which paths reach it, which tokens open it.

e2e/test_mcp_endpoint.py covers a missing, wrong or non-Bearer token over real
HTTP; this covers the edges: near-miss paths (which must fall to Django's login
and never reach the SDK unauthenticated) and tokens of sessions that are over.
"""

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.db import database_sync_to_async

from kandev_web.asgi import application
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.sessions.mcp_tokens import MCP_PATH, new_token, session_for_token
from kandev_web.sessions.models import SessionState, TaskSession

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("no_agent_runner")]


PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


async def _post(path: str, *headers: tuple[bytes, bytes]) -> tuple[int, dict[bytes, bytes]]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            *headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": PING, "more_body": False})
    start = await communicator.receive_output(timeout=10)
    await communicator.wait(timeout=10)
    return start["status"], dict(start["headers"])


@database_sync_to_async
def _session_with_token(state: str) -> str:
    workspace = Workspace.objects.create(name="W")
    board = Board.objects.create(workspace=workspace, name="B")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="T")
    token, digest = new_token()
    TaskSession.objects.create(task=task, state=state, mcp_token_hash=digest)
    return token


@pytest.mark.parametrize("path", ["/mcp", "/MCP/", "/mcp/tools", "//mcp/", "/mcp/./", "/mcp%2F"])
async def test_near_miss_paths_are_django_pages_behind_the_login(path):
    status, headers = await _post(path, (b"authorization", b"Bearer nope"))
    assert status in {302, 404}, (path, status)
    if status == 302:
        assert headers[b"location"].startswith(b"/login/"), headers


@pytest.mark.parametrize("authorization", [None, b"Bearer", b"Bearer ", b"bearer  ", b"Token x", b"Bearer \x00"])
async def test_no_usable_token_is_a_401(authorization):
    await _session_with_token(SessionState.RUNNING)
    headers = [] if authorization is None else [(b"authorization", authorization)]
    status, response_headers = await _post(MCP_PATH, *headers)
    assert status == 401
    assert response_headers[b"www-authenticate"].startswith(b"Bearer")


@pytest.mark.parametrize("state", [SessionState.COMPLETED, SessionState.CANCELLED, SessionState.FAILED])
async def test_a_token_of_a_session_that_is_over_is_a_401(state):
    token = await _session_with_token(state)
    status, _ = await _post(MCP_PATH, (b"authorization", f"Bearer {token}".encode()))
    assert status == 401, f"the token of a {state} session still opens the MCP endpoint"


@pytest.mark.parametrize("state", [SessionState.STARTING, SessionState.RUNNING, SessionState.WAITING_FOR_INPUT])
async def test_a_token_of_a_live_session_is_accepted(state):
    """The control for the test above: the same token, hashed the same way, opens a live session."""
    token = await _session_with_token(state)
    assert await database_sync_to_async(session_for_token)(token) is not None
