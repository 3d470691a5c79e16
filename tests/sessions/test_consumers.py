"""The task socket's first frame: the page as it is now, for a tab that was away.

A tab whose socket dropped reconnects with what it has in its URL (the last
timeline message, how far each step of its task list is shown); the first
frame brings it up to date: the open questions, session state, changed
permission cards and questions, new messages and the task list.
"""

import re

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from kandev_web.asgi import application
from kandev_web.board.models import Board, Task, Workspace
from kandev_web.clarifications import services as clarifications
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.pages.board import queries
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession, Turn
from testing_support.sockets import HOST, Communicator

ORIGIN = (b"origin", b"http://127.0.0.1")

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

QUESTIONS = parse_bundle(
    [
        {
            "id": "db",
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
)


@database_sync_to_async
def setup_task():
    workspace = Workspace.objects.create(name="Platform")
    member = get_user_model().objects.create_user("alice")
    workspace.members.add(member)
    board = Board.objects.create(workspace=workspace, name="Main")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="Pick a stack")
    session = TaskSession.objects.create(task=task, state=SessionState.RUNNING)
    turn = Turn.objects.create(session=session)
    seen = Message.objects.create(session=session, turn=turn, content="Looking at the repository")
    client = Client()
    client.force_login(member)
    cookie = (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())
    return task, session, seen, cookie


async def catch_up(path, cookie) -> str:
    communicator = Communicator(application, path, headers=[ORIGIN, HOST, cookie])
    connected, _ = await communicator.connect()
    assert connected
    frame = await communicator.receive_from(timeout=20)
    await communicator.disconnect()
    return frame


def appended(frame: str) -> list[int]:
    """The ids of the messages the frame adds to the end of the timeline."""
    return [int(pk) for pk in re.findall(r'<div hx-swap-oob="beforeend:#timeline">\s*<li id="message-(\d+)"', frame)]


async def test_a_question_asked_while_the_tab_was_away_is_in_its_first_frame():
    task, session, seen, cookie = await setup_task()
    record, _ = await database_sync_to_async(clarifications.request_clarification)(session, QUESTIONS)

    frame = await catch_up(f"/ws/tasks/{task.pk}/?after={seen.pk}", cookie)

    assert re.search(rf'data-testid="clarification-overlay"\s+data-pending-id="{record.pending_id}"', frame)
    assert 'id="composer"' in frame
    assert 'data-mode="clarification"' in frame
    assert 'data-session-state="WAITING_FOR_INPUT"' in frame
    assert 'data-testid="task-state-waiting-for-input"' in frame
    question = await database_sync_to_async(Message.objects.get)(type=MessageType.CLARIFICATION_REQUEST)
    assert appended(frame) == [question.pk], "only the message the tab did not have is added"


async def test_a_question_settled_while_the_tab_was_away_leaves_its_overlay():
    task, session, _seen, cookie = await setup_task()
    record, _ = await database_sync_to_async(clarifications.request_clarification)(session, QUESTIONS)
    question = await database_sync_to_async(Message.objects.get)(type=MessageType.CLARIFICATION_REQUEST)
    # The tab had the question; then someone skipped it.
    await database_sync_to_async(clarifications.respond)(record.pending_id, rejected=True)

    frame = await catch_up(f"/ws/tasks/{task.pk}/?after={question.pk}", cookie)

    assert 'id="composer"' in frame
    assert 'data-testid="clarification-overlay"' not in frame
    assert 'data-mode="clarification"' not in frame
    replaced = re.search(rf'<li id="message-{question.pk}"[^>]*hx-swap-oob="true"', frame)
    assert replaced, "the record is replaced in place"
    assert 'data-testid="clarification-record" data-pending-id="' in frame
    assert 'data-status="rejected"' in frame
    assert appended(frame) == []


async def test_a_permission_card_answered_while_the_tab_was_away_is_replaced():
    task, session, _, cookie = await setup_task()

    @database_sync_to_async
    def answered_card():
        metadata = {
            "pending_id": "p-1",
            "status": "approved",
            "outcome": "selected",
            "option_id": "allow",
            "options": [{"optionId": "allow", "name": "Allow once", "kind": "allow_once"}],
        }
        # A permission card of an earlier turn: not re-sent as part of the latest turn.
        card = Message.objects.create(
            session=session, type=MessageType.PERMISSION_REQUEST, content="rm -rf build", metadata=metadata
        )
        Turn.objects.create(session=session)
        return card

    card = await answered_card()
    frame = await catch_up(f"/ws/tasks/{task.pk}/?after={card.pk}", cookie)

    assert re.search(rf'<li id="message-{card.pk}"[^>]*hx-swap-oob="true"', frame)
    assert 'data-testid="permission-outcome" data-outcome="selected"' in frame
    assert "Answered: Allow once" in frame


async def test_the_task_list_is_sent_as_far_as_the_page_had_shown_it(monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 2)
    task, _, _, cookie = await setup_task()

    @database_sync_to_async
    def more_tasks():
        return [
            Task.objects.create(board=task.board, step=task.step, title=f"Task {i}", position=i + 1) for i in range(4)
        ]

    others = await more_tasks()
    # The page had clicked "Show more" once: it showed four rows of the step.
    frame = await catch_up(f"/ws/tasks/{task.pk}/?through={task.step_id}:{others[2].sort_key}", cookie)

    task_list = re.search(r'<aside id="task-list".*?</aside>', frame, re.S).group(0)
    assert 'hx-swap-oob="true"' in task_list.split(">", 1)[0]
    rows = [int(pk) for pk in re.findall(r'<li id="task-row-(\d+)"', task_list)]
    assert rows == [task.pk, *(other.pk for other in others[:3])]
    assert f'data-through="{others[2].sort_key}" data-more="true"' in task_list
