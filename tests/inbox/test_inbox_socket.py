"""The inbox's socket (``/ws/inbox/``): what it lists, what it hears live, and the answers it takes.

It lists only what waits in its viewer's workspaces, catching up on connect
and patching as questions arrive and leave; it answers through the task
page's path, recorded as from the inbox; a bad or foreign frame gets a
sentence and changes nothing.
"""

import json
import re

import pytest
from channels.db import database_sync_to_async

from kandev_web.asgi import application
from kandev_web.clarifications import services
from kandev_web.clarifications.models import Clarification, Status, Surface
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions import events
from kandev_web.sessions.models import SessionState, TaskSession
from testing_support.sockets import HOST, Communicator, two_running_tasks

ORIGIN = (b"origin", b"http://127.0.0.1")
OUTCOME = 'hx-swap-oob="beforeend:#answer-outcomes"'

# On PostgreSQL too: the inbox reads permission requests by their JSON metadata (status, pending id).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.postgres]

BUNDLE = parse_bundle(
    [
        {
            "id": "db",
            "prompt": "Which <b>database</b>?",
            "options": [
                {"label": "Postgres", "description": "relational"},
                {"label": "SQLite", "description": "embedded"},
            ],
        }
    ]
)


@database_sync_to_async
def _ask(task) -> Clarification:
    record, _ = services.request_clarification(task.sessions.get(), BUNDLE)
    return record


@database_sync_to_async
def _record(record) -> Clarification:
    return Clarification.objects.get(pk=record.pk)


async def _open(cookie, *headers) -> tuple[Communicator, str]:
    communicator = Communicator(application, "/ws/inbox/", headers=[ORIGIN, HOST, *headers, cookie])
    connected, _ = await communicator.connect()
    assert connected
    return communicator, await communicator.receive_from(timeout=20)


async def _frame_with(communicator, marker: str) -> str:
    while True:
        output = await communicator.receive_output(timeout=20)
        assert output["type"] != "websocket.close", "the socket was closed"
        if marker in output.get("text", ""):
            return output["text"]


def _listed(frame: str) -> list[str]:
    return re.findall(r'<li id="inbox-item-([^"]+)"', frame)


def _answer(pending_id, **fields) -> str:
    return json.dumps({"type": "clarification.answer", "pending_id": pending_id, "HEADERS": {}, **fields})


async def test_an_anonymous_socket_is_refused():
    communicator = Communicator(application, "/ws/inbox/", headers=[ORIGIN, HOST])
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4403


async def test_the_first_frame_lists_what_waits_in_the_viewers_workspaces_only_with_its_count():
    mine, theirs, cookie = await two_running_tasks()
    record, foreign = await _ask(mine), await _ask(theirs)
    communicator, frame = await _open(cookie)
    assert _listed(frame) == [record.pending_id]
    assert foreign.pending_id not in frame
    assert "Theirs task" not in frame
    assert re.search(r'id="inbox-count"[^>]*data-count="1"', frame)
    # The agent's words are text, never markup.
    assert "Which &lt;b&gt;database&lt;/b&gt;?" in frame
    assert "<b>database</b>" not in frame
    await communicator.disconnect()


async def test_a_question_asked_and_answered_elsewhere_arrives_and_leaves_live():
    mine, theirs, cookie = await two_running_tasks()
    communicator, frame = await _open(cookie)
    assert _listed(frame) == []
    await _ask(theirs)  # another workspace's: never heard here
    record = await _ask(mine)
    arrived = await _frame_with(communicator, '<li id="inbox-item-')
    assert _listed(arrived) == [record.pending_id]
    assert 'hx-swap-oob="beforeend:#inbox-items"' in arrived
    # The item first, as rendered once for every member; then the count, and never the item twice.
    counted = await _frame_with(communicator, 'id="inbox-count"')
    assert re.search(r'id="inbox-count"[^>]*data-count="1"', counted)
    assert "<li id=" not in counted

    await database_sync_to_async(services.respond)(record.pending_id, rejected=True)
    left = await _frame_with(communicator, 'data-state="left"')
    assert f'id="inbox-item-{record.pending_id}"' in left
    assert 'data-reason="operator_skipped"' in left
    assert "Skipped" in left
    await communicator.disconnect()


async def test_an_answer_frame_is_delivered_and_recorded_as_from_the_inbox():
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    communicator, _ = await _open(cookie)
    await communicator.send_to(text_data=_answer(record.pending_id, **{"answer-db-option": "db_opt1"}))
    assert 'data-outcome="delivered"' in await _frame_with(communicator, OUTCOME)
    answered = await _record(record)
    assert answered.status == Status.ANSWERED
    assert answered.answered_via == Surface.INBOX
    await communicator.disconnect()


async def test_another_workspaces_question_cannot_be_answered_and_a_bad_frame_leaves_the_socket_open():
    mine, theirs, cookie = await two_running_tasks()
    record, foreign = await _ask(mine), await _ask(theirs)
    communicator, _ = await _open(cookie)
    await communicator.send_to(text_data=_answer(foreign.pending_id, **{"answer-db-option": "db_opt1"}))
    assert "not one you can answer here" in await _frame_with(communicator, 'data-testid="toast"')
    assert (await _record(foreign)).status == Status.PENDING
    await communicator.send_to(text_data="not json")
    assert "not JSON" in await _frame_with(communicator, 'data-testid="toast"')
    await communicator.send_to(text_data=_answer(record.pending_id, **{"answer-db-option": "db_opt1"}))
    assert 'data-outcome="delivered"' in await _frame_with(communicator, OUTCOME)
    await communicator.disconnect()


async def test_a_permission_request_is_listed_while_its_session_runs():
    mine, _, cookie = await two_running_tasks()

    @database_sync_to_async
    def request_permission():
        session = mine.sessions.get()
        options = [{"optionId": "allow-once", "name": "Allow", "kind": "allow_once"}]
        payload = {"pending_id": "perm-1", "tool_call": {"title": "rm"}, "options": options}
        events.record_permission_requested(session.pk, payload)

    await request_permission()
    communicator, frame = await _open(cookie)
    assert _listed(frame) == ["perm-1"]
    assert 'data-testid="permission-card"' in frame
    await communicator.disconnect()
    await database_sync_to_async(TaskSession.objects.filter(task=mine).update)(state=SessionState.FAILED)
    communicator, frame = await _open(cookie)
    assert _listed(frame) == [], "an agent that went away took its request with it"
    await communicator.disconnect()


async def test_an_operator_taken_out_of_a_workspace_hears_no_more_of_its_questions():
    mine, _, cookie = await two_running_tasks()
    communicator, _ = await _open(cookie)

    @database_sync_to_async
    def leave():
        workspace = mine.board.workspace
        workspace.members.remove(*workspace.members.all())

    await leave()
    # Everything the removal sends (the access check, a catch-up) is read first.
    while not await communicator.receive_nothing(timeout=0.5):
        await communicator.receive_output()
    await _ask(mine)
    frames = []
    while not await communicator.receive_nothing(timeout=1):
        frames.append((await communicator.receive_output()).get("text", ""))
    assert not any('<li id="inbox-item-' in frame for frame in frames), frames
    await communicator.disconnect()
