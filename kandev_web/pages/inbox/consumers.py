from django.template.loader import render_to_string

from kandev_web import live
from kandev_web.board.models import Workspace
from kandev_web.clarifications.answer_socket import AnswerSocket
from kandev_web.clarifications.models import Surface
from kandev_web.db import database_sync_to_async
from kandev_web.live_consumer import LiveConsumer

from .live_count import WaitingCountSocket
from .live_items import WaitingItemsSocket
from .queries import over_budget, waiting_items


class InboxConsumer(WaitingItemsSocket, WaitingCountSocket, AnswerSocket, LiveConsumer):
    """One operator's inbox: items arrive and leave (with why) as they change, and answers go out on it.

    It hears every workspace of its viewer (``WaitingCountSocket``), and reads
    what waits on a task again whenever that may have changed; answers take the
    task page's path (``AnswerSocket``), recorded as from the inbox.
    """

    page_kind = "inbox"
    surface = Surface.INBOX

    def authorise(self, user):
        self.user = user
        # Anyone signed in has an inbox, if an empty one: their own group is enough to be accepted.
        return [live.user_group(user.pk)]

    def still_allowed(self):
        # Every item is read for its viewer's access (``waiting_items``): nothing to close for.
        return True

    def render_catch_up(self):
        items = waiting_items(self.user)
        self.show_items(items)
        html = render_to_string("inbox/inbox.html#items", {"items": items, "oob": True})
        return html + self.render_over_budget() + self.render_waiting_count(catching_up=True)

    def render_over_budget(self) -> str:
        """The tasks over their budget, out of band: a budget set or crossed anywhere changes them."""
        return render_to_string("inbox/inbox.html#over-budget", {"over_budget": over_budget(self.user), "oob": True})

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    async def access_changed(self, event):
        # A workspace taken away: its group is left and its items go (a new one shows live after a reload).
        kept = await database_sync_to_async(self.still_member_of)()
        for workspace_id in self.workspace_ids - kept:
            await self.channel_layer.group_discard(live.workspace_group(workspace_id), self.channel_name)
        self.workspace_ids = kept
        await self.catch_up()

    def still_member_of(self) -> set[int]:
        return set(Workspace.objects.for_user(self.user).filter(pk__in=self.workspace_ids).values_list("pk", flat=True))

    def render_changes(self, task_id):
        waiting = waiting_items(self.user, task_ids=[task_id])
        return self.render_item_changes(task_id, waiting) + self.render_over_budget() + self.render_waiting_count()

    async def waiting_changed(self, event):
        await self.send_fragment(self.render_changes, event["task_id"])

    async def waiting_asked(self, event):
        """A new question's item, rendered once for every member (``overlay.render_inbox_item``): sent as it is.

        Its workspace is checked against the ones this socket joined, which an
        ``access.changed`` brings up to date; the count follows with the
        ``waiting.changed`` the rest of the question brings.
        """
        if event["language"] != self.language or event["workspace_id"] not in self.workspace_ids:
            return
        if self.announce(event["pending_id"], event["task_id"]):
            await self.send(text_data=event["html"])
