"""A notification is said in the language of each page that shows it: two operators, two languages, one event."""

import pytest
from channels.db import database_sync_to_async

from kandev_web.asgi import application
from kandev_web.notifications import services
from kandev_web.notifications.models import Event
from kandev_web.sessions.models import SessionState, TaskSession, Turn
from testing_support.sockets import HOST, Communicator, session_cookie, two_workspaces

ORIGIN = (b"origin", b"http://127.0.0.1")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _board_socket(board_id, cookie, language):
    name, value = cookie
    headers = [HOST, ORIGIN, (name, value + f"; django_language={language}".encode())]
    communicator = Communicator(application, f"/ws/boards/{board_id}/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=20)  # the catch-up
    return communicator


async def test_each_page_says_the_notification_in_its_viewers_language():
    mine, _theirs, alice, _ = await two_workspaces()

    @database_sync_to_async
    def setting_up():
        bruno = type(alice).objects.create_user("bruno")
        mine.board.workspace.members.add(bruno)
        mine.title = "Parser <bauen>"
        mine.save()
        session = TaskSession.objects.create(task=mine, state=SessionState.RUNNING)
        return bruno, session, Turn.objects.create(session=session), mine.board_id

    bruno, session, turn, board_id = await setting_up()
    for user in (alice, bruno):
        await database_sync_to_async(services.set_enabled)(user, Event.TURN_FINISHED, True)
    english = await _board_socket(board_id, await session_cookie(alice), "en")
    german = await _board_socket(board_id, await session_cookie(bruno), "de")

    await database_sync_to_async(services.turn_finished)(session, turn)

    toast = await english.receive_from(timeout=20)
    assert "Agent finished its turn" in toast
    assert "The agent finished its turn on &quot;Parser &lt;bauen&gt;&quot;." in toast
    toast = await german.receive_from(timeout=20)
    assert "Agent hat seinen Durchlauf beendet" in toast
    # The task's title stays as written, and escaped.
    assert "Der Agent hat seinen Durchlauf an „Parser &lt;bauen&gt;“ beendet." in toast
    for communicator in (english, german):
        await communicator.disconnect()
