"""Board views: access, HTMX fragments, and changes announced after commit."""

import re

import pytest
from django.test import Client

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.pages.board import queries

HTMX = {"HTTP_HX_REQUEST": "true"}


def column_count(html: str, step) -> int:
    return int(re.search(rf'id="kanban-column-head-{step.pk}"[^>]*data-count="(\d+)"', html).group(1))


def card_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<li id="task-card-(\d+)"', html)]


def test_login_is_required_everywhere(db, board, make_task):
    task = make_task()
    anonymous = Client()
    for url in ["/", f"/boards/{board.pk}/", f"/tasks/{task.pk}/", "/api/v1/runtime-flags"]:
        response = anonymous.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith("/login/")


def test_home_redirects_to_the_only_board(operator_client, board):
    response = operator_client.get("/")
    assert response.status_code == 302
    assert response.url == f"/boards/{board.pk}/"


def test_board_page_has_a_column_per_step_with_counts(operator_client, board, make_task):
    make_task("One")
    response = operator_client.get(f"/boards/{board.pk}/")
    for step in board.steps.all():
        assert f'data-testid="kanban-column-{step.pk}"' in response.text
    backlog, doing = board.steps.all()[:2]
    assert (column_count(response.text, backlog), column_count(response.text, doing)) == (1, 0)


def test_another_workspaces_board_and_task_are_404(operator_client, make_operator):
    other = Workspace.objects.create(name="Other")
    other_board = Board.objects.create(workspace=other, name="Theirs")
    other_board.add_default_steps()
    task = Task.objects.create(board=other_board, step=other_board.steps.first(), title="Secret")
    assert operator_client.get(f"/boards/{other_board.pk}/").status_code == 404
    assert operator_client.get(f"/tasks/{task.pk}/").status_code == 404
    assert operator_client.post(f"/tasks/{task.pk}/delete/").status_code == 404
    assert operator_client.post(f"/tasks/{task.pk}/move/", {"step": other_board.steps.last().pk}).status_code == 404
    assert Task.objects.filter(pk=task.pk, step=other_board.steps.first()).exists()


def test_create_returns_a_fresh_form_and_the_new_card_out_of_band(
    operator_client, board, django_capture_on_commit_callbacks
):
    backlog = board.steps.first()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = operator_client.post(
            f"/boards/{board.pk}/tasks/", {"title": "Write <script>x</script>", "step": backlog.pk}, **HTMX
        )
    assert response.status_code == 200
    assert 'id="task-create-form"' in response.text
    task = Task.objects.get()
    assert card_ids(response.text) == [task.pk]
    assert f'data-live-into="kanban-cards-{backlog.pk}"' in response.text
    assert column_count(response.text, backlog) == 1
    assert "<script>x</script>" not in response.text
    assert "Write &lt;script&gt;x&lt;/script&gt;" in response.text
    assert len(callbacks) == 1, "one live event, sent after commit"


def test_create_with_an_empty_title_shows_the_error_and_creates_nothing(operator_client, board):
    response = operator_client.post(f"/boards/{board.pk}/tasks/", {"title": "", "step": board.steps.first().pk}, **HTMX)
    assert response.status_code == 200
    assert 'data-testid="task-create-error"' in response.text
    assert not Task.objects.exists()


def test_create_refuses_a_step_of_another_board(operator_client, board):
    other = Board.objects.create(workspace=board.workspace, name="Second")
    other.add_default_steps()
    operator_client.post(f"/boards/{board.pk}/tasks/", {"title": "x", "step": other.steps.first().pk}, **HTMX)
    assert not Task.objects.exists()


def test_move_appends_to_the_target_column(operator_client, board, make_task):
    backlog, doing = board.steps.all()[:2]
    make_task("Already there", step=doing, position=0)
    task = make_task("Mover", step=backlog)
    response = operator_client.post(f"/tasks/{task.pk}/move/", {"step": doing.pk}, **HTMX)
    task.refresh_from_db()
    assert (task.step, task.position) == (doing, 1)
    # Only the moved card, placed after the one already there, and both columns' counts.
    assert card_ids(response.text) == [task.pk]
    assert f'data-live-into="kanban-cards-{doing.pk}" data-sort-key="1,{task.pk}"' in response.text
    assert (column_count(response.text, backlog), column_count(response.text, doing)) == (0, 2)


def test_edit_and_delete(operator_client, make_task):
    task = make_task("Old")
    assert 'data-testid="task-edit-form"' in operator_client.get(f"/tasks/{task.pk}/edit/", **HTMX).text
    response = operator_client.post(f"/tasks/{task.pk}/edit/", {"title": "New", "description": "d"}, **HTMX)
    assert response["HX-Reswap"] == "none"
    task.refresh_from_db()
    assert (task.title, task.description) == ("New", "d")
    operator_client.post(f"/tasks/{task.pk}/delete/", **HTMX)
    assert not Task.objects.filter(pk=task.pk).exists()


def test_cancelling_an_edit_puts_the_card_back(operator_client, make_task):
    task = make_task("Kept")
    response = operator_client.get(f"/tasks/{task.pk}/card/", **HTMX)
    assert card_ids(response.text) == [task.pk]
    assert response["HX-Reswap"] == "none"


