"""Changing tasks. Each function is one transaction and announces itself after commit.

A task an operator changes is read again, locked, inside the transaction: it
may have been deleted (or moved) by someone else since their page read it.
"""

from django.db import transaction

from kandev_web import live
from kandev_web.board.models import Board, Step, Task
from kandev_web.sessions.models import Repository, Worktree

from . import workflow


@transaction.atomic
def create_task(
    board: Board, *, title: str, description: str, step: Step, repository: Repository | None = None, base_branch=""
) -> Task:
    """A new task at the end of ``step``; on ``repository``, its agents will work in a worktree of its own."""
    task = Task.objects.create(
        board=board, step=step, title=title, description=description, position=workflow.end_of_column(step)
    )
    if repository is not None:
        Worktree.objects.create(task=task, repository=repository, base_branch=base_branch)
    live.board_changed(board.pk, step_ids=[step.pk], task_ids=[task.pk])
    return task


class TaskGone(LookupError):
    """The task was deleted by someone else meanwhile; nothing was changed."""


def _lock(task: Task) -> None:
    """Read ``task`` again as it is now, its row locked until the transaction ends; raise ``TaskGone``."""
    try:
        task.refresh_from_db(from_queryset=Task.objects.select_for_update())
    except Task.DoesNotExist:
        raise TaskGone(task.pk) from None


@transaction.atomic
def update_task(task: Task, *, title: str, description: str) -> Task:
    _lock(task)
    task.title, task.description = title, description
    task.save(update_fields=["title", "description", "updated_at"])
    live.board_changed(task.board_id, step_ids=[task.step_id], task_ids=[task.pk])
    live.task_changed(task.pk)
    return task


@transaction.atomic
def move_task(task: Task, step: Step) -> Task:
    """Move ``task`` to the end of ``step`` (a no-op when it is already there)."""
    _lock(task)
    if step.pk != task.step_id:
        workflow.task_moved(task, step)
    return task


@transaction.atomic
def delete_task(task: Task) -> None:
    board_id, step_id, task_id, workspace_id = task.board_id, task.step_id, task.pk, task.board.workspace_id
    task.delete()
    live.board_changed(board_id, step_ids=[step_id], task_ids=[task_id])
    live.task_changed(task_id)
    live.waiting_changed(workspace_id, task_id)
