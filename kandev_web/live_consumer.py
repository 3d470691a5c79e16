"""The shared shape of a live page socket: authenticate, authorise, join a group.

A subclass names its group and says how to render an event; it holds no
business logic. A socket that fails the check is closed with 4403 before it
joins anything, so nothing is ever sent to it.
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

CLOSE_FORBIDDEN = 4403


class LiveConsumer(AsyncWebsocketConsumer):
    group: str | None = None

    def authorise(self, user) -> str | None:
        """Return the group to join when ``user`` may watch this page, else ``None``."""
        raise NotImplementedError

    async def connect(self):
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            self.group = await database_sync_to_async(self.authorise)(user)
        if self.group is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def send_fragment(self, render, *args):
        html = await database_sync_to_async(render)(*args)
        if html:
            await self.send(text_data=html)
