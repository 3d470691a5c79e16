"""A WebSocket to a path no page listens on is refused cleanly, for anyone: a close, never a traceback."""

import logging

import pytest

from kandev_web.asgi import application
from kandev_web.routing import CLOSE_NOT_FOUND
from testing_support.sockets import HOST, Communicator, session_cookie, two_workspaces

ORIGIN = (b"origin", b"http://127.0.0.1")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

PATHS = [
    "/ws/nope/",
    "/ws/",
    "/",
    "/ws/tasks/abc/",
    "/ws/tasks/-1/",
    "/ws/boards/1e3/",
    "/ws/tasks/1/extra/",
    "/admin/",
    "/ws/tasks/%00/",
    "/" + "a" * 5000,
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("who", ["anonymous", "operator"])
async def test_an_unknown_socket_path_is_closed_without_an_error(path, who, caplog):
    headers = [ORIGIN, HOST]
    if who == "operator":
        _, _, alice, _ = await two_workspaces()
        headers.append(await session_cookie(alice))
    communicator = Communicator(application, path, headers=headers)
    with caplog.at_level(logging.WARNING):
        connected, code = await communicator.connect()
    assert (connected, code) == (False, CLOSE_NOT_FOUND)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR or record.exc_info]


@pytest.mark.parametrize("task_id", ["99999999999999999999999", "9223372036854775808", "0"])
async def test_a_task_id_out_of_range_is_forbidden_like_a_missing_task(task_id):
    _, _, alice, _ = await two_workspaces()
    headers = [ORIGIN, HOST, await session_cookie(alice)]
    communicator = Communicator(application, f"/ws/tasks/{task_id}/", headers=headers)
    connected, code = await communicator.connect()
    assert (connected, code) == (False, 4403)
