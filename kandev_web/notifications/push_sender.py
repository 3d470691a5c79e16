"""Offering queued Web Push notifications to operators' browsers from the web server's loop, once each.

Each web process runs one :class:`PushSender` (a ``background.Worker``
whose passes may overlap, like the webhook sender): woken when a push is queued and committed, it
claims each queued ``Delivery`` with one conditional UPDATE (one process
wins a row; a claim is a lease, let go when it runs out) and sends it,
encrypted and VAPID-signed by pywebpush, to every browser its operator
subscribed. A push is tried once: it is about now, and a push service
keeps it for a browser that is offline. A browser whose push service
answers 404 or 410 has gone (unsubscribed, uninstalled): its subscription
is deleted. Any other failure is logged, naming the subscription by id
only (its endpoint is a capability), and the other browsers still get
theirs. Every push goes through ``kandev_web.outgoing``: only to public
addresses (unless the deployment allows others), no redirects, each over
within ``KANDEV_PUSH_TIMEOUT_SECONDS``, and different push services side by
side so that a dripping endpoint cannot hold up anyone else's pushes.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from kandev_web import outgoing
from kandev_web.metrics import PUSH_DELIVERIES

from . import vapid
from .models import Delivery, PushSubscription

logger = logging.getLogger(__name__)

WEB_PUSH = "web_push"
#: How many queued pushes one pass looks at.
BATCH = 20
#: How long a push service keeps a push for a browser that is offline: a question is about now.
TTL_SECONDS = 3600
#: The push service's answers that mean the subscription is no more (RFC 8030 §7.3, and 404 in practice).
GONE = frozenset({404, 410})


@dataclass(frozen=True)
class _Push:
    """One push to one browser, read from the database beforehand: a pool thread only sends it."""

    subscription_id: int
    endpoint: str
    p256dh: str
    auth: str
    data: bytes


class PushSender(outgoing.DeliveryWorker):
    description = "web push sending"

    def poll_seconds(self) -> float:
        return settings.KANDEV_PUSH_POLL_SECONDS

    def run_once(self) -> int:
        """Offer every queued push this sender can claim to its operator's browsers; how many pushes it tried.

        The pushes of a pass go out side by side, one push service's in turn
        (``outgoing.by_destination``): a slow or dripping endpoint delays only
        the pushes to its own host.
        """
        now = timezone.now()
        due = Delivery.objects.filter(provider=WEB_PUSH, pending=True).filter(
            Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
        )
        claimed = [pk for pk in due.order_by("pk").values_list("pk", flat=True)[:BATCH] if self.claim(pk)]
        pushes = []
        for delivery in Delivery.objects.filter(pk__in=claimed).order_by("pk"):
            # Queued while no web process ran, longer ago than a push service would have kept it: old news.
            if delivery.created_at >= timezone.now() - timedelta(seconds=TTL_SECONDS):
                data = delivery.payload.encode()
                for subscription in PushSubscription.objects.filter(user=delivery.user_id).order_by("pk"):
                    pushes.append(
                        _Push(subscription.pk, subscription.endpoint, subscription.p256dh, subscription.auth, data)
                    )
        if pushes:
            vapid.key()  # made (or read) once here, not by the pool's threads at once
        for push, outcome in outgoing.by_destination(pushes, lambda p: outgoing.destination(p.endpoint), offer):
            settle(push.subscription_id, outcome)
        Delivery.objects.filter(pk__in=claimed).update(pending=False, claimed_until=None)
        return len(claimed)

    def claim(self, pk: int) -> bool:
        now = timezone.now()
        lease = now + timedelta(seconds=settings.KANDEV_PUSH_TIMEOUT_SECONDS * BATCH + 30)
        claimed = (
            Delivery.objects.filter(pk=pk, pending=True)
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .update(claimed_until=lease)
        )
        return claimed == 1


def offer(push: _Push) -> outgoing.Outcome:
    """Send one push through the guarded client (in a pool thread: no database); what came of it."""
    # Imported on the first push, not with the app: pywebpush pulls in aiohttp and requests, a
    # tenth of a second of every kandev-web process's start-up (each manage.py command too).
    from pywebpush import WebPushException, webpush

    info = {"endpoint": push.endpoint, "keys": {"p256dh": push.p256dh, "auth": push.auth}}
    deadline = settings.KANDEV_PUSH_TIMEOUT_SECONDS
    with outgoing.session(deadline) as session:
        try:
            webpush(
                info,
                push.data,
                vapid_private_key=vapid.key(),
                vapid_claims=vapid.claims(),
                ttl=TTL_SECONDS,
                timeout=deadline,
                requests_session=session,
            )
        except WebPushException as error:
            status = getattr(error.response, "status_code", None)
            if status is None:
                return outgoing.Outcome("failed", None, "failed: not sent")
            if status in GONE:
                return outgoing.Outcome("gone", status, f"gone (HTTP {status})")
            return outgoing.outcome_of_status(status)
        except Exception as error:
            return outgoing.outcome_of_error(error, deadline)
    return outgoing.Outcome("delivered", 201)


def settle(subscription_id: int, outcome: outgoing.Outcome) -> None:
    """Count and log what came of a push; a gone browser is forgotten. By id only: its endpoint is a capability."""
    PUSH_DELIVERIES.labels(outcome.kind).inc()
    if outcome.kind == "gone":
        PushSubscription.objects.filter(pk=subscription_id).delete()
        logger.info("push subscription %s is %s: removed", subscription_id, outcome.error)
    elif not outcome.ok:
        logger.warning("push to subscription %s %s", subscription_id, outcome.error)


#: This process's push sender.
sender = PushSender()
