from django.template.loader import render_to_string

from kandev_web.board import live
from kandev_web.board.models import Task
from kandev_web.live_consumer import LiveConsumer


class TaskConsumer(LiveConsumer):
    """Pushes task changes to every open view of one task."""

    def authorise(self, user):
        task_id = self.scope["url_route"]["kwargs"]["task_id"]
        self.user = user
        allowed = Task.objects.for_user(user).filter(pk=task_id).exists()
        return live.task_group(task_id) if allowed else None

    def render_task(self):
        from .views import task_context

        task_id = self.scope["url_route"]["kwargs"]["task_id"]
        task = Task.objects.for_user(self.user).select_related("board", "step").filter(pk=task_id).first()
        if task is None:
            return render_to_string("sessions/task.html#deleted-oob")
        return render_to_string("sessions/task.html#details-oob", task_context(task))

    async def task_changed(self, event):
        await self.send_fragment(self.render_task)
