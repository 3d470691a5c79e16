"""The task socket (``/ws/tasks/<id>/``): who may open it, from where, and who keeps hearing it.

tests/board/test_consumers.py covers the board socket's origin and login checks
and a foreign operator on a task id that does not exist; this covers the task
socket on a real task of another workspace, its origin and login checks, and
an operator whose membership ends while the socket is open.
"""

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from kandev_web import live
from kandev_web.asgi import application
from kandev_web.board.models import Task
from kandev_web.live import user_group
from kandev_web.sessions.models import Message, MessageType, TaskSession
from testing_support.sockets import HOST, Communicator, session_cookie, two_workspaces

ORIGIN = (b"origin", b"http://127.0.0.1")
FORBIDDEN = 4403

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _connect(path, *headers):
    """A socket on ``path``; when it is accepted, its first frame (the catch-up of the page) has been read,
    so what a test receives afterwards was sent after it connected."""
    communicator = Communicator(application, path, headers=[HOST, *headers])
    connected, code = await communicator.connect()
    if connected:
        await communicator.receive_from(timeout=20)
    return communicator, connected, code


async def test_another_workspaces_operator_cannot_watch_a_real_task():
    mine, theirs, _alice, mallory = await two_workspaces()
    cookie = await session_cookie(mallory)
    _communicator, connected, code = await _connect(f"/ws/tasks/{mine.pk}/", ORIGIN, cookie)
    assert (connected, code) == (False, FORBIDDEN)
    # The same operator may watch their own task: the refusal is about the workspace.
    own, connected, _ = await _connect(f"/ws/tasks/{theirs.pk}/", ORIGIN, cookie)
    assert connected
    await own.disconnect()


async def test_an_unauthenticated_task_socket_is_closed():
    mine, *_ = await two_workspaces()
    _communicator, connected, code = await _connect(f"/ws/tasks/{mine.pk}/", ORIGIN)
    assert (connected, code) == (False, FORBIDDEN)


async def test_a_forged_session_cookie_is_unauthenticated():
    mine, *_ = await two_workspaces()
    _communicator, connected, code = await _connect(f"/ws/tasks/{mine.pk}/", ORIGIN, (b"cookie", b"sessionid=forged"))
    assert (connected, code) == (False, FORBIDDEN)


@pytest.mark.parametrize(
    "origin",
    [
        b"http://evil.example",
        b"null",
        b"http://127.0.0.1.evil.example",
        b"http://evil.example:80@127.0.0.1.evil.example",
        b"file://",
        None,
    ],
    ids=["foreign", "null", "suffix", "userinfo", "file", "missing"],
)
async def test_the_task_socket_refuses_foreign_or_missing_origins(origin):
    mine, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)
    headers = [cookie] if origin is None else [(b"origin", origin), cookie]
    _communicator, connected, _ = await _connect(f"/ws/tasks/{mine.pk}/", *headers)
    assert not connected


async def test_an_operator_removed_from_the_workspace_hears_nothing_more():
    """Membership is checked when the socket opens; an operator removed later
    must not go on receiving the task's messages through a socket left open."""
    mine, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)
    communicator, connected, _ = await _connect(f"/ws/tasks/{mine.pk}/", ORIGIN, cookie)
    assert connected

    @database_sync_to_async
    def remove_and_post():
        mine.board.workspace.members.remove(alice)
        session = TaskSession.objects.create(task=mine)
        return Message.objects.create(session=session, type=MessageType.MESSAGE, content="secret plan after removal")

    message = await remove_and_post()
    await get_channel_layer().group_send(
        live.task_group(mine.pk), {"type": "message.changed", "message_id": message.pk, "created": True}
    )
    # A later event of the same group: once its frame is in, the message's has been handled.
    await get_channel_layer().group_send(live.task_group(mine.pk), {"type": "task.changed"})
    received = await _until(communicator, 'id="task-details"')
    assert not any("secret plan after removal" in frame for frame in received), received
    await communicator.disconnect()


async def test_an_operator_removed_from_the_workspace_sees_no_more_board_changes():
    mine, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)
    board_id = await database_sync_to_async(lambda: mine.board_id)()
    communicator, connected, _ = await _connect(f"/ws/boards/{board_id}/", ORIGIN, cookie)
    assert connected

    @database_sync_to_async
    def remove_and_add():
        mine.board.workspace.members.remove(alice)
        Task.objects.create(board=mine.board, step=mine.step, title="secret card after removal")
        return mine.step_id

    step_id = await remove_and_add()
    await get_channel_layer().group_send(live.board_group(board_id), {"type": "board.changed", "step_ids": [step_id]})
    # A later event to the same socket: once its frame is in, the board change has been handled.
    await get_channel_layer().group_send(user_group(alice.pk), {"type": "notify", "message": "sentinel"})
    received = await _until(communicator, "sentinel")
    assert not any("secret card after removal" in frame for frame in received), received
    await communicator.disconnect()


async def _until(communicator, marker: str) -> list[str]:
    """Every frame sent up to and including the first one containing ``marker`` (or a close)."""
    received = []
    while True:
        # Generous: a loaded CI machine is slow, and only a missing frame waits this long.
        output = await communicator.receive_output(timeout=20)
        if output["type"] == "websocket.close":
            return received
        received.append(output.get("text", ""))
        if marker in received[-1]:
            return received
