"""Waiting items kept live on a page's socket: the inbox's list, and the board's answer panel.

A consumer that mixes :class:`WaitingItemsSocket` in remembers which items
its page shows; when what waits on a task may have changed it adds the ones
that arrived and turns the ones that left into a line saying why (completed
in place when who answered is known only later).
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from kandev_web import socket_input
from kandev_web.clarifications.answer_frames import MAX_FRAME_BYTES, BadFrame
from kandev_web.clarifications.models import Clarification
from kandev_web.sessions.models import Message, MessageType

from .queries import QUESTION, WaitingItem, agent_name

#: The frame a board card's Answer button sends: show that task's waiting items in the answer panel.
PANEL_OPEN = "answer_panel.open"


def panel_task_id(text: str | None) -> int | None:
    """The task a ``PANEL_OPEN`` frame asks for; ``None`` for any other frame (an answer, or one refused as such).

    Raises ``BadFrame`` for a ``PANEL_OPEN`` frame without a task id.
    """
    if not text:
        return None
    try:
        frame = socket_input.json_frame(text, max_bytes=MAX_FRAME_BYTES)
    except socket_input.UnreadableFrame:
        return None
    if not isinstance(frame, dict) or frame.get("type") != PANEL_OPEN:
        return None
    task_id = frame.get("task_id")
    if isinstance(task_id, str) and task_id.isascii() and task_id.isdigit():
        task_id = int(task_id)
    if not isinstance(task_id, int) or isinstance(task_id, bool) or not 0 < task_id <= socket_input.MAX_COLUMN_INT:
        raise BadFrame(_("This frame does not say which task to answer."))
    return task_id


@dataclass(frozen=True)
class Announced:
    """An item the page was sent as rendered for everyone (``waiting.asked``): only its ids are known here yet."""

    pending_id: str
    task_id: int


def _task_id(shown: "WaitingItem | Announced") -> int:
    return shown.task_id if isinstance(shown, Announced) else shown.task.pk


class WaitingItemsSocket:
    """Mixed into a live consumer whose page lists waiting items, with ``AnswerSocket`` (its ``ending_of``)."""

    #: What the page shows waiting, by pending id.
    _shown: dict[str, WaitingItem | Announced]
    #: What it shows as having left, and the words it said why: who answered may be known only later.
    _left: dict[str, tuple[WaitingItem, str]]
    #: ``AnswerSocket.ending_of``, mixed in beside this (declared only: a method here would hide it).
    ending_of: Callable[..., tuple[Clarification | None, str]]

    def show_items(self, items: list[WaitingItem]) -> None:
        """The page now shows ``items`` and nothing else (a catch-up, a panel opened)."""
        self._shown, self._left = {item.pending_id: item for item in items}, {}

    def announce(self, pending_id: str, task_id: int) -> bool:
        """Whether the page is still to be sent ``pending_id``'s item as rendered for everyone; it is shown from now."""
        if not hasattr(self, "_shown") or pending_id in self._shown:
            return False
        self._shown[pending_id] = Announced(pending_id, task_id)
        return True

    def render_item_changes(self, task_id: int, waiting: list[WaitingItem]) -> str:
        """The task's items that arrived, those that left (each saying why) or whose why changed.

        ``waiting`` is what waits on the task now.
        """
        if not hasattr(self, "_shown"):
            return ""
        now = {item.pending_id: item for item in waiting}
        gone = [pid for pid, shown in self._shown.items() if _task_id(shown) == task_id and pid not in now]
        html = [self.render_left(self._known(self._shown.pop(pid))) for pid in gone]
        html += [self.render_left(item, said) for item, said in list(self._left.values()) if item.task.pk == task_id]
        for pending_id, item in now.items():
            shown = self._shown.get(pending_id)
            if shown is None:
                html.append(render_to_string("inbox/inbox.html#item-oob", {"item": item}))
            if not isinstance(shown, WaitingItem):
                self._shown[pending_id] = item  # known in full now, for when it leaves
        return "".join(html)

    def _known(self, shown: WaitingItem | Announced) -> WaitingItem | Announced:
        """``shown`` in full, read now if the page had only its ids; as it was if its record is gone."""
        if isinstance(shown, WaitingItem):
            return shown
        records = Clarification.objects.select_related("session__agent_profile", "session__task__board")
        record = records.filter(pending_id=shown.pending_id).first()
        if record is None:
            return shown
        session = record.session
        asked_at = record.created_at
        return WaitingItem(QUESTION, record.pending_id, session.task, agent_name(session), asked_at, record=record)

    def render_left(self, item: WaitingItem | Announced, said: str | None = None) -> str:
        """The item as it left: why it went (``reason``, and a sentence), until the operator dismisses it.

        ``said``: what the page already says about an item that left before; nothing is sent while it holds.
        An item whose task and record are gone just goes.
        """
        if isinstance(item, Announced):
            return render_to_string("inbox/inbox.html#gone-oob", {"pending_id": item.pending_id})
        sentence, reason = "", "deleted"
        if item.kind == QUESTION:
            record, sentence = self.ending_of(item.pending_id, notice=False, here_too=True)
            if record is not None and sentence:
                reason = record.settled_reason or record.status
        else:
            message = (
                Message.objects.filter(type=MessageType.PERMISSION_REQUEST, metadata__pending_id=item.pending_id)
                .exclude(metadata__status="pending")
                .first()
            )
            if message is not None:
                # Rendered (and escaped) by the template; strip() alone would drop its safety.
                outcome = render_to_string("sessions/task.html#permission-outcome", {"message": message})
                sentence = mark_safe(outcome.strip())  # noqa: S308 - escaped by the template
                reason = message.metadata.get("outcome") or "withdrawn"
        if sentence == said:
            return ""
        self._left[item.pending_id] = (item, sentence)
        return render_to_string("inbox/inbox.html#left-oob", {"item": item, "sentence": sentence, "reason": reason})
