"""Live board and task sockets: who may connect, and what they receive."""

import re

import pytest
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from kandev_web.asgi import application
from kandev_web.board import services
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.pages.board import queries
from kandev_web.sessions.tasks import create_task, move_task
from testing_support.sockets import HOST, Communicator

ORIGIN = (b"origin", b"http://127.0.0.1")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


@database_sync_to_async
def setup_board():
    workspace = Workspace.objects.create(name="Platform")
    member = get_user_model().objects.create_user("alice", password="pw-123456")
    outsider = get_user_model().objects.create_user("mallory", password="pw-123456")
    workspace.members.add(member)
    board = Board.objects.create(workspace=workspace, name="Main")
    board.add_default_steps()
    return board, member, outsider


async def connect(path, *headers):
    """A socket on ``path``; when it is accepted, its first frame (the catch-up, tested below) has been read."""
    communicator, connected, code = await connect_raw(path, *headers)
    if connected:
        await communicator.receive_from(timeout=20)
    return communicator, connected, code


async def connect_raw(path, *headers):
    communicator = Communicator(application, path, headers=[HOST, *headers])
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_unauthenticated_socket_is_closed():
    board, _, _ = await setup_board()
    _communicator, connected, code = await connect(f"/ws/boards/{board.pk}/", ORIGIN)
    assert not connected
    assert code == 4403


async def test_foreign_origin_is_rejected():
    board, member, _ = await setup_board()
    cookie = await database_sync_to_async(session_cookie)(member)
    _communicator, connected, _ = await connect(f"/ws/boards/{board.pk}/", (b"origin", b"http://evil.example"), cookie)
    assert not connected


async def test_another_workspaces_operator_cannot_subscribe():
    board, _, outsider = await setup_board()
    cookie = await database_sync_to_async(session_cookie)(outsider)
    communicator, connected, code = await connect(f"/ws/boards/{board.pk}/", ORIGIN, cookie)
    assert (connected, code) == (False, 4403)
    assert await communicator.receive_nothing(), "a refused socket is sent no catch-up"
    _task_socket, connected, code = await connect("/ws/tasks/1/", ORIGIN, cookie)
    assert (connected, code) == (False, 4403)


async def _member_sees_a_created_task():
    board, member, _ = await setup_board()
    cookie = await database_sync_to_async(session_cookie)(member)
    communicator, connected, _ = await connect(f"/ws/boards/{board.pk}/", ORIGIN, cookie)
    assert connected
    backlog = await database_sync_to_async(lambda: board.steps.first())()
    await database_sync_to_async(create_task)(board, title="Live <i>one</i>", description="", step=backlog)
    html = await communicator.receive_from(timeout=20)
    assert f'id="kanban-column-head-{backlog.pk}"' in html
    assert f'data-live-into="kanban-cards-{backlog.pk}"' in html
    assert "Live &lt;i&gt;one&lt;/i&gt;" in html
    await communicator.disconnect()


async def test_member_receives_the_new_card_with_the_in_memory_layer():
    await _member_sees_a_created_task()


async def test_member_receives_the_new_card_with_redis(redis_url):
    layers = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url], "prefix": "kandev-test-board"},
        }
    }
    with override_settings(CHANNEL_LAYERS=layers):
        channel_layers.backends.clear()
        try:
            await _member_sees_a_created_task()
        finally:
            channel_layers.backends.clear()


async def test_task_socket_follows_changes_and_deletion():
    board, member, _ = await setup_board()
    task = await database_sync_to_async(
        lambda: Task.objects.create(board=board, step=board.steps.first(), title="Watch me")
    )()
    cookie = await database_sync_to_async(session_cookie)(member)
    communicator, connected, _ = await connect(f"/ws/tasks/{task.pk}/", ORIGIN, cookie)
    assert connected
    await database_sync_to_async(services.update_task)(task, title="Watched", description="")
    frames = [await communicator.receive_from(timeout=20) for _ in range(2)]
    assert any(f'id="task-row-{task.pk}"' in frame and "Watched" in frame for frame in frames)
    assert any('data-testid="task-title">Watched<' in frame for frame in frames)
    task_id = task.pk
    await database_sync_to_async(services.delete_task)(task)
    frames = [await communicator.receive_from(timeout=20) for _ in range(2)]
    assert any(f'data-live-remove="task-row-{task_id}"' in frame for frame in frames)
    assert any('data-testid="task-deleted-notice"' in frame for frame in frames)
    await communicator.disconnect()


