"""Changing a task's own fields, or deleting it. Each function is one transaction and announces itself after commit.

A task an operator changes is read again, locked, inside the transaction: it
may have been deleted (or moved) by someone else since their page read it.
Creating a task (it may get a worktree) and moving one (the session state
machine's transition) are ``kandev_web.sessions.tasks``.
"""

from django.db import transaction

from kandev_web import live

from .models import Task


class TaskGone(LookupError):
    """The task was deleted by someone else meanwhile; nothing was changed."""


def lock_task(task: Task) -> None:
    """Read ``task`` again as it is now, its row locked until the transaction ends; raise ``TaskGone``."""
    try:
        task.refresh_from_db(from_queryset=Task.objects.select_for_update())
    except Task.DoesNotExist:
        raise TaskGone(task.pk) from None


@transaction.atomic
def update_task(task: Task, *, title: str, description: str) -> Task:
    lock_task(task)
    task.title, task.description = title, description
    task.save(update_fields=["title", "description", "updated_at"])
    live.board_changed(task.board_id, step_ids=[task.step_id], task_ids=[task.pk])
    live.task_changed(task.pk)
    return task


@transaction.atomic
def set_budget(task: Task, budget) -> Task:
    """What the task's agents may spend before the operator is warned (``None``: no budget)."""
    lock_task(task)
    task.budget = budget
    task.save(update_fields=["budget", "updated_at"])
    live.board_changed(task.board_id, step_ids=[task.step_id], task_ids=[task.pk])
    live.task_changed(task.pk, ["details"])
    live.waiting_changed(task.board.workspace_id, task.pk)
    return task


@transaction.atomic
def delete_task(task: Task) -> None:
    board_id, step_id, task_id, workspace_id = task.board_id, task.step_id, task.pk, task.board.workspace_id
    task.delete()
    live.board_changed(board_id, step_ids=[step_id], task_ids=[task_id])
    live.task_changed(task_id)
    live.waiting_changed(workspace_id, task_id)
