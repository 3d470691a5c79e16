"""Telling operators that an agent needs them, once per occurrence, on each channel.

The text names the task, never the question: notifications end up on lock
screens and in other people's field of view. Two providers: in-app (every
open page, at once) and Web Push (each browser the operator subscribed,
queued in the event's transaction and sent after it commits, off the
request and the agent stream, by ``push_sender``).
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from kandev_web import live
from kandev_web.clarifications.models import Mode

from . import webpush
from .models import DEFAULTS, Delivery, Event, NotificationSetting, PushSubscription
from .push_sender import WEB_PUSH
from .push_sender import sender as push_sender

IN_APP = "in_app"


def enabled_for(user, event: str) -> bool:
    setting = NotificationSetting.objects.filter(user=user, event=event).values_list("enabled", flat=True).first()
    return DEFAULTS[Event(event)] if setting is None else setting


def settings_for(user) -> list[dict]:
    return [{"event": event, "label": event.label, "enabled": enabled_for(user, event)} for event in Event]


def set_enabled(user, event: str, enabled: bool) -> None:
    NotificationSetting.objects.update_or_create(user=user, event=Event(event), defaults={"enabled": enabled})


def _record(provider: str, event: Event, occurrence: str, user, **fields) -> bool:
    """Write the delivery; ``False`` if this occurrence already reached this operator this way."""
    try:
        with transaction.atomic():
            Delivery.objects.create(provider=provider, event=event, occurrence=occurrence, user=user, **fields)
    except IntegrityError:
        return False
    return True


def _push_payload(task, occurrence: str, title: str, body: str) -> str:
    # A push is written before any browser shows it, so it cannot be in each viewer's language:
    # it is in the deployment's (LANGUAGE_CODE), the language an operator has not chosen otherwise.
    with translation.override(settings.LANGUAGE_CODE):
        payload = webpush.build(
            title=gettext(title),
            body=gettext(body),
            task_title=task.title,
            url=reverse("sessions:task", args=[task.pk]),
            tag=f"kandev-{occurrence}",
        )
    return webpush.encode(payload).decode()


def _notify(task, event: Event, occurrence: str, title: str, body: str) -> None:
    """``title`` and ``body`` are msgids: each open page says them in its viewer's language; ``body`` names the task."""
    members = get_user_model().objects.filter(workspaces=task.board.workspace_id, is_active=True)
    pushed = False
    for user in members:
        if not enabled_for(user, event):
            continue
        if _record(IN_APP, event, occurrence, user):
            params = {"title": task.title}
            live.notify(user.pk, event=str(event), title=title, body=body, params=params, task_id=task.pk)
        if PushSubscription.objects.filter(user=user).exists():
            payload = _push_payload(task, occurrence, title, body)
            pushed |= _record(WEB_PUSH, event, occurrence, user, payload=payload, pending=True)
    if pushed:
        transaction.on_commit(push_sender.wake)


def clarification_requested(clarification) -> None:
    task = clarification.session.task
    if clarification.mode == Mode.URL:
        # A sign-in page, say: the operator has a page to open, not a question to answer (never its address).
        title = gettext_noop("Agent asks you to open a page")
        body = gettext_noop('The agent on "%(title)s" asks you to open a page.')
    else:
        title = gettext_noop("Agent needs your answer")
        body = gettext_noop('The agent asked a question on "%(title)s".')
    _notify(task, Event.CLARIFICATION_REQUESTED, clarification.pending_id, title, body)


def turn_finished(session, turn) -> None:
    task = session.task
    _notify(
        task,
        Event.TURN_FINISHED,
        f"turn-{turn.pk}",
        gettext_noop("Agent finished its turn"),
        gettext_noop('The agent finished its turn on "%(title)s".'),
    )


#: The most browsers one operator's notifications are pushed to. Subscribing one more drops the
#: oldest: an operator cannot see or remove a browser they no longer use, and a stale one is the
#: likeliest to be it (a browser that comes back subscribes again when its settings page opens).
MAX_SUBSCRIPTIONS = 10


class EndpointTaken(Exception):
    """The endpoint is another operator's subscription: it is not taken over (and whose it is, not told)."""


def subscribe(user, subscription: webpush.Subscription) -> None:
    """Push ``user``'s notifications to this browser, keeping their ``MAX_SUBSCRIPTIONS`` newest.

    An endpoint is a capability: whoever registered it first keeps it, so
    nobody can redirect another operator's pushes to themselves by posting
    that endpoint (``EndpointTaken``). A browser that changes hands
    unsubscribes and subscribes again, which gives it a new endpoint.
    """
    try:
        with transaction.atomic():
            mine, created = PushSubscription.objects.select_for_update().get_or_create(
                endpoint=subscription.endpoint,
                defaults={"user": user, "p256dh": subscription.p256dh, "auth": subscription.auth},
            )
            if mine.user_id != user.pk:
                raise EndpointTaken
            if not created:
                PushSubscription.objects.filter(pk=mine.pk).update(p256dh=subscription.p256dh, auth=subscription.auth)
                return
            theirs = PushSubscription.objects.filter(user=user)
            newest = list(theirs.order_by("-created_at", "-pk").values_list("pk", flat=True)[:MAX_SUBSCRIPTIONS])
            theirs.exclude(pk__in=newest).delete()
    except IntegrityError:
        raise EndpointTaken from None  # registered by a request racing this one


def unsubscribe(user, endpoint: str) -> None:
    PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
