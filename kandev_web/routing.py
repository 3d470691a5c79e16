"""The WebSocket URLconf: a board's, a task's and the inbox's live page, and a refusal for every other path."""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from kandev_web.pages.board.consumers import BoardConsumer
from kandev_web.pages.inbox.consumers import InboxConsumer
from kandev_web.pages.task.consumers import TaskConsumer

#: The socket counterpart of a 404 (4000-4999 are the application's own close codes).
CLOSE_NOT_FOUND = 4404


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any path no page listens on, for anyone, logged in or not: refused before the handshake completes.

    Without it Channels' router raises for the unknown path, and every such
    request, anonymous ones included, writes a traceback to the server's log.
    """

    async def connect(self):
        await self.close(code=CLOSE_NOT_FOUND)


# django-stubs' path() takes views only, not the ASGI applications Channels routes: hence the ignores.
websocket_urlpatterns = [
    path("ws/boards/<int:board_id>/", BoardConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/tasks/<int:task_id>/", TaskConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/inbox/", InboxConsumer.as_asgi()),  # type: ignore[arg-type]
    re_path(r"", NotFoundConsumer.as_asgi()),  # type: ignore[arg-type]
]
