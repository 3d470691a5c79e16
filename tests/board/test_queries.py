"""The board reads a constant number of queries whatever the number of tasks."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.pages.board import queries
from kandev_web.pages.board.queries import board_columns, changed_cards
from testing_support.boards import populate


def count_queries(board):
    with CaptureQueriesContext(connection) as captured:
        columns = board_columns(board)
        [card.icon for column in columns for card in column.cards]
    return len(captured), columns


@pytest.mark.parametrize("n", [5, 60])
def test_board_query_count_is_constant(board, n):
    populate(board, n)
    count, columns = count_queries(board)
    assert count <= 7
    assert sum(column.count for column in columns) == n


def test_columns_longer_than_a_page_show_the_first_page_in_order(board, monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 4)
    tasks = populate(board, 30)
    columns = board_columns(board)
    for column in columns:
        in_step = [t.pk for t in tasks if t.step_id == column.step.pk]
        assert [card.task.pk for card in column.cards] == in_step[:4]
        assert (column.count, column.more) == (len(in_step), True)
        assert column.through == f"{column.cards[-1].task.position},{column.cards[-1].task.pk}"


def test_a_live_patch_reads_the_same_number_of_queries_for_any_board(board, workspace):
    from kandev_web.board.models import Board

    large = Board.objects.create(workspace=workspace, name="Large")
    large.add_default_steps()
    counts = []
    for each, n in ((board, 4), (large, 80)):
        tasks = populate(each, n)
        with CaptureQueriesContext(connection) as captured:
            columns, gone = changed_cards(each, step_ids=[tasks[1].step_id], task_ids=[tasks[1].pk, 10_000])
        counts.append(len(captured))
        assert [card.task.pk for column in columns for card in column.cards] == [tasks[1].pk]
        assert gone == [10_000]
    assert counts[0] == counts[1]


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


def test_a_pinned_task_past_its_columns_first_page_is_read_in_the_same_queries(board, monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 2)
    tasks = populate(board, 20)
    far, near = tasks[-1], tasks[0]
    with CaptureQueriesContext(connection) as plain:
        board_columns(board)
    with CaptureQueriesContext(connection) as pinned:
        columns = board_columns(board, pinned_task_id=far.pk)
    assert len(pinned) == len(plain)
    column = next(c for c in columns if c.step.pk == far.step_id)
    assert column.pinned.task.pk == far.pk
    assert far.pk not in [card.task.pk for card in column.cards]
    assert column.through == column.cards[-1].task.sort_key, "Show more still resumes after the first page"
    assert [c.pinned for c in columns if c is not column] == [None] * 3
    # On the first page already: not pinned a second time.
    columns = board_columns(board, pinned_task_id=near.pk)
    assert all(c.pinned is None for c in columns)
    assert near.pk in [card.task.pk for c in columns for card in c.cards]


def test_a_column_is_read_as_far_as_a_reconnecting_page_had_shown_it(board, monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 4)
    tasks = populate(board, 40)
    steps = list(board.steps.all())
    shown_to = [t for t in tasks if t.step_id == steps[0].pk][6]
    with CaptureQueriesContext(connection) as captured:
        columns = board_columns(board, through={steps[0].pk: (shown_to.position, shown_to.pk)})
    assert len(captured) == count_queries(board)[0], "as many queries as a fresh page"
    for column in columns:
        in_step = [t.pk for t in tasks if t.step_id == column.step.pk]
        shown = in_step[:7] if column.step == steps[0] else in_step[:4]
        assert [card.task.pk for card in column.cards] == shown
        assert (column.count, column.more) == (10, True)
    assert columns[0].through == shown_to.sort_key


@given(st.lists(st.text()))
def test_what_a_page_says_it_shows_never_breaks_the_read(values):
    through = queries.parse_shown_through(values)
    assert all(isinstance(step, int) and len(key) == 2 for step, key in through.items())


def test_what_a_page_says_it_shows_is_read_per_column():
    values = ["3:10,42", "4:", "x:1,2", "5:1,2,3", "6:7,8"]
    assert queries.parse_shown_through(values) == {3: (10, 42), 6: (7, 8)}
