"""Telling open pages, and waiting tool calls, that something changed, once it is committed.

Every channel-layer group name is made here, and every event is sent through
:func:`send_after_commit`, so no page ever renders a row that was rolled back
and no other module needs to know the channel layer exists.

Events carry ids only. Each consumer re-reads what changed and renders it for
its own viewer after checking that viewer's access, so the same event is right
on any web process, for any operator, and cannot leak one workspace's data to
another through a shared group. Four exceptions: :func:`notify` goes to a
single operator's group, who was chosen as a member of the task's workspace,
and carries the msgids of the toast it shows; :func:`question_asked` carries a
new question's overlay in one language, identical for every viewer of its task
who reads that language; :func:`question_waiting` its inbox item,
identical for every member of its workspace who does; and
:func:`message_appended` the text just streamed into a message, which every
viewer of its task sees alike (each socket still checks its viewer's access).
"""

import asyncio
import contextvars
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer
from django.conf import settings
from django.db import transaction
from django.utils import translation

logger = logging.getLogger(__name__)


def channel_layer() -> BaseChannelLayer:
    """The channel layer; settings always configure one (Redis, or in memory for a single process)."""
    layer = get_channel_layer()
    assert layer is not None, "CHANNEL_LAYERS has no default layer"
    return layer


def board_group(board_id: int) -> str:
    """Every open view of a board: the board page and the task list of its task pages."""
    return f"board-{board_id}"


def task_group(task_id: int) -> str:
    """Every open page of one task."""
    return f"task-{task_id}"


def user_group(user_id: int) -> str:
    """Every open page of one operator, for notifications meant for them."""
    return f"user-{user_id}"


def workspace_group(workspace_id: int) -> str:
    """Every open page of every member of a workspace: what waits on them there (the inbox, its count)."""
    return f"workspace-{workspace_id}"


def clarification_group(pending_id: str) -> str:
    """The tool call waiting on one question bundle, on whichever process serves it."""
    return f"clarification-{pending_id}"


class _Outbox:
    """Committed events on their way to the channel layer, in the order they were committed.

    Inside the web server, a commit only queues its events and wakes the
    server's loop, where one task sends them in order: the thread that
    committed (a request's, or the agent runner's) never waits on the loop,
    and a change's events take one wake-up, not one each. Without a server
    loop (a management command, a test) each event is sent at once.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: deque[tuple[str, dict]] = deque()
        self._lock = threading.Lock()
        self._flushing = False

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def put(self, group: str, event: dict) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            async_to_sync(channel_layer().group_send)(group, event)
            return
        if not loop.is_running():
            self._send_as_the_server_stops(group, event)
            return
        with self._lock:
            self._queue.append((group, event))
            if self._flushing:
                return
            self._flushing = True
        loop.call_soon_threadsafe(lambda: loop.create_task(self._flush(), context=contextvars.Context()))

    def _send_as_the_server_stops(self, group: str, event: dict) -> None:
        """Sent on a loop of its own: the server's has stopped (SIGTERM) and will not run again.

        A commit made meanwhile (the agent runner's thread finishing what an
        agent just reported) would otherwise wait on the stopped loop through
        ``async_to_sync``, and hold the process open until it is killed.
        """
        try:
            async_to_sync(channel_layer().group_send, force_new_loop=True)(group, event)
        except Exception:
            logger.warning("the live event %s was not sent: the server was stopping", event.get("type"), exc_info=True)

    async def _flush(self) -> None:
        layer = channel_layer()
        while True:
            with self._lock:
                if not self._queue:
                    self._flushing = False
                    return
                group, event = self._queue.popleft()
            try:
                await layer.group_send(group, event)
            except Exception:
                logger.exception("sending the live event %s failed", event.get("type"))


outbox = _Outbox()


def send_after_commit(group: str, event: dict) -> None:
    transaction.on_commit(lambda: outbox.put(group, event))


def board_changed(board_id: int, *, step_ids: Iterable[int], task_ids: Iterable[int]) -> None:
    """``task_ids`` changed (or were deleted); ``step_ids`` are the columns whose count may have moved.

    Naming the tasks lets every open page patch just their cards and rows
    instead of re-rendering whole columns or the whole task list.
    """
    event = {"type": "board.changed", "step_ids": sorted(set(step_ids)), "task_ids": sorted(set(task_ids))}
    send_after_commit(board_group(board_id), event)


#: What a task page keeps live besides its timeline and task list, each a fragment of its own.
TASK_PARTS = ("details", "session", "composer")


def task_changed(task_id: int, parts: Iterable[str] = TASK_PARTS) -> None:
    """The task's ``parts`` changed (``TASK_PARTS``): its pages re-render those and nothing else."""
    send_after_commit(task_group(task_id), {"type": "task.changed", "parts": [p for p in TASK_PARTS if p in parts]})


