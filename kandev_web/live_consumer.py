"""The shared shape of a live page socket: authenticate, authorise, join groups, catch up.

A subclass names its groups, says how to render an event and what the page
shows as it is now; it holds no business logic. A socket that fails the
check is closed with 4403 before it joins anything, so nothing is ever sent to it.
"""

import time
from collections.abc import Sequence
from functools import cached_property

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http import HttpRequest, QueryDict
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext

from kandev_web.db import database_sync_to_async
from kandev_web.live import user_group
from kandev_web.metrics import OPEN_SOCKETS

CLOSE_FORBIDDEN = 4403


def viewer_language(scope) -> str:
    """The language of the viewer's pages: the language cookie, else Accept-Language, as LocaleMiddleware picks it."""
    headers = dict(scope.get("headers", ()))
    handshake = HttpRequest()
    handshake.COOKIES = scope.get("cookies", {})
    handshake.META = {"HTTP_ACCEPT_LANGUAGE": headers.get(b"accept-language", b"").decode("latin-1")}
    return translation.get_language_from_request(handshake)


class LiveConsumer(AsyncWebsocketConsumer):
    #: The groups this socket joined; none until it is authorised.
    joined: Sequence[str] = ()
    #: What ``kandev_open_sockets`` counts this page's sockets as.
    page_kind = "page"

    def authorise(self, user) -> list[str]:
        """Return the groups to join when ``user`` may watch this page, else ``[]``."""
        raise NotImplementedError

    def groups_for(self, user) -> list[str]:
        """:meth:`authorise`'s groups and the operator's own, once each; ``[]`` when refused."""
        groups = self.authorise(user)
        return list(dict.fromkeys([*groups, user_group(user.pk)])) if groups else []

    async def connect(self):
        user = self.scope.get("user")
        groups = []
        if user is not None and user.is_authenticated:
            groups = await database_sync_to_async(self.groups_for)(user)
        if not groups:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
        self.joined = groups
        await self.accept()
        OPEN_SOCKETS.labels(self.page_kind).inc()
        await self.catch_up()

    async def catch_up(self):
        """Send what the page shows live, as it is now: whatever it missed while its socket was down.

        Runs after every accept, the first one included (something may have
        changed between the page's render and its socket opening). The groups
        are joined before it reads anything, so every later change still
        arrives as an event after it; the page takes its first frame as the
        catch-up, so this must always send exactly one.
        """
        raise NotImplementedError

    @property
    def page_state(self) -> QueryDict:
        """What the page says it shows, in its socket URL's query string (``static/js/live.js`` writes it)."""
        return QueryDict(self.scope["query_string"])

    async def disconnect(self, code):
        if self.joined:
            OPEN_SOCKETS.labels(self.page_kind).dec()
        for group in self.joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    def still_allowed(self) -> bool:
        """Whether the viewer may still watch this page (membership can be taken away)."""
        raise NotImplementedError

    #: Until when (``time.monotonic()``) the viewer's access holds without asking the database again.
    _allowed_until = 0.0

    @cached_property
    def language(self) -> str:
        return viewer_language(self.scope)

    async def dispatch(self, message):
        # Every fragment this socket sends is rendered for its viewer, in the language of their pages.
        with translation.override(self.language):
            await self._dispatch(message)

    async def _dispatch(self, message):
        # Events are checked against the viewer's access, not only at connect,
        # so an operator removed from a workspace stops hearing it. The answer
        # is kept briefly (a question brings several events at once); a change
        # of membership sends ``access.changed``, which checks again at once.
        if (
            self.joined
            and not message["type"].startswith("websocket.")
            and not await self.allowed(recheck=message["type"] == "access.changed")
        ):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        # Channels' own dispatch closes the thread's database connection before
        # every handler, one more thread hop and a new connection per event;
        # the connection kept by ``kandev_web.db`` is the point.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def allowed(self, *, recheck: bool = False) -> bool:
        """:meth:`still_allowed`, asked of the database at most every ``KANDEV_LIVE_ACCESS_RECHECK_SECONDS``."""
        now = time.monotonic()
        if recheck or now >= self._allowed_until:
            if not await database_sync_to_async(self.still_allowed)():
                return False
            self._allowed_until = now + settings.KANDEV_LIVE_ACCESS_RECHECK_SECONDS
        return True

    async def access_changed(self, event):
        """Handled in :meth:`dispatch`: the check itself is the point."""

    async def notify(self, event):
        """A notification for this operator: a toast, and a desktop notice if they allowed it."""
        said = {}
        if event.get("title"):
            said = {"title": gettext(event["title"]), "body": gettext(event["body"]) % event.get("params", {})}
        await self.send(text_data=render_to_string("base.html#toast", {**event, **said, "level": "notify"}))

    async def send_fragment(self, render, *args):
        html = await database_sync_to_async(render)(*args)
        if html:
            await self.send(text_data=html)
