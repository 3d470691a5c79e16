"""Creating and moving tasks: what changes a task beyond its own row. Each function is one transaction.

A new task may get a worktree; a moved task goes through the session state
machine (``workflow.task_moved``), which decides its state. Editing and
deleting a task need neither: ``kandev_web.board.services``.
"""

from django.db import transaction

from kandev_web import live
from kandev_web.board.models import Board, Step, Task
from kandev_web.board.services import lock_task
from kandev_web.repositories.models import Repository, Worktree

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


@transaction.atomic
def move_task(task: Task, step: Step) -> Task:
    """Move ``task`` to the end of ``step`` (a no-op when it is already there); ``TaskGone`` if it was deleted."""
    lock_task(task)
    if step.pk != task.step_id:
        workflow.task_moved(task, step)
    return task
