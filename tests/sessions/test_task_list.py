"""The task page's task list: the board's steps, each with its first page of rows and "Show more".

Like the board's columns, whatever the board's size: a constant number of
queries, a bounded number of rows, and the page's own task always there.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kandev_web.board.models import Board, Task
from kandev_web.pages.board import queries
from kandev_web.pages.task.fragments import render_task_rows
from testing_support.boards import populate

HTMX = {"HTTP_HX_REQUEST": "true"}


def row_ids(html: str, step=None) -> list[int]:
    """The task rows in ``html`` (only those of ``step``'s group when given), in document order."""
    if step is not None:
        html = re.search(rf'<ol id="task-list-rows-{step.pk}".*?</ol>', html, re.S).group(0)
    return [int(pk) for pk in re.findall(r'<li id="task-row-(\d+)"', html)]


def group_count(html: str, step) -> int:
    return int(re.search(rf'id="task-list-head-{step.pk}"[^>]*data-count="(\d+)"', html).group(1))


def row_tag(html: str, task) -> str:
    return re.search(rf'<li id="task-row-{task.pk}"[^>]*>', html, re.S).group(0)


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 3)


def in_step(tasks, step):
    return [t for t in tasks if t.step_id == step.pk]


def test_the_task_page_reads_as_many_queries_on_a_small_board_as_on_a_large_one(operator_client, board, workspace):
    large = Board.objects.create(workspace=workspace, name="Large")
    large.add_default_steps()
    counts, sizes = [], []
    for each, n in ((board, 4), (large, 2 * 4 * queries.CARDS_PER_PAGE + 8)):
        tasks = populate(each, n)
        with CaptureQueriesContext(connection) as captured:
            html = operator_client.get(f"/tasks/{tasks[1].pk}/").text
        counts.append(len(captured))
        sizes.append(len(row_ids(html)))
    assert counts[0] == counts[1]
    # The large board shows a page per step, not its 408 tasks.
    assert sizes == [4, 4 * queries.CARDS_PER_PAGE]


def test_each_step_shows_its_first_page_with_a_count_and_show_more(operator_client, board, small_pages):
    backlog, doing, review, done = board.steps.all()
    tasks = populate(board, 18)  # 5, 5, 4, 4 per step
    html = operator_client.get(f"/tasks/{tasks[0].pk}/").text
    for step in (backlog, doing, review, done):
        ours = in_step(tasks, step)
        assert row_ids(html, step) == [t.pk for t in ours[:3]]
        assert group_count(html, step) == len(ours)
        last = ours[2]
        assert f'/tasks/{tasks[0].pk}/steps/{step.pk}/rows/?after={last.position},{last.pk}"' in html
    assert html.count('data-testid="task-list-show-more"') == 4
    assert 'data-current="true"' in row_tag(html, tasks[0])
    assert 'aria-current="page"' in html


def test_show_more_brings_a_steps_next_rows_after_the_last_one_shown(operator_client, board, small_pages):
    backlog = board.steps.first()
    tasks = [Task.objects.create(board=board, step=backlog, title=f"T{i}", position=i) for i in range(8)]
    current = tasks[0]
    url = f"/tasks/{current.pk}/steps/{backlog.pk}/rows/"
    # The last row shown was deleted meanwhile: the next page still starts right after it.
    last_shown = tasks[2].pk
    tasks[2].delete()
    second = operator_client.get(url, {"after": f"2,{last_shown}"}, **HTMX).text
    assert row_ids(second) == [t.pk for t in tasks[3:6]]
    assert f'?after=5,{tasks[5].pk}"' in second
    assert 'data-more="true"' in second
    assert group_count(second, backlog) == 7
    assert 'data-current="true"' not in second
    last = operator_client.get(url, {"after": f"5,{tasks[5].pk}"}, **HTMX).text
    assert row_ids(last) == [tasks[6].pk, tasks[7].pk]
    assert 'data-more="false"' in last
    assert "task-list-show-more" not in last


def test_show_more_refuses_a_malformed_key_and_another_boards_step(operator_client, board, workspace, make_task):
    task = make_task()
    assert operator_client.get(f"/tasks/{task.pk}/steps/{task.step_id}/rows/", {"after": "1"}).status_code == 400
    other = Board.objects.create(workspace=workspace, name="Other")
    other.add_default_steps()
    response = operator_client.get(f"/tasks/{task.pk}/steps/{other.steps.first().pk}/rows/", {"after": "0,0"})
    assert response.status_code == 404


def test_the_pages_own_task_is_shown_and_marked_even_past_its_steps_first_page(operator_client, board, small_pages):
    backlog, doing = board.steps.all()[:2]
    tasks = [Task.objects.create(board=board, step=backlog, title=f"T{i}", position=i) for i in range(10)]
    Task.objects.create(board=board, step=doing, title="Elsewhere", position=0)
    current = tasks[7]
    with CaptureQueriesContext(connection) as captured:
        html = operator_client.get(f"/tasks/{current.pk}/").text
    # The first page, then the page's own task, then "Show more" (which resumes after the first page).
    assert row_ids(html, backlog) == [*(t.pk for t in tasks[:3]), current.pk]
    tag = row_tag(html, current)
    assert 'class="task-row current"' in tag
    assert 'data-current="true"' in tag
    assert 'data-pinned="true"' in tag
    assert 'data-beyond="true"' in tag
    after_current = html[html.index(tag) :]
    assert after_current.index('id="task-list-more-') < after_current.index("</ol>")
    assert f'?after=2,{tasks[2].pk}"' in html
    assert group_count(html, backlog) == 10
    # Read with the first pages: no query more than for a task on the first page.
    with CaptureQueriesContext(connection) as on_first_page:
        operator_client.get(f"/tasks/{tasks[0].pk}/")
    assert len(captured) == len(on_first_page)
    assert 'data-beyond="false"' in row_tag(operator_client.get(f"/tasks/{tasks[0].pk}/").text, tasks[0])

    # The "Show more" page that reaches it brings it in its place, still marked as the page's own.
    rows = f"/tasks/{current.pk}/steps/{backlog.pk}/rows/"
    more = operator_client.get(rows, {"after": f"5,{tasks[5].pk}"}, **HTMX).text
    assert row_ids(more) == [tasks[6].pk, current.pk, tasks[8].pk]
    assert 'data-current="true"' in row_tag(more, current)


def test_a_live_patch_of_the_task_list_sends_the_changed_rows_and_counts_in_constant_queries(board, workspace):
    large = Board.objects.create(workspace=workspace, name="Large")
    large.add_default_steps()
    counts = []
    for each, n in ((board, 4), (large, 120)):
        tasks = populate(each, n)
        changed = tasks[1]
        with CaptureQueriesContext(connection) as captured:
            html = render_task_rows(each.pk, tasks[0].pk, step_ids=[tasks[0].step_id], task_ids=[changed.pk, 10_000])
        counts.append(len(captured))
        assert row_ids(html) == [changed.pk]
        assert f'data-live-into="task-list-rows-{changed.step_id}"' in html
        assert f'data-sort-key="{changed.position},{changed.pk}"' in html
        assert 'data-current="false"' in row_tag(html, changed)
        assert group_count(html, changed.step) == len(in_step(tasks, changed.step))
        assert group_count(html, tasks[0].step) == len(in_step(tasks, tasks[0].step))
        assert 'data-live-remove="task-row-10000"' in html
    assert counts[0] == counts[1]
