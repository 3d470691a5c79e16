from django.template.loader import render_to_string

from kandev_web.board import live
from kandev_web.board.models import Task
from kandev_web.live_consumer import LiveConsumer

from .models import Message


class TaskConsumer(LiveConsumer):
    """Pushes changes to every open view of one task: details, session, timeline, task list."""

    def authorise(self, user):
        self.user = user
        self.task_id = self.scope["url_route"]["kwargs"]["task_id"]
        self.board_id = Task.objects.for_user(user).filter(pk=self.task_id).values_list("board_id", flat=True).first()
        return [live.task_group(self.task_id), live.board_group(self.board_id)] if self.board_id else []

    def still_allowed(self):
        # A deleted task is still "allowed": its viewers are told it is gone.
        task = Task.objects.filter(pk=self.task_id).values_list("board__workspace", flat=True).first()
        return task is None or self.user.workspaces.filter(pk=task).exists()

    def _task(self):
        return Task.objects.for_user(self.user).select_related("board", "step").filter(pk=self.task_id).first()

    def render_task(self):
        from .views import task_context

        task = self._task()
        if task is None:
            return render_to_string("sessions/task.html#deleted-oob")
        return render_to_string("sessions/task.html#live-oob", task_context(task, with_messages=False))

    def render_catch_up(self):
        from .views import render_catch_up

        task = self._task()
        if task is None:
            return render_to_string("sessions/task.html#deleted-oob")
        return render_catch_up(task, self.page_state)

    async def catch_up(self):
        await self.send_fragment(self.render_catch_up)

    def render_task_rows(self, step_ids, task_ids):
        from .views import render_task_rows

        return render_task_rows(self.board_id, self.task_id, step_ids=step_ids, task_ids=task_ids)

    def render_message(self, message_id, created):
        message = Message.objects.filter(pk=message_id, session__task_id=self.task_id).first()
        if message is None:
            return ""
        return render_to_string("sessions/task.html#message-oob", {"message": message, "created": created})

    async def task_changed(self, event):
        await self.send_fragment(self.render_task)

    async def board_changed(self, event):
        await self.send_fragment(self.render_task_rows, event["step_ids"], event["task_ids"])

    async def clarification_settled(self, event):
        """Why a question left the overlay, for everyone who was looking at it."""
        from kandev_web.clarifications.elicitations import SETTLED_NOTICES

        notice = SETTLED_NOTICES.get(event["reason"])
        if notice:
            html = render_to_string("base.html#toast", {"message": notice, "level": "info", "reason": event["reason"]})
            await self.send(text_data=html)

    async def message_changed(self, event):
        await self.send_fragment(self.render_message, event["message_id"], event["created"])
