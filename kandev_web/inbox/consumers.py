from django.template.loader import render_to_string

from kandev_web import live
from kandev_web.clarifications.answer_socket import AnswerSocket
from kandev_web.clarifications.models import Surface
from kandev_web.live_consumer import LiveConsumer

from .live_count import WaitingCountSocket
from .live_items import WaitingItemsSocket
from .queries import waiting_items


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
        return html + self.render_waiting_count(catching_up=True)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    async def access_changed(self, event):
        # A workspace taken away: its items go (a new one shows live after a reload).
        await self.catch_up()

    def render_changes(self, task_id):
        waiting = waiting_items(self.user, task_ids=[task_id])
        return self.render_item_changes(task_id, waiting) + self.render_waiting_count()

    async def waiting_changed(self, event):
        await self.send_fragment(self.render_changes, event["task_id"])
