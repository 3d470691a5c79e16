from kandev_web.live_consumer import LiveConsumer

from . import live
from .models import Board


class BoardConsumer(LiveConsumer):
    """Pushes re-rendered columns to every open view of a board."""

    def authorise(self, user):
        board_id = self.scope["url_route"]["kwargs"]["board_id"]
        self.user = user
        self.board = Board.objects.for_user(user).filter(pk=board_id).first()
        return [live.board_group(board_id)] if self.board else []

    def still_allowed(self):
        return Board.objects.for_user(self.user).filter(pk=self.board.pk).exists()

    async def board_changed(self, event):
        from .views import render_columns

        await self.send_fragment(render_columns, self.board, event["step_ids"])
