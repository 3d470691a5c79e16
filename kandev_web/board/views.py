"""Board pages. Views are thin: check access, validate, call a service, render.

HTMX requests get the affected columns back as out-of-band fragments; the same
fragments reach every other open board through the board consumer.
"""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from . import services
from .forms import TaskCreateForm, TaskEditForm
from .models import Board, Task
from .queries import board_columns


def home(request):
    boards = list(Board.objects.for_user(request.user).select_related("workspace"))
    if len(boards) == 1:
        return redirect("board:board", board_id=boards[0].pk)
    return render(request, "board/home.html", {"boards": boards})


def _board(request, board_id) -> Board:
    return get_object_or_404(Board.objects.for_user(request.user), pk=board_id)


def _task(request, task_id) -> Task:
    return get_object_or_404(Task.objects.for_user(request.user).select_related("board"), pk=task_id)


def render_columns(board: Board, step_ids=None, *, request=None) -> str:
    """The out-of-band column fragments for ``step_ids`` (all when ``None``)."""
    return render_to_string(
        "board/board.html#columns-oob",
        {"board": board, "columns": board_columns(board, step_ids)},
        request=request,
    )


def board(request, board_id):
    board = _board(request, board_id)
    return render(
        request,
        "board/board.html",
        {"board": board, "columns": board_columns(board), "form": TaskCreateForm(board=board)},
    )


@require_POST
def task_create(request, board_id):
    board = _board(request, board_id)
    form = TaskCreateForm(request.POST, board=board)
    if not form.is_valid():
        # 200, not 422: htmx swaps only successful responses, and the form must show its errors.
        return render(request, "board/board.html#create-form", {"board": board, "form": form})
    task = services.create_task(board, **form.cleaned_data)
    fresh = render_to_string(
        "board/board.html#create-form",
        {"board": board, "form": TaskCreateForm(board=board, initial={"step": task.step})},
        request=request,
    )
    return HttpResponse(fresh + render_columns(board, [task.step_id], request=request))


def task_edit(request, task_id):
    task = _task(request, task_id)
    form = TaskEditForm(request.POST or None, instance=task)
    if request.method == "POST" and form.is_valid():
        services.update_task(task, **form.cleaned_data)
        # The re-rendered column replaces the form; there is nothing else to swap.
        response = HttpResponse(render_columns(task.board, [task.step_id], request=request))
        response["HX-Reswap"] = "none"
        return response
    return render(request, "board/board.html#edit-form", {"task": task, "form": form})


@require_POST
def task_move(request, task_id):
    task = _task(request, task_id)
    step = get_object_or_404(task.board.steps, pk=request.POST.get("step"))
    old_step_id = task.step_id
    services.move_task(task, step)
    return HttpResponse(render_columns(task.board, [old_step_id, step.pk], request=request))


@require_POST
def task_delete(request, task_id):
    task = _task(request, task_id)
    board, step_id = task.board, task.step_id
    services.delete_task(task)
    if request.headers.get("HX-Request"):
        return HttpResponse(render_columns(board, [step_id], request=request))
    return redirect("board:board", board_id=board.pk)
