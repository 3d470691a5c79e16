from functools import cached_property

from django.template.loader import render_to_string

from kandev_web import live
from kandev_web.board.models import Task, Workspace
from kandev_web.clarifications.answer_socket import AnswerSocket
from kandev_web.live_consumer import LiveConsumer
from kandev_web.pages.inbox.live_count import WaitingCountSocket

from . import fragments
from .streaming import Shown


class TaskConsumer(WaitingCountSocket, AnswerSocket, LiveConsumer):
    """Every open view of one task: changes pushed to it, answers received from it.

    Pushes details, session, timeline and task list as they change. Receives
    the overlay's answers (``clarification.answer`` frames) and replies on the
    same socket with what became of each, as the HTTP endpoint would.
    """

    page_kind = "task"

    @cached_property
    def shown(self) -> Shown:
        """How much of each streaming message this socket's page shows."""
        return Shown()

    def authorise(self, user):
        self.user = user
        self.task_id = self.scope["url_route"]["kwargs"]["task_id"]
        self.board_id = Task.objects.for_user(user).filter(pk=self.task_id).values_list("board_id", flat=True).first()
        return [live.task_group(self.task_id), live.board_group(self.board_id)] if self.board_id else []

    def still_allowed(self):
        # A deleted task is still "allowed": its viewers are told it is gone.
        workspace_id = Task.objects.filter(pk=self.task_id).values_list("board__workspace", flat=True).first()
        return workspace_id is None or Workspace.objects.for_user(self.user).filter(pk=workspace_id).exists()

    def _task(self):
        return Task.objects.for_user(self.user).select_related("board", "step").filter(pk=self.task_id).first()

    def render_task(self, parts):
        task = self._task()
        if task is None:
            return render_to_string("sessions/task.html#deleted-oob")
        context = fragments.task_context(task, with_messages=False, parts=parts)
        return render_to_string("sessions/task.html#live-oob", context)

    def render_catch_up(self):
        task = self._task()
        if task is None:
            return render_to_string("sessions/task.html#deleted-oob")
        catch_up = fragments.render_catch_up(task, self.page_state, tab=self.tab, user=self.user, shown=self.shown)
        return catch_up + self.render_waiting_count(catching_up=True)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    def render_task_rows(self, step_ids, task_ids):
        return fragments.render_task_rows(self.board_id, self.task_id, step_ids=step_ids, task_ids=task_ids)

    def render_message(self, message_id, created):
        return fragments.render_message(
            self.task_id, message_id, created=created, tab=self.tab, user=self.user, shown=self.shown
        )

    async def task_changed(self, event):
        parts = event.get("parts", live.TASK_PARTS)
        if "composer" in parts:
            # What the overlay says changed (the agent gone or moved on, a
            # question settled): read again what Submit will answer.
            self._read_ahead.clear()
        await self.send_fragment(self.render_task, parts)

    async def clarification_asked(self, event):
        """A new question: its overlay, rendered once per language for every viewer (``clarifications.overlay``).

        Then the question is read for answering while the operator reads it,
        so their Submit goes to the agent without waiting on the database.
        """
        if event["language"] != self.language:
            return
        await self.send(text_data=event["html"])
        self.read_ahead(event["pending_id"])

    async def board_changed(self, event):
        await self.send_fragment(self.render_task_rows, event["step_ids"], event["task_ids"])

    async def clarification_settled(self, event):
        """Why a question left the overlay, who answered it and from where, for every page that was showing it."""
        if self.first_to_tell(event["pending_id"]):
            await self.send_fragment(self.render_settled_notice, event["pending_id"])

    async def message_changed(self, event):
        await self.send_fragment(self.render_message, event["message_id"], event["created"])

    async def message_appended(self, event):
        """Text streamed into a message: appended on the page as it came, with no database read and no Markdown.

        The message is rendered whole when it settles, and every few seconds
        while it streams (``sessions.events``); in between, what a chunk costs
        here does not depend on how long the message is.
        """
        message_id = event["message_id"]
        text = self.shown.unseen(message_id, event["offset"], event["text"])
        if text is None:
            # The page missed some of it: the whole message, appended anew
            # (static/js/live.js keeps only the latest copy of a message).
            await self.send_fragment(self.render_message, message_id, True)
        elif text:
            await self.send(text_data=fragments.render_delta(message_id, text))

    def may_answer(self, record):
        return record.session.task_id == self.task_id
