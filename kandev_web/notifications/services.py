"""Telling operators that an agent needs them, once per occurrence.

The text names the task, never the question: notifications end up on lock
screens and in other people's field of view.
"""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from kandev_web.live_consumer import user_group

from .models import DEFAULTS, Delivery, Event, NotificationSetting

IN_APP = "in_app"


def enabled_for(user, event: str) -> bool:
    setting = NotificationSetting.objects.filter(user=user, event=event).values_list("enabled", flat=True).first()
    return DEFAULTS[Event(event)] if setting is None else setting


def settings_for(user) -> list[dict]:
    return [{"event": event, "label": event.label, "enabled": enabled_for(user, event)} for event in Event]


def set_enabled(user, event: str, enabled: bool) -> None:
    NotificationSetting.objects.update_or_create(user=user, event=Event(event), defaults={"enabled": enabled})


def _notify(task, event: Event, occurrence: str, title: str, body: str) -> None:
    members = get_user_model().objects.filter(workspaces=task.board.workspace_id, is_active=True)
    for user in members:
        if not enabled_for(user, event):
            continue
        try:
            with transaction.atomic():
                Delivery.objects.create(provider=IN_APP, event=event, occurrence=occurrence, user=user)
        except IntegrityError:
            continue  # this occurrence already reached this operator
        message = {"type": "notify", "event": str(event), "title": title, "body": body, "task_id": task.pk}
        group = user_group(user.pk)
        transaction.on_commit(
            lambda group=group, message=message: async_to_sync(get_channel_layer().group_send)(group, message)
        )


def clarification_requested(clarification) -> None:
    task = clarification.session.task
    _notify(
        task,
        Event.CLARIFICATION_REQUESTED,
        clarification.pending_id,
        _("Agent needs your answer"),
        _('The agent asked a question on "%(title)s".') % {"title": task.title},
    )


def turn_finished(session, turn) -> None:
    task = session.task
    _notify(
        task,
        Event.TURN_FINISHED,
        f"turn-{turn.pk}",
        _("Agent finished its turn"),
        _('The agent finished its turn on "%(title)s".') % {"title": task.title},
    )
