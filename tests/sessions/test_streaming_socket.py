"""Streamed text on a task page's socket: deltas as they come, with no database read, then the whole message once.

Over the real ASGI application (a ``WebsocketCommunicator``), with what
``sessions.events`` records and announces after commit.
"""

import re

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db.backends.utils import CursorWrapper

from kandev_web import live
from kandev_web.asgi import application
from kandev_web.sessions import events
from kandev_web.sessions.models import Message
from testing_support.sockets import HOST, Communicator, running_sessions, session_cookie, two_workspaces

ORIGIN = (b"origin", b"http://127.0.0.1")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest_asyncio.fixture
async def watching():
    """Alice's task with a running session, a message streaming in it, and her task page's socket, caught up."""
    task, _theirs, alice, _mallory = await two_workspaces()
    await running_sessions(task)
    session = await database_sync_to_async(lambda: task.sessions.get())()
    await database_sync_to_async(events.record_text_chunks)(session.pk, "agent_message_chunk", "Hello")
    message = await database_sync_to_async(Message.objects.get)()
    communicator = Communicator(
        application, f"/ws/tasks/{task.pk}/?after={message.pk}", headers=[ORIGIN, HOST, await session_cookie(alice)]
    )
    connected, _ = await communicator.connect()
    assert connected
    catch_up = await communicator.receive_from(timeout=20)
    assert f'id="message-{message.pk}-stream"' in catch_up
    assert re.search(rf'<li id="message-{message.pk}"[^>]*data-streaming="true"', catch_up)
    yield communicator, task, session, message
    await communicator.disconnect()


def delta(message, text):
    return f'<div hx-swap-oob="beforeend:#message-{message.pk}-stream">{text}</div>'


async def appended(task, message, offset, text):
    event = {"type": "message.appended", "message_id": message.pk, "offset": offset, "text": text}
    await get_channel_layer().group_send(live.task_group(task.pk), event)


async def test_a_delta_reaches_the_page_escaped_without_a_database_read(watching, monkeypatch):
    communicator, task, _session, message = watching
    statements = []
    execute = CursorWrapper.execute
    # Every statement on any thread's connection: the socket's handlers run on a thread of their own.

    def logged(self, sql, params=None):
        statements.append(sql)
        return execute(self, sql, params)

    monkeypatch.setattr(CursorWrapper, "execute", logged)

    await appended(task, message, 5, " <b>world</b> & <script>")
    frame = await communicator.receive_from(timeout=10)

    assert frame == delta(message, " &lt;b&gt;world&lt;/b&gt; &amp; &lt;script&gt;")
    assert [sql for sql in statements if Message._meta.db_table in sql] == []


async def test_recorded_chunks_stream_to_the_page_and_the_whole_message_is_rendered_once_when_the_turn_ends(watching):
    communicator, _task, session, message = watching
    for text in [", **world**", "\n\n- one", "\n- two"]:
        await database_sync_to_async(events.record_text_chunks)(session.pk, "agent_message_chunk", text)
        assert await communicator.receive_from(timeout=10) == delta(message, text)

    await database_sync_to_async(events.record_turn_completed)(session.pk, {"stop_reason": "end_turn"})
    # Then something that comes after all the turn's end brought: a tool call's row.
    tool_call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls"}
    await database_sync_to_async(events.record_session_update)(session.pk, tool_call)
    frames = [await communicator.receive_from(timeout=10)]
    while 'data-type="tool_call"' not in frames[-1]:
        frames.append(await communicator.receive_from(timeout=10))

    renders = [f for f in frames if f'<li id="message-{message.pk}"' in f]
    assert len(renders) == 1, "rendered whole once"
    assert re.search(rf'<li id="message-{message.pk}"[^>]*data-streaming="false"', renders[0])
    assert "<strong>world</strong>" in renders[0]
    assert "<li>two</li>" in renders[0]
    assert f'id="message-{message.pk}-stream"' not in renders[0]


async def test_a_delta_the_page_already_has_from_a_whole_render_is_not_shown_twice(watching):
    communicator, task, session, message = watching
    # The page has " world" as a delta, then the whole message with it: a delta of it read later is not shown again.
    await database_sync_to_async(events.record_text_chunks)(session.pk, "agent_message_chunk", " world")
    assert await communicator.receive_from(timeout=10) == delta(message, " world")
    await get_channel_layer().group_send(
        live.task_group(task.pk), {"type": "message.changed", "message_id": message.pk, "created": False}
    )
    assert "Hello world" in await communicator.receive_from(timeout=10)

    await appended(task, message, 5, " world")  # had from the render: nothing is sent
    await appended(task, message, 8, "rld!")  # half had: only what is new
    assert await communicator.receive_from(timeout=10) == delta(message, "!")


async def test_a_page_that_missed_a_delta_is_sent_the_whole_message(watching):
    communicator, task, _session, message = watching
    await appended(task, message, 12, "after a gap")
    frame = await communicator.receive_from(timeout=10)
    assert re.search(rf'hx-swap-oob="beforeend:#timeline">\s*<li id="message-{message.pk}"', frame)
    assert "Hello" in frame
