"""Telling open pages, and waiting tool calls, that something changed, once it is committed.

Every channel-layer group name is made here, and every event is sent through
:func:`send_after_commit`, so no page ever renders a row that was rolled back
and no other module needs to know the channel layer exists.

Events carry ids only. Each consumer re-reads what changed and renders it for
its own viewer after checking that viewer's access, so the same event is right
on any web process, for any operator, and cannot leak one workspace's data to
another through a shared group. The one exception is :func:`notify`: it goes
to a single operator's group, who was chosen as a member of the task's
workspace, and carries the text of the toast it shows.
"""

from collections.abc import Iterable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction


def board_group(board_id: int) -> str:
    """Every open view of a board: the board page and the task list of its task pages."""
    return f"board-{board_id}"


def task_group(task_id: int) -> str:
    """Every open page of one task."""
    return f"task-{task_id}"


def user_group(user_id: int) -> str:
    """Every open page of one operator, for notifications meant for them."""
    return f"user-{user_id}"


def clarification_group(pending_id: str) -> str:
    """The tool call waiting on one question bundle, on whichever process serves it."""
    return f"clarification-{pending_id}"


def send_after_commit(group: str, event: dict) -> None:
    def send():
        async_to_sync(get_channel_layer().group_send)(group, event)

    transaction.on_commit(send)


def board_changed(board_id: int, *, step_ids: Iterable[int], task_ids: Iterable[int]) -> None:
    """``task_ids`` changed (or were deleted); ``step_ids`` are the columns whose count may have moved.

    Naming the tasks lets every open page patch just their cards and rows
    instead of re-rendering whole columns or the whole task list.
    """
    event = {"type": "board.changed", "step_ids": sorted(set(step_ids)), "task_ids": sorted(set(task_ids))}
    send_after_commit(board_group(board_id), event)


def task_changed(task_id: int) -> None:
    send_after_commit(task_group(task_id), {"type": "task.changed"})


def message_changed(task_id: int, message_id: int, *, created: bool) -> None:
    """A timeline row of the task was added (``created``) or changed in place."""
    send_after_commit(task_group(task_id), {"type": "message.changed", "message_id": message_id, "created": created})


def clarification_settled(task_id: int, pending_id: str, reason: str) -> None:
    """A question left the task's overlay; its pages tell their viewers why."""
    send_after_commit(
        task_group(task_id), {"type": "clarification.settled", "pending_id": pending_id, "reason": reason}
    )


def wake_clarification(pending_id: str) -> None:
    """The bundle's record changed: its waiting tool call should re-read it."""
    send_after_commit(clarification_group(pending_id), {"type": "wake"})


def notify(user_id: int, *, event: str, title: str, body: str, task_id: int) -> None:
    """A toast (and a desktop notice, where allowed) on every open page of one operator."""
    message = {"type": "notify", "event": event, "title": title, "body": body, "task_id": task_id}
    send_after_commit(user_group(user_id), message)
