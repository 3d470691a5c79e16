"""The task page: details, sessions, the message timeline and the board's task list."""

from django.shortcuts import get_object_or_404, render

from kandev_web.board.models import Task
from kandev_web.board.queries import cards_for

from .models import Message


def task_detail(request, task_id):
    task = get_object_or_404(Task.objects.for_user(request.user).select_related("board", "step"), pk=task_id)
    return render(request, "sessions/task.html", task_context(task) | task_list_context(task))


def task_context(task: Task) -> dict:
    return {
        "task": task,
        "card": cards_for(Task.objects.filter(pk=task.pk))[0],
        "sessions": list(task.sessions.select_related("agent_profile")),
        "messages": list(Message.objects.filter(session__task=task).order_by("created_at", "pk")),
    }


def task_list_context(task: Task) -> dict:
    rows = cards_for(Task.objects.filter(board=task.board_id).order_by("step__position", "position", "pk"))
    return {"task": task, "rows": rows}
