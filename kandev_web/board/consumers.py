from kandev_web import live
from kandev_web.live_consumer import LiveConsumer

from . import fragments
from .models import Board


class BoardConsumer(LiveConsumer):
    """Pushes the changed cards and column counts to every open view of a board."""

    page_kind = "board"

    def authorise(self, user):
        board_id = self.scope["url_route"]["kwargs"]["board_id"]
        self.user = user
        self.board = Board.objects.for_user(user).filter(pk=board_id).first()
        return [live.board_group(board_id)] if self.board else []

    def still_allowed(self):
        return Board.objects.for_user(self.user).filter(pk=self.board.pk).exists()

    def render_catch_up(self):
        return fragments.render_catch_up(self.board, self.page_state)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    def render_changes(self, step_ids, task_ids):
        return fragments.render_changes(self.board, step_ids=step_ids, task_ids=task_ids)

    async def board_changed(self, event):
        await self.send_fragment(self.render_changes, event["step_ids"], event["task_ids"])
