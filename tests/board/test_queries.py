"""The board reads a constant number of queries whatever the number of tasks."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kandev_web.board.queries import board_columns
from kandev_web.board.models import Task
from kandev_web.sessions.models import Activity, Message, MessageType, SessionState, TaskSession, Turn


def populate(board, n):
    steps = list(board.steps.all())
    tasks = Task.objects.bulk_create(
        Task(board=board, step=steps[i % len(steps)], title=f"Task {i}", position=i) for i in range(n)
    )
    for i, task in enumerate(tasks):
        session = TaskSession.objects.create(
            task=task, state=SessionState.RUNNING, activity=Activity.GENERATING if i % 3 == 0 else ""
        )
        turn = Turn.objects.create(session=session)
        if i % 2:
            Message.objects.create(
                session=session, turn=turn, type=MessageType.CLARIFICATION_REQUEST, metadata={"status": "pending"}
            )
    return tasks


def count_queries(board):
    with CaptureQueriesContext(connection) as queries:
        columns = board_columns(board)
        [card.icon for column in columns for card in column.cards]
    return len(queries), columns


@pytest.mark.parametrize("n", [5, 60])
def test_board_query_count_is_constant(board, n):
    populate(board, n)
    queries, columns = count_queries(board)
    assert queries <= 6
    assert sum(column.count for column in columns) == n


def test_same_count_for_small_and_large_boards(board, workspace):
    from kandev_web.board.models import Board

    small = board
    large = Board.objects.create(workspace=workspace, name="Large")
    large.add_default_steps()
    populate(small, 4)
    populate(large, 80)
    assert count_queries(small)[0] == count_queries(large)[0]


def test_cards_show_waiting_for_input_for_pending_clarifications(board):
    tasks = populate(board, 4)
    icons = {card.task.pk: card.icon.testid for column in board_columns(board) for card in column.cards}
    assert icons[tasks[1].pk] == "task-state-waiting-for-input"
    assert icons[tasks[0].pk] == "task-state-running"
