"""Hostile input on the live sockets gets an error frame or a fresh catch-up, never a socket closed with 1011.

In process, through the whole ASGI application (origin, auth, consumer);
e2e/test_hostile_socket_input.py sends the same over a real Daphne.
"""

import json

import pytest

from kandev_web.asgi import application
from testing_support.sockets import HOST, Communicator, session_cookie, two_workspaces

ORIGIN = (b"origin", b"http://127.0.0.1")
NESTED = "[" * 100_000 + "]" * 100_000

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _open(path: str):
    """Alice's socket on ``path`` (``{task}`` and ``{board}`` filled in), and its first frame."""
    mine, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)
    path = path.format(task=mine.pk, board=mine.board_id)
    communicator = Communicator(application, path, headers=[HOST, ORIGIN, cookie])
    connected, code = await communicator.connect()
    assert connected, code
    return communicator, await communicator.receive_from(timeout=20)


async def _still_answers(communicator) -> None:
    await communicator.send_to(json.dumps({"type": "clarification.answer", "pending_id": "no-such-question"}))
    assert 'data-outcome="unknown"' in await communicator.receive_from(timeout=20)
    await communicator.disconnect()


@pytest.mark.parametrize("path", ["/ws/tasks/{task}/", "/ws/boards/{board}/", "/ws/inbox/"])
async def test_json_nested_past_the_parser_gets_a_bad_frame_error(path):
    communicator, _ = await _open(path)
    await communicator.send_to(NESTED)
    assert 'data-outcome="bad_frame"' in await communicator.receive_from(timeout=20)
    await _still_answers(communicator)


@pytest.mark.parametrize("path", ["/ws/tasks/{task}/", "/ws/boards/{board}/", "/ws/inbox/"])
async def test_a_lone_surrogate_pending_id_is_answered_as_an_unknown_question_and_encodes(path):
    communicator, _ = await _open(path)
    await communicator.send_to('{"type": "clarification.answer", "pending_id": "\\ud800"}')
    reply = await communicator.receive_from(timeout=20)
    assert 'data-outcome="unknown"' in reply
    reply.encode("utf-8")  # what Daphne does with it; a surrogate echoed back failed here
    await _still_answers(communicator)


@pytest.mark.parametrize(
    "query",
    ["through=99999999999999999999:1,1", "through=1:99999999999999999999,1", "through=1:1,-99999999999999999999"],
)
async def test_a_board_reconnecting_with_numbers_beyond_any_column_is_caught_up_as_a_fresh_page(query):
    communicator, catch_up = await _open("/ws/boards/{board}/?" + query)
    assert 'data-testid="kanban-board"' in catch_up
    await _still_answers(communicator)
