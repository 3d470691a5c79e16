"""Telling open browsers that something changed, after the change is committed.

Events carry ids only; each consumer re-reads and renders for its own viewer,
so an event is correct on any web process and never leaks data across
workspaces. They are sent from ``transaction.on_commit`` so no browser ever
renders a row that was rolled back.
"""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction


def board_group(board_id: int) -> str:
    return f"board-{board_id}"


def task_group(task_id: int) -> str:
    return f"task-{task_id}"


def send_after_commit(group: str, event: dict) -> None:
    def send():
        async_to_sync(get_channel_layer().group_send)(group, event)

    transaction.on_commit(send)


def board_changed(board_id: int, *, step_ids, task_ids) -> None:
    """``task_ids`` changed (or were deleted); ``step_ids`` are the columns whose count may have moved.

    Naming the tasks lets every open page patch just their cards and rows
    instead of re-rendering whole columns or the whole task list.
    """
    event = {"type": "board.changed", "step_ids": sorted(set(step_ids)), "task_ids": sorted(set(task_ids))}
    send_after_commit(board_group(board_id), event)


def task_changed(task_id: int) -> None:
    send_after_commit(task_group(task_id), {"type": "task.changed"})
