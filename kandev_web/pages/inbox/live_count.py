"""The navigation's count of what waits on the operator, kept live on every page that has a socket.

A consumer that mixes :class:`WaitingCountSocket` in also joins the group of
each of its viewer's workspaces, and sends the count again whenever what
waits there may have changed (``live.waiting_changed``), only when it did.
"""

from django.template.loader import render_to_string

from kandev_web import live
from kandev_web.board.models import Workspace

from .queries import waiting_count


class WaitingCountSocket:
    """Mixed into a ``LiveConsumer``: joins the viewer's workspaces' groups, keeps ``#inbox-count`` current."""

    #: The count this page shows, as last sent (``None``: as rendered with the page).
    _shown_count: int | None = None

    def groups_for(self, user):
        groups = super().groups_for(user)
        if not groups:
            return []
        self.user = user
        #: The workspaces whose groups this socket joined: what it may be told about.
        self.workspace_ids = set(Workspace.objects.for_user(user).values_list("pk", flat=True))
        return [*groups, *(live.workspace_group(pk) for pk in self.workspace_ids)]

    def render_waiting_count(self, *, catching_up: bool = False) -> str:
        """``#inbox-count`` out of band when it differs from the page's (or catching up), else ``""``."""
        count = waiting_count(self.user)
        if count == self._shown_count and not catching_up:
            return ""
        self._shown_count = count
        return render_to_string("base.html#inbox-count", {"waiting_count": count, "oob": True})

    async def waiting_changed(self, event):
        await self.send_fragment(self.render_waiting_count)

    async def waiting_asked(self, event):
        # Sent once per language: counted once.
        if event["language"] == self.language:
            await self.send_fragment(self.render_waiting_count)