def test_a_deleted_card_is_removed_from_every_page(operator_client, make_task):
    task = make_task("Gone")
    response = operator_client.post(f"/tasks/{task.pk}/delete/", **HTMX)
    assert f'data-live-remove="task-card-{task.pk}"' in response.text
    assert column_count(response.text, task.step) == 0


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 3)


def test_a_long_column_shows_a_page_of_cards_and_show_more(operator_client, board, make_task, small_pages):
    backlog = board.steps.first()
    tasks = [make_task(f"Task {i}", position=i) for i in range(7)]
    html = operator_client.get(f"/boards/{board.pk}/").text
    assert card_ids(html) == [t.pk for t in tasks[:3]]
    assert column_count(html, backlog) == 7
    assert 'data-testid="kanban-column-show-more"' in html
    assert f'/boards/{board.pk}/steps/{backlog.pk}/cards/?after=2,{tasks[2].pk}"' in html


def test_show_more_brings_the_next_page_after_the_last_card_shown(operator_client, board, make_task, small_pages):
    backlog = board.steps.first()
    tasks = [make_task(f"Task {i}", position=i) for i in range(7)]
    url = f"/boards/{board.pk}/steps/{backlog.pk}/cards/"
    # The last card shown was deleted meanwhile: the page still starts right after it.
    last_shown = tasks[2].pk
    tasks[2].delete()
    second = operator_client.get(url, {"after": f"2,{last_shown}"}, **HTMX).text
    assert card_ids(second) == [t.pk for t in tasks[3:6]]
    assert f'?after=5,{tasks[5].pk}"' in second
    assert 'data-more="true"' in second
    assert column_count(second, backlog) == 6
    last = operator_client.get(url, {"after": f"5,{tasks[5].pk}"}, **HTMX).text
    assert card_ids(last) == [tasks[6].pk]
    assert 'data-more="false"' in last
    assert "kanban-column-show-more" not in last


def test_show_more_refuses_a_malformed_key_and_another_boards_step(operator_client, board, workspace):
    backlog = board.steps.first()
    assert operator_client.get(f"/boards/{board.pk}/steps/{backlog.pk}/cards/", {"after": "x"}).status_code == 400
    other = Board.objects.create(workspace=workspace, name="Other")
    other.add_default_steps()
    assert (
        operator_client.get(f"/boards/{board.pk}/steps/{other.steps.first().pk}/cards/", {"after": "0,0"}).status_code
        == 404
    )


def test_get_is_refused_for_state_changes(operator_client, make_task):
    task = make_task()
    assert operator_client.get(f"/tasks/{task.pk}/delete/").status_code == 405
    assert operator_client.get(f"/tasks/{task.pk}/move/").status_code == 405


def test_post_without_csrf_token_is_403(operator, make_task):
    task = make_task()
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.post(f"/tasks/{task.pk}/delete/").status_code == 403
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.parametrize("step", ["abc", "1e3", "", " ", "-1", "0", "1.5", "9" * 5000, "9" * 30, "\x00"])
def test_a_move_to_a_malformed_step_is_refused_with_a_sentence(operator_client, make_task, step):
    task = make_task()
    response = operator_client.post(f"/tasks/{task.pk}/move/", {"step": step})
    assert response.status_code == 400
    assert "Choose a column of this board" in response.text
    htmx = operator_client.post(f"/tasks/{task.pk}/move/", {"step": step}, **HTMX)
    assert htmx.status_code == 200
    assert 'data-testid="toast"' in htmx.text
    assert "Choose a column of this board" in htmx.text
    assert Task.objects.get(pk=task.pk).step_id == task.step_id


def test_a_move_without_a_step_is_refused(operator_client, make_task):
    task = make_task()
    assert operator_client.post(f"/tasks/{task.pk}/move/").status_code == 400


def _deleted_after_reading(monkeypatch):
    """The view reads the task, then someone else deletes it before the change is written."""
    from kandev_web.pages.board import views

    read = views._task

    def read_then_lose(request, task_id):
        task = read(request, task_id)
        Task.objects.filter(pk=task.pk).delete()
        return task

    monkeypatch.setattr(views, "_task", read_then_lose)


@pytest.mark.parametrize(
    ("action", "data"),
    [("edit", {"title": "Renamed", "description": ""}), ("move", {"step": None})],
)
def test_a_change_racing_a_delete_says_the_task_is_gone(operator_client, board, make_task, monkeypatch, action, data):
    task = make_task()
    data = {**data, "step": board.steps.last().pk} if "step" in data else data
    _deleted_after_reading(monkeypatch)
    response = operator_client.post(f"/tasks/{task.pk}/{action}/", data)
    assert response.status_code == 404
    assert "This task was deleted meanwhile; nothing was changed." in response.text
    assert not Task.objects.filter(pk=task.pk).exists()


def test_an_htmx_edit_racing_a_delete_gets_a_toast_and_loses_the_card(operator_client, make_task, monkeypatch):
    task = make_task()
    _deleted_after_reading(monkeypatch)
    response = operator_client.post(f"/tasks/{task.pk}/edit/", {"title": "Renamed", "description": ""}, **HTMX)
    assert response.status_code == 200
    assert 'data-testid="toast"' in response.text
    assert "deleted meanwhile" in response.text
    assert f'data-live-remove="task-card-{task.pk}"' in response.text