async def test_a_change_to_another_task_sends_only_its_card_and_row():
    """A task page and a board open while one task of a busy board changes: only that task is re-sent."""
    board, member, _ = await setup_board()

    @database_sync_to_async
    def tasks():
        backlog = board.steps.first()
        return [Task.objects.create(board=board, step=backlog, title=f"Task {i}", position=i) for i in range(5)]

    watched, *others = await tasks()
    changed = others[2]
    cookie = await database_sync_to_async(session_cookie)(member)
    task_page, connected, _ = await connect(f"/ws/tasks/{watched.pk}/", ORIGIN, cookie)
    board_page, board_connected, _ = await connect(f"/ws/boards/{board.pk}/", ORIGIN, cookie)
    assert connected
    assert board_connected
    await database_sync_to_async(services.update_task)(changed, title="Renamed", description="")

    row = await task_page.receive_from(timeout=20)
    assert f'id="task-row-{changed.pk}"' in row
    assert "Renamed" in row
    assert row.count('<li id="task-row-') == 1
    assert 'class="task-row"' in row, "the changed row is not the page's current task"
    card = await board_page.receive_from(timeout=20)
    assert f'id="task-card-{changed.pk}"' in card
    assert "Renamed" in card
    assert card.count('<li id="task-card-') == 1
    assert await task_page.receive_nothing(timeout=0.2), "a task.changed for another task reached this page"
    await task_page.disconnect()
    await board_page.disconnect()


def cards_in(frame: str, step_id: int) -> list[int]:
    column = re.search(rf'<section id="kanban-column-{step_id}".*?</section>', frame, re.S).group(0)
    return [int(pk) for pk in re.findall(r'<li id="task-card-(\d+)"', column)]


async def test_a_board_socket_is_first_sent_every_column_as_far_as_the_page_shows_it(monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 2)
    board, member, _ = await setup_board()

    @database_sync_to_async
    def tasks():
        backlog, in_progress = list(board.steps.all())[:2]
        long = [Task.objects.create(board=board, step=backlog, title=f"Task {i}", position=i) for i in range(5)]
        short = [Task.objects.create(board=board, step=in_progress, title=f"Doing {i}", position=i) for i in range(3)]
        return long, short

    long, short = await tasks()
    backlog, in_progress = long[0].step_id, short[0].step_id
    cookie = await database_sync_to_async(session_cookie)(member)
    # "Show more" had taken Backlog to its fourth card; In Progress shows its first page.
    path = f"/ws/boards/{board.pk}/?through={backlog}:{long[3].sort_key}"
    communicator, connected, _ = await connect_raw(path, ORIGIN, cookie)
    assert connected
    frame = await communicator.receive_from(timeout=20)

    assert frame.lstrip().startswith('<div id="kanban" class="kanban" data-testid="kanban-board" hx-swap-oob="true">')
    assert cards_in(frame, backlog) == [task.pk for task in long[:4]]
    assert cards_in(frame, in_progress) == [task.pk for task in short[:2]]
    head = f'id="kanban-column-head-{backlog}" class="column-head" data-testid="kanban-column-head" data-count="5"'
    assert head in frame
    assert f'data-step-id="{backlog}" data-through="{long[3].sort_key}" data-more="true"' in frame
    await communicator.disconnect()


async def test_a_reconnecting_board_socket_is_sent_what_changed_while_it_was_away():
    board, member, _ = await setup_board()

    @database_sync_to_async
    def tasks():
        backlog = board.steps.first()
        return [Task.objects.create(board=board, step=backlog, title=f"Task {i}", position=i) for i in range(3)]

    moved, deleted, kept = await tasks()
    cookie = await database_sync_to_async(session_cookie)(member)
    away, connected, _ = await connect(f"/ws/boards/{board.pk}/", ORIGIN, cookie)
    await away.disconnect()

    @database_sync_to_async
    def meanwhile():
        review = board.steps.get(name="Review")
        move_task(moved, review)
        services.delete_task(deleted)
        return review.pk

    review = await meanwhile()
    back, connected, _ = await connect_raw(f"/ws/boards/{board.pk}/", ORIGIN, cookie)
    assert connected
    frame = await back.receive_from(timeout=20)
    assert cards_in(frame, kept.step_id) == [kept.pk]
    assert cards_in(frame, review) == [moved.pk]
    assert f'id="task-card-{deleted.pk}"' not in frame
    await back.disconnect()