def question_asked(task_id: int, pending_id: str, language: str, overlay: str) -> None:
    """A new question: ``overlay`` is the task's overlay, out of band, as every viewer reading ``language`` sees it.

    The one event that carries its own HTML (``clarifications.overlay`` says
    why that is safe): the operator waits for it, so it is rendered once, by
    the process that recorded the question, and no socket re-reads anything.
    Sent once per language, before anything else about the question
    (``records.show_overlay``); each page takes the one in its viewer's.
    """
    if overlay:
        event = {"type": "clarification.asked", "pending_id": pending_id, "language": language, "html": overlay}
        send_after_commit(task_group(task_id), event)


def waiting_changed(workspace_id: int, task_id: int) -> None:
    """What waits on an operator for ``task_id`` may have changed: every inbox and its count read it again."""
    send_after_commit(workspace_group(workspace_id), {"type": "waiting.changed", "task_id": task_id})


def question_waiting(workspace_id: int, task_id: int, pending_id: str, language: str, item: str) -> None:
    """A new question's inbox item, out of band, as every member of the workspace reading ``language`` sees it.

    The inbox's counterpart of :func:`question_asked`: rendered once, so no
    inbox re-reads anything before showing it; a ``waiting.changed`` follows.
    """
    event = {"type": "waiting.asked", "task_id": task_id, "pending_id": pending_id, "language": language}
    event.update(html=item, workspace_id=workspace_id)
    send_after_commit(workspace_group(workspace_id), event)


def in_every_language(render: Callable[[], str]) -> Iterator[tuple[str, str]]:
    """``render()`` once in each of the site's languages, the default first, as each is ready.

    For what every viewer sees alike but in their own language: yielded one
    by one, so the event for the viewers of the first can be sent before the
    next is rendered.
    """
    others = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
    for language in [settings.LANGUAGE_CODE, *others]:
        with translation.override(language):
            yield language, render()


def access_changed(user_id: int) -> None:
    """The operator's workspaces changed: their open pages check at once whether they may stay."""
    send_after_commit(user_group(user_id), {"type": "access.changed"})


def message_changed(task_id: int, message_id: int, *, created: bool) -> None:
    """A timeline row of the task was added (``created``) or changed in place."""
    send_after_commit(task_group(task_id), {"type": "message.changed", "message_id": message_id, "created": created})


def message_appended(task_id: int, message_id: int, text: str, *, offset: int) -> None:
    """``text`` was appended to a streaming message of the task whose content was ``offset`` characters long.

    Pages append it as it is, escaped: nothing is read or rendered for it, so
    what it costs does not grow with the message. ``offset`` lets a page that
    was sent the whole message meanwhile skip what it already shows.
    """
    event = {"type": "message.appended", "message_id": message_id, "offset": offset, "text": text}
    send_after_commit(task_group(task_id), event)


def clarification_settled(task_id: int, pending_id: str, reason: str) -> None:
    """A question left the task's overlay; its pages tell their viewers why."""
    send_after_commit(
        task_group(task_id), {"type": "clarification.settled", "pending_id": pending_id, "reason": reason}
    )


def wake_clarification(pending_id: str) -> None:
    """The bundle's record changed: its waiting tool call should re-read it."""
    send_after_commit(clarification_group(pending_id), {"type": "wake"})


def notify(user_id: int, *, event: str, title: str, body: str, params: dict[str, str], task_id: int) -> None:
    """A toast (and a desktop notice, where allowed) on every open page of one operator.

    ``title`` and ``body`` are msgids, not text: each page's socket translates
    them into its viewer's language, then fills ``body`` in from ``params``.
    """
    message = {"type": "notify", "event": event, "title": title, "body": body, "params": params, "task_id": task_id}
    send_after_commit(user_group(user_id), message)
