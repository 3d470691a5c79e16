"""Answers arriving on a live page's socket: the task page, the inbox and the board all take them the same way.

A consumer that mixes :class:`AnswerSocket` in receives the overlay's
``clarification.answer`` frames, checks them against its viewer's access,
awaits the one answer service (``answering.answer``) and replies on the same
socket with what became of each. What the page may answer (``may_answer``)
and where its answers are recorded as coming from (``surface``) are the
only things that differ.
"""

import asyncio
import collections
from typing import TYPE_CHECKING

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from kandev_web.db import database_sync_to_async

from . import answer_frames, answering, elicitations
from .delivery import Outcome
from .models import Clarification, Surface
from .settlement import Answerer, describe, ending_of_record, tab_id

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser


class AnswerSocket:
    """The half of a live consumer that takes answers; the consumer provides ``user``, ``send`` and ``allowed``."""

    #: Where answers sent on this socket come from, as the audit trail says (``Surface``).
    surface: str = Surface.TASK_PAGE

    #: The viewer, set by the consumer when it authorises the socket.
    user: "AbstractBaseUser"

    #: Answers on their way to the agent; they finish even if the page goes away.
    _answers: set[asyncio.Task]

    #: Questions announced to this page, read for answering ahead of the operator's Submit;
    #: dropped when the question or the agent may have changed since.
    _read_ahead: dict[str, asyncio.Task]
    #: Connections to those questions' agentctls being opened meanwhile (``read_ahead``).
    _reaching: set[asyncio.Task]

    #: Questions this page was told the end of, and those its own answers are on their way to.
    _told: set[str]
    _in_flight: collections.Counter

    async def connect(self):
        self._answers, self._told, self._in_flight = set(), set(), collections.Counter()
        self._read_ahead, self._reaching = {}, set()
        #: Left on the questions this page answers, so every page can tell "this tab" from another.
        self.tab = tab_id(self.channel_name)
        await super().connect()

    def may_answer(self, record: Clarification) -> bool:
        """Whether this page answers ``record`` (one the viewer may answer): the task page only its task's."""
        return True

    def _question(self, pending_id):
        record = answering.question_for(self.user, pending_id)
        if not self.may_answer(record):
            raise answering.UnknownQuestion(pending_id)
        return record

    async def _question_or_none(self, pending_id):
        try:
            return await database_sync_to_async(self._question)(pending_id)
        except answering.UnknownQuestion:
            return None

    def read_ahead(self, pending_id: str) -> None:
        """Read the question while the operator reads it: their Submit then goes out without a database read.

        Then, when another process holds its agent's stream, this one opens
        the connection the answer will go through; Submit does not wait for it.
        """
        question = self._read_ahead[pending_id] = asyncio.create_task(self._question_or_none(pending_id))
        reaching = asyncio.create_task(self._reach_agent_of(question))
        self._reaching.add(reaching)
        reaching.add_done_callback(self._reaching.discard)

    async def _reach_agent_of(self, question: asyncio.Task) -> None:
        record = await question
        if record is not None:
            await elicitations.reach_agent(record)

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
                answerer=Answerer.of(self.user, self.surface, self.tab),
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
            notice, _reason = ("", "") if told else await database_sync_to_async(self.settlement_of)(pending_id)
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

    # Telling the page why a question went away -----------------------------

    def first_to_tell(self, pending_id: str) -> bool:
        """Whether this page is still to be told why ``pending_id`` went away.

        Not if its own answer is on its way (its outcome will say), nor twice.
        """
        self._read_ahead.pop(pending_id, None)
        if pending_id in self._told or pending_id in self._in_flight:
            return False
        self._told.add(pending_id)
        return True

    def ending_of(self, pending_id: str, *, notice: bool, here_too: bool = False) -> tuple[Clarification | None, str]:
        """``pending_id``'s record as this page may read it, and how it ended in this page's words, rendered.

        The sentence is ``""`` while the question is open, and for one this
        page answered unless ``here_too``; the record is ``None`` for a
        question this page does not answer.
        """
        records = Clarification.objects.for_user(self.user).select_related("answered_by", "session")
        record = records.filter(pending_id=pending_id).first()
        if record is None or not self.may_answer(record):
            return None, ""
        if record.answered_from == self.tab and not here_too:
            return record, ""
        settled = describe(ending_of_record(record), viewer_tab=self.tab, notice=notice, today=timezone.localdate())
        if settled is None:
            return record, ""
        # Rendered (and escaped) by the template; strip() alone would drop its safety.
        sentence = render_to_string("clarifications/overlay.html#settlement", {"settled": settled})
        return record, mark_safe(sentence.strip())  # noqa: S308 - escaped by the template

    def settlement_of(self, pending_id: str) -> tuple[str, str]:
        """The notice a page is given when ``pending_id`` went away, and why; ``("", "")`` if open or answered here."""
        record, sentence = self.ending_of(pending_id, notice=True)
        return (sentence, record.settled_reason) if record is not None and sentence else ("", "")

    def render_settled_notice(self, pending_id):
        notice, reason = self.settlement_of(pending_id)
        if not notice:
            return ""
        return render_to_string("base.html#toast", {"message": notice, "level": "info", "reason": reason})
