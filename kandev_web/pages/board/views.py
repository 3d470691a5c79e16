"""Board pages. Views are thin: check access, validate, call a service, render.

HTMX requests get a live patch back (the changed cards and the counts of their
columns, out of band); the same patch reaches every other open board through
the board consumer.
"""

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kandev_web.agents.models import AgentProfile
from kandev_web.board import services
from kandev_web.board.models import Board, Task
from kandev_web.board.workspaces import manages
from kandev_web.pages import htmx
from kandev_web.repositories import worktrees
from kandev_web.repositories.models import Repository, Worktree
from kandev_web.sessions import tasks

from .filters import STATES, BoardFilter
from .forms import TaskCreateForm, TaskEditForm, TaskMoveForm
from .fragments import render_changes
from .queries import board_columns, column_page, parse_sort_key


def _changes(request, board, *, step_ids, task_ids) -> str:
    """The live patch for the page the request came from: a filtered board's fits its filter."""
    shown = BoardFilter.of_page(request)
    return render_changes(board, step_ids=step_ids, task_ids=task_ids, request=request, shown=shown)


@require_GET
def home(request):
    boards = list(Board.objects.for_user(request.user).select_related("workspace"))
    if len(boards) == 1:
        return redirect("board:board", board_id=boards[0].pk)
    return render(request, "board/home.html", {"boards": boards})


def _board(request, board_id) -> Board:
    return get_object_or_404(Board.objects.for_user(request.user).select_related("workspace"), pk=board_id)


def _task(request, task_id) -> Task:
    return get_object_or_404(Task.objects.for_user(request.user).select_related("board"), pk=task_id)


def _refused(request, message: str, *, status: int, patch: str = "") -> HttpResponse:
    """Nothing was done, and why: a toast for htmx (which swaps only a 2xx), else ``status`` with the sentence."""
    if not request.headers.get("HX-Request"):
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    return htmx.patch(htmx.toast_html(message) + patch)


def _gone(request, task: Task) -> HttpResponse:
    """The task was deleted while the operator's change was on its way: say so, and take its card away."""
    patch = _changes(request, task.board, step_ids=[task.step_id], task_ids=[task.pk])
    return _refused(request, _("This task was deleted meanwhile; nothing was changed."), status=404, patch=patch)


@require_GET
def board(request, board_id):
    board = _board(request, board_id)
    shown = BoardFilter.from_query(request.GET)
    return render(
        request,
        "board/board.html",
        {
            "board": board,
            "columns": board_columns(board, shown=shown),
            "shown": shown,
            "chips": _chips(board, shown),
            "form": TaskCreateForm(board=board),
            # The settings links are for the workspace's admins (the pages check again).
            "manages_workspace": manages(request.user, board.workspace_id),
        },
    )


@require_POST
def task_create(request, board_id):
    board = _board(request, board_id)
    form = TaskCreateForm(request.POST, board=board)
    if not form.is_valid():
        # 200, not 422: htmx swaps only successful responses, and the form must show its errors.
        return render(request, "board/board.html#create-form", {"board": board, "form": form})
    task = tasks.create_task(board, **form.cleaned_data)
    fresh = render_to_string(
        "board/board.html#create-form",
        {"board": board, "form": TaskCreateForm(board=board, initial={"step": task.step})},
        request=request,
    )
    return HttpResponse(fresh + _changes(request, board, step_ids=[task.step_id], task_ids=[task.pk]))


@require_http_methods(["GET", "POST"])
def task_edit(request, task_id):
    task = _task(request, task_id)
    form = TaskEditForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        try:
            services.update_task(task, **form.cleaned_data)
        except services.TaskGone:
            return _gone(request, task)
        # The patched card replaces the form; there is nothing else to swap.
        return htmx.patch(_changes(request, task.board, step_ids=[task.step_id], task_ids=[task.pk]))
    return render(request, "board/board.html#edit-form", {"task": task, "form": form})


@require_GET
def task_card(request, task_id):
    """The card as it is now, put back in place of its edit form ("Cancel")."""
    task = _task(request, task_id)
    return htmx.patch(_changes(request, task.board, step_ids=[], task_ids=[task.pk]))


@require_GET
def column_more(request, board_id, step_id):
    """The "Show more" button: the next page of one column's cards, after the sort key ``?after=position,id``."""
    board = _board(request, board_id)
    step = get_object_or_404(board.steps, pk=step_id)
    try:
        after = parse_sort_key(request.GET.get("after", ""))
    except ValueError:
        return HttpResponseBadRequest()
    shown = BoardFilter.from_query(request.GET)
    column = column_page(board, step.pk, after, shown)
    return render(request, "board/board.html#column-page", {"board": board, "column": column, "shown": shown})


@require_POST
def task_move(request, task_id):
    task = _task(request, task_id)
    form = TaskMoveForm(request.POST)
    if not form.is_valid():
        return _refused(request, _("Choose a column of this board to move the task to."), status=400)
    step = get_object_or_404(task.board.steps, pk=form.cleaned_data["step"])
    old_step_id = task.step_id
    try:
        tasks.move_task(task, step)
    except services.TaskGone:
        return _gone(request, task)
    return HttpResponse(_changes(request, task.board, step_ids=[old_step_id, step.pk], task_ids=[task.pk]))


@require_POST
def task_delete(request, task_id):
    """Delete the task; with ``remove_worktree``, its worktree and branch first, which losing commits refuses
    unless ``discard_commits`` says the operator accepts it. Without, both stay on disk."""
    task = _task(request, task_id)
    board, step_id = task.board, task.step_id
    worktree = Worktree.objects.select_related("repository").filter(task=task).first()
    if worktree is not None and request.POST.get("remove_worktree"):
        try:
            worktrees.remove(worktree, discard_commits=bool(request.POST.get("discard_commits")))
        except worktrees.WorktreeError as error:
            return _refused(request, str(error), status=409)
    services.delete_task(task)
    if request.POST.get("from") == "task":
        return HttpResponse(status=204)  # The task page hears of it on its socket, as every open view of the task.
    if request.headers.get("HX-Request"):
        return HttpResponse(_changes(request, board, step_ids=[step_id], task_ids=[task_id]))
    return redirect("board:board", board_id=board.pk)


def _chips(board: Board, shown: BoardFilter) -> dict[str, list[dict]]:
    """The filter chips: each state, and the workspace's agent profiles and repositories, with the link that
    toggles each (the rest of the filter kept)."""
    profiles = AgentProfile.objects.filter(workspace=board.workspace_id).values_list("pk", "name")
    repositories = Repository.objects.filter(workspace=board.workspace_id).values_list("pk", "name")

    def chip(group, value, label, chosen):
        return {
            "group": group,
            "value": value,
            "label": label,
            "on": value in chosen,
            "query": shown.toggled(group, value),
        }

    return {
        "states": [chip("state", key, label, shown.states) for key, label in STATES.items()],
        "profiles": [chip("profile", pk, name, shown.profiles) for pk, name in profiles],
        "repositories": [chip("repository", pk, name, shown.repositories) for pk, name in repositories],
    }
