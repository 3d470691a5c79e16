import asyncio
import collections

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from kandev_web import live
from kandev_web.board.models import Task, Workspace
from kandev_web.clarifications import answer_frames, answering
from kandev_web.clarifications.delivery import Outcome
from kandev_web.clarifications.models import Clarification, Surface
from kandev_web.clarifications.settlement import Answerer, describe, ending_of_record, tab_id
from kandev_web.db import database_sync_to_async
from kandev_web.live_consumer import LiveConsumer

from . import fragments


class TaskConsumer(LiveConsumer):
    """Every open view of one task: changes pushed to it, answers received from it.

    Pushes details, session, timeline and task list as they change. Receives
    the overlay's answers (``clarification.answer`` frames) and replies on the
    same socket with what became of each, as the HTTP endpoint would.
    """

    page_kind = "task"

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
        return fragments.render_catch_up(task, self.page_state, tab=self.tab, user=self.user)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    def render_task_rows(self, step_ids, task_ids):
        return fragments.render_task_rows(self.board_id, self.task_id, step_ids=step_ids, task_ids=task_ids)

    def render_message(self, message_id, created):
        return fragments.render_message(self.task_id, message_id, created=created, tab=self.tab, user=self.user)

    async def task_changed(self, event):
        parts = event.get("parts", live.TASK_PARTS)
        if "composer" in parts:
            # What the overlay says changed (the agent gone or moved on, a
            # question settled): read again what Submit will answer.
            self._read_ahead.clear()
        await self.send_fragment(self.render_task, parts)

    async def clarification_asked(self, event):
        """A new question: its overlay, rendered once for every viewer (``clarifications.overlay``), before the rest.

        Then the question is read for answering while the operator reads it,
        so their Submit goes to the agent without waiting on the database.
        """
        overlays = event["html"]
        await self.send(text_data=overlays.get(self.language) or overlays[settings.LANGUAGE_CODE])
        pending_id = event["pending_id"]
        self._read_ahead[pending_id] = asyncio.create_task(self._question_or_none(pending_id))

    async def board_changed(self, event):
        await self.send_fragment(self.render_task_rows, event["step_ids"], event["task_ids"])

    async def clarification_settled(self, event):
        """Why a question left the overlay, who answered it and from where, for every page that was showing it.

        Said once per page and question: not on the page whose own answer is
        on its way (its outcome will say), nor again after it was said.
        """
        pending_id = event["pending_id"]
        self._read_ahead.pop(pending_id, None)
        if pending_id in self._told or pending_id in self._in_flight:
            return
        self._told.add(pending_id)
        await self.send_fragment(self.render_settled_notice, pending_id)

    def _settled_notice(self, pending_id):
        """What this page is told about a settled question, and why it ended; "" if open or answered here."""
        record = (
            Clarification.objects.for_user(self.user)
            .select_related("answered_by")
            .filter(pending_id=pending_id, session__task_id=self.task_id)
            .first()
        )
        if record is None or (record.answered_via == Surface.TASK_PAGE and record.answered_from == self.tab):
            return "", ""
        settled = describe(ending_of_record(record), viewer_tab=self.tab, notice=True, today=timezone.localdate())
        if settled is None:
            return "", ""
        # Rendered (and escaped) by the template; strip() alone would drop its safety.
        notice = mark_safe(render_to_string("clarifications/overlay.html#settlement", {"settled": settled}).strip())
        return notice, record.settled_reason

    def render_settled_notice(self, pending_id):
        notice, reason = self._settled_notice(pending_id)
        if not notice:
            return ""
        return render_to_string("base.html#toast", {"message": notice, "level": "info", "reason": reason})

    async def message_changed(self, event):
        await self.send_fragment(self.render_message, event["message_id"], event["created"])

    # Frames from the page ----------------------------------------------------

    #: Answers on their way to the agent; they finish even if the page goes away.
    _answers: set[asyncio.Task]

    #: Questions announced to this page, read for answering (``clarification_asked``);
    #: dropped when the question or the agent may have changed since.
    _read_ahead: dict[str, asyncio.Task]

    #: Questions this page was told the end of, and those its own answers are on their way to.
    _told: set[str]
    _in_flight: collections.Counter

    async def connect(self):
        self._answers, self._told, self._in_flight = set(), set(), collections.Counter()
        self._read_ahead = {}
        #: Left on the questions this page answers, so every page can tell "this tab" from another.
        self.tab = tab_id(self.channel_name)
        await super().connect()

    def _question(self, pending_id):
        """The task's question ``pending_id``, if the operator may answer it."""
        record = answering.question_for(self.user, pending_id)
        if record.session.task_id != self.task_id:
            raise answering.UnknownQuestion(pending_id)
        return record

    async def _question_or_none(self, pending_id):
        try:
            return await database_sync_to_async(self._question)(pending_id)
        except answering.UnknownQuestion:
            return None

    async def _answerable(self, pending_id):
        """The question to answer: read ahead when it was announced here, else now; the viewer's access checked.

        Whether the answer still counts is not decided here but where the
        question is held (agentctl, or the bundle's locked record), so a record
        read a moment ago is as good as one read now.
        """
        if not await self.allowed():
            raise answering.UnknownQuestion(pending_id)
        read_ahead = self._read_ahead.get(pending_id)
        record = await read_ahead if read_ahead is not None else await self._question_or_none(pending_id)
        if record is None:
            raise answering.UnknownQuestion(pending_id)
        return record

    async def receive(self, text_data=None, bytes_data=None):
        pending_id = None
        try:
            frame = answer_frames.decode(text_data, bytes_data)
            pending_id = frame["pending_id"]
            record = await self._answerable(pending_id)
            submission = answer_frames.submission(frame, record.questions)
        except answering.UnknownQuestion:
            message = _("This question is not one you can answer here.")
            await self.reply(pending_id, Outcome.UNKNOWN_QUESTION, message, "error")
            return
        except answer_frames.BadFrame as bad:
            await self.reply(pending_id, Outcome.BAD_FRAME, str(bad), "error")
            return
        # Its own task: while agentctl is awaited, this socket goes on
        # receiving live updates (a consumer handles one message at a time).
        answer = asyncio.create_task(self._answer(record, submission))
        self._answers.add(answer)
        answer.add_done_callback(self._answers.discard)

    async def _answer(self, record, submission):
        pending_id = record.pending_id
        self._in_flight[pending_id] += 1
        try:
            delivery = await answering.answer(
                record,
                answers=submission.answers,
                rejected=submission.rejected,
                reject_reason=submission.reject_reason,
                answerer=Answerer.of(self.user, Surface.TASK_PAGE, self.tab),
            )
        finally:
            self._in_flight[pending_id] -= 1
            if not self._in_flight[pending_id]:
                del self._in_flight[pending_id]
        message = delivery.message
        if delivery.outcome == Outcome.ALREADY_SETTLED:
            # Said already (a notice came first), or say who answered first, when that is known yet.
            told = pending_id in self._told
            # Before the read below: a settle event arriving meanwhile must not tell this page too.
            self._told.add(pending_id)
            notice, _reason = ("", "") if told else await database_sync_to_async(self._settled_notice)(pending_id)
            message = "" if told else notice or message
        if delivery.outcome not in (Outcome.INVALID, Outcome.STREAM_DOWN, Outcome.NOT_RESPONDING, Outcome.REFUSED):
            self._told.add(pending_id)
        await self.reply(pending_id, delivery.outcome, message, delivery.level, delivery.by_question)

    async def reply(self, pending_id, outcome, message, level, problems=()):
        """What became of one frame: the overlay's outcome marker (with each problem for its question), and a toast."""
        html = render_to_string(
            "clarifications/overlay.html#outcome-oob",
            {"pending_id": pending_id, "outcome": outcome, "message": message, "problems": problems},
        )
        if message:
            html += render_to_string("base.html#toast", {"message": message, "level": level})
        await self.send(text_data=html)
