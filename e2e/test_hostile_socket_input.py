"""Hostile input on a live socket gets an error frame, never a socket closed with 1011, on a real Daphne.

Each of these once raised inside a consumer, which Channels answers by
closing the socket with 1011 (and a traceback in the log): JSON nested
deeper than the parser recurses, a string holding a lone surrogate (JSON's
``\\ud800`` escape allows one; UTF-8, the database and the reply cannot
carry it, so it is read as U+FFFD), and integers beyond a database column in
a page's query string.
"""

import json
from contextlib import contextmanager

import pytest
from websockets.sync.client import connect

#: Deeper than Python's JSON parser recurses (its recursion limit is about a thousand).
NESTED = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def operator(server):
    return server.create_operator("prober", workspace="Probed", tasks=True)


@pytest.fixture(scope="module")
def cookie(server, operator):
    return server.session_cookie("prober")


def open_socket(server, cookie, path):
    url = server.url.replace("http://", "ws://", 1) + path
    return connect(url, origin=server.url, additional_headers={"Cookie": cookie}, proxy=None, open_timeout=20)


@contextmanager
def page_socket(server, operator, cookie, page):
    """The live socket of ``page`` (task, board or inbox), its catch-up read: every one of them takes answers."""
    path = {
        "task": f"/ws/tasks/{operator['task_ids'][0]}/",
        "board": f"/ws/boards/{operator['board_id']}/",
        "inbox": "/ws/inbox/",
    }[page]
    with open_socket(server, cookie, path) as socket:
        socket.recv(timeout=20)
        yield socket


def still_answers(socket) -> None:
    """The socket is open and answering: a frame for no known question gets its own error frame back."""
    socket.send(json.dumps({"type": "clarification.answer", "pending_id": "no-such-question"}))
    assert 'data-outcome="unknown"' in socket.recv(timeout=20)


@pytest.mark.parametrize("page", ["task", "board", "inbox"])
def test_json_nested_deeper_than_the_parser_recurses_gets_an_error_frame_and_the_socket_stays_open(
    server, operator, cookie, page
):
    with page_socket(server, operator, cookie, page) as socket:
        socket.send(NESTED)
        assert 'data-outcome="bad_frame"' in socket.recv(timeout=20)
        still_answers(socket)


@pytest.mark.parametrize("page", ["task", "board", "inbox"])
@pytest.mark.parametrize(
    "frame",
    [
        pytest.param('{"type": "clarification.answer", "pending_id": "\\ud800"}', id="in-the-pending-id"),
        pytest.param('{"type": "clarification.answer", "pending_id": "p", "\\udfff": "x"}', id="in-a-key"),
    ],
)
def test_a_lone_surrogate_is_read_as_the_replacement_character_and_answered_with_an_error_frame(
    server, operator, cookie, page, frame
):
    """Kept as U+FFFD, as all text coming in is (``storable``): a question nobody asked, said so."""
    with page_socket(server, operator, cookie, page) as socket:
        socket.send(frame)
        reply = socket.recv(timeout=20)
        assert 'data-outcome="unknown"' in reply
        still_answers(socket)


def test_a_board_answer_panel_frame_with_a_lone_surrogate_for_its_task_is_refused(server, operator, cookie):
    with page_socket(server, operator, cookie, "board") as socket:
        socket.send('{"type": "answer_panel.open", "task_id": "\\ud800"}')
        assert 'data-outcome="bad_frame"' in socket.recv(timeout=20)
        still_answers(socket)


def test_a_board_answer_panel_frame_naming_a_task_beyond_any_id_is_told_there_is_no_such_task(server, operator, cookie):
    with page_socket(server, operator, cookie, "board") as socket:
        socket.send(json.dumps({"type": "answer_panel.open", "task_id": 10**20}))
        assert "toast-error" in socket.recv(timeout=20)
        still_answers(socket)


@pytest.mark.parametrize(
    "query",
    [
        "through=99999999999999999999:1,1",
        "through=1:99999999999999999999,1",
        "through=1:1,-99999999999999999999",
    ],
)
def test_a_board_reconnecting_with_numbers_beyond_any_id_is_caught_up_as_a_fresh_page(server, operator, cookie, query):
    with open_socket(server, cookie, f"/ws/boards/{operator['board_id']}/?{query}") as socket:
        catch_up = socket.recv(timeout=20)
        assert 'data-testid="kanban-board"' in catch_up
        assert 'data-testid="kanban-column-' in catch_up


def test_a_task_page_reconnecting_after_a_message_beyond_any_id_is_caught_up(server, operator, cookie):
    with open_socket(server, cookie, f"/ws/tasks/{operator['task_ids'][0]}/?after=99999999999999999999") as socket:
        catch_up = socket.recv(timeout=20)
        assert catch_up
        still_answers(socket)
