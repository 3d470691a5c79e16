"""Telling operators that an agent needs them, once per occurrence.

The text names the task, never the question: notifications end up on lock
screens and in other people's field of view.
"""

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_noop

from kandev_web import live

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
    """``title`` and ``body`` are msgids: each open page says them in its viewer's language; ``body`` names the task."""
    members = get_user_model().objects.filter(workspaces=task.board.workspace_id, is_active=True)
    for user in members:
        if not enabled_for(user, event):
            continue
        try:
            with transaction.atomic():
                Delivery.objects.create(provider=IN_APP, event=event, occurrence=occurrence, user=user)
        except IntegrityError:
            continue  # this occurrence already reached this operator
        live.notify(user.pk, event=str(event), title=title, body=body, params={"title": task.title}, task_id=task.pk)


def clarification_requested(clarification) -> None:
    task = clarification.session.task
    _notify(
        task,
        Event.CLARIFICATION_REQUESTED,
        clarification.pending_id,
        gettext_noop("Agent needs your answer"),
        gettext_noop('The agent asked a question on "%(title)s".'),
    )


def turn_finished(session, turn) -> None:
    task = session.task
    _notify(
        task,
        Event.TURN_FINISHED,
        f"turn-{turn.pk}",
        gettext_noop("Agent finished its turn"),
        gettext_noop('The agent finished its turn on "%(title)s".'),
    )
