"""Board views: access, HTMX fragments, and changes announced after commit."""

import pytest
from django.test import Client

from kandev_web.board.models import Board, Task, Workspace

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def client(operator):
    client = Client()
    client.force_login(operator)
    return client


def test_login_is_required_everywhere(db, board, make_task):
    task = make_task()
    anonymous = Client()
    for url in ["/", f"/boards/{board.pk}/", f"/tasks/{task.pk}/", "/api/v1/runtime-flags"]:
        response = anonymous.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith("/login/")


def test_home_redirects_to_the_only_board(client, board):
    response = client.get("/")
    assert response.status_code == 302
    assert response.url == f"/boards/{board.pk}/"


def test_board_page_has_a_column_per_step_with_counts(client, board, make_task):
    make_task("One")
    response = client.get(f"/boards/{board.pk}/")
    for step in board.steps.all():
        assert f'data-testid="kanban-column-{step.pk}"' in response.text
    backlog = board.steps.first()
    assert f'data-step-id="{backlog.pk}" data-count="1"' in response.text


def test_another_workspaces_board_and_task_are_404(client, make_operator):
    other = Workspace.objects.create(name="Other")
    other_board = Board.objects.create(workspace=other, name="Theirs")
    other_board.add_default_steps()
    task = Task.objects.create(board=other_board, step=other_board.steps.first(), title="Secret")
    assert client.get(f"/boards/{other_board.pk}/").status_code == 404
    assert client.get(f"/tasks/{task.pk}/").status_code == 404
    assert client.post(f"/tasks/{task.pk}/delete/").status_code == 404
    assert client.post(f"/tasks/{task.pk}/move/", {"step": other_board.steps.last().pk}).status_code == 404
    assert Task.objects.filter(pk=task.pk, step=other_board.steps.first()).exists()


def test_create_returns_a_fresh_form_and_the_column_out_of_band(client, board, django_capture_on_commit_callbacks):
    backlog = board.steps.first()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            f"/boards/{board.pk}/tasks/", {"title": "Write <script>x</script>", "step": backlog.pk}, **HTMX
        )
    assert response.status_code == 200
    assert 'id="task-create-form"' in response.text
    assert f'id="kanban-column-{backlog.pk}"' in response.text and 'hx-swap-oob="true"' in response.text
    assert "<script>x</script>" not in response.text
    assert "Write &lt;script&gt;x&lt;/script&gt;" in response.text
    assert len(callbacks) == 1, "one live event, sent after commit"


def test_create_with_an_empty_title_shows_the_error_and_creates_nothing(client, board):
    response = client.post(f"/boards/{board.pk}/tasks/", {"title": "", "step": board.steps.first().pk}, **HTMX)
    assert response.status_code == 200
    assert 'data-testid="task-create-error"' in response.text
    assert not Task.objects.exists()


def test_create_refuses_a_step_of_another_board(client, board):
    other = Board.objects.create(workspace=board.workspace, name="Second")
    other.add_default_steps()
    client.post(f"/boards/{board.pk}/tasks/", {"title": "x", "step": other.steps.first().pk}, **HTMX)
    assert not Task.objects.exists()


def test_move_appends_to_the_target_column(client, board, make_task):
    backlog, doing = board.steps.all()[:2]
    make_task("Already there", step=doing, position=0)
    task = make_task("Mover", step=backlog)
    response = client.post(f"/tasks/{task.pk}/move/", {"step": doing.pk}, **HTMX)
    task.refresh_from_db()
    assert (task.step, task.position) == (doing, 1)
    assert f'id="kanban-column-{backlog.pk}"' in response.text
    assert f'id="kanban-column-{doing.pk}"' in response.text


def test_edit_and_delete(client, make_task):
    task = make_task("Old")
    assert 'data-testid="task-edit-form"' in client.get(f"/tasks/{task.pk}/edit/", **HTMX).text
    response = client.post(f"/tasks/{task.pk}/edit/", {"title": "New", "description": "d"}, **HTMX)
    assert response["HX-Reswap"] == "none"
    task.refresh_from_db()
    assert (task.title, task.description) == ("New", "d")
    client.post(f"/tasks/{task.pk}/delete/", **HTMX)
    assert not Task.objects.filter(pk=task.pk).exists()


def test_get_is_refused_for_state_changes(client, make_task):
    task = make_task()
    assert client.get(f"/tasks/{task.pk}/delete/").status_code == 405
    assert client.get(f"/tasks/{task.pk}/move/").status_code == 405


def test_post_without_csrf_token_is_403(operator, make_task):
    task = make_task()
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.post(f"/tasks/{task.pk}/delete/").status_code == 403
    assert Task.objects.filter(pk=task.pk).exists()
