from django.template.loader import render_to_string
from django.utils.translation import gettext as _

from kandev_web import live
from kandev_web.board.models import Board, Task
from kandev_web.clarifications.answer_frames import BadFrame
from kandev_web.clarifications.answer_socket import AnswerSocket
from kandev_web.clarifications.delivery import Outcome
from kandev_web.clarifications.models import Surface
from kandev_web.live_consumer import LiveConsumer
from kandev_web.pages.inbox.live_count import WaitingCountSocket
from kandev_web.pages.inbox.live_items import WaitingItemsSocket, panel_task_id
from kandev_web.pages.inbox.queries import waiting_items

from . import fragments
from .filters import BoardFilter


class BoardConsumer(WaitingItemsSocket, WaitingCountSocket, AnswerSocket, LiveConsumer):
    """Pushes the changed cards and column counts to every open view of a board, and answers from its cards.

    A card waiting on an operator opens the answer panel (``answer_panel.open``
    frames): that task's questions and permission requests, kept live like the
    inbox's, answered on this socket (``AnswerSocket``) as from the board.
    """

    page_kind = "board"
    surface = Surface.BOARD

    #: The task whose waiting items the answer panel shows (``None``: no panel opened yet).
    _panel_task_id: int | None = None

    def authorise(self, user):
        board_id = self.scope["url_route"]["kwargs"]["board_id"]
        self.user = user
        self.board = Board.objects.for_user(user).filter(pk=board_id).first()
        return [live.board_group(board_id)] if self.board else []

    def still_allowed(self):
        return Board.objects.for_user(self.user).filter(pk=self.board.pk).exists()

    def may_answer(self, record):
        return Task.objects.filter(pk=record.session.task_id, board=self.board).exists()

    def render_catch_up(self):
        return fragments.render_catch_up(self.board, self.page_state) + self.render_waiting_count(catching_up=True)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    def render_changes(self, step_ids, task_ids):
        shown = BoardFilter.from_query(self.page_state)
        return fragments.render_changes(self.board, step_ids=step_ids, task_ids=task_ids, shown=shown)

    async def board_changed(self, event):
        await self.send_fragment(self.render_changes, event["step_ids"], event["task_ids"])

    # The answer panel ------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        try:
            task_id = panel_task_id(text_data)
        except BadFrame as bad:
            await self.reply(None, Outcome.BAD_FRAME, str(bad), "error")
            return
        if task_id is None:
            await super().receive(text_data, bytes_data)
        elif await self.allowed():
            await self.send_fragment(self.render_panel, task_id)

    def render_panel(self, task_id):
        task = Task.objects.select_related("board").filter(pk=task_id, board=self.board).first()
        if task is None:
            message = _("This task is not on this board any more.")
            return render_to_string("base.html#toast", {"message": message, "level": "error"})
        items = waiting_items(self.user, task_ids=[task_id])
        self._panel_task_id = task_id
        self.show_items(items)
        return render_to_string("inbox/inbox.html#answer-panel", {"task": task, "items": items})

    def render_waiting_changes(self, task_id):
        html = ""
        if task_id == self._panel_task_id:
            html = self.render_item_changes(task_id, waiting_items(self.user, task_ids=[task_id]))
        return html + self.render_waiting_count()

    async def waiting_changed(self, event):
        await self.send_fragment(self.render_waiting_changes, event["task_id"])
