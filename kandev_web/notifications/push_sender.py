"""Offering queued Web Push notifications to operators' browsers from the web server's loop, once each.

Each web process runs one :class:`PushSender` (a ``background.Worker``,
like the webhook sender): woken when a push is queued and committed, it
claims each queued ``Delivery`` with one conditional UPDATE (one process
wins a row; a claim is a lease, let go when it runs out) and sends it,
encrypted and VAPID-signed by pywebpush, to every browser its operator
subscribed. A push is tried once: it is about now, and a push service
keeps it for a browser that is offline. A browser whose push service
answers 404 or 410 has gone (unsubscribed, uninstalled): its subscription
is deleted. Any other failure is logged, naming the subscription by id
only (its endpoint is a capability), and the other browsers still get
theirs.
"""

import logging
from datetime import timedelta

import requests
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pywebpush import WebPushException, webpush

from kandev_web.background import Worker

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
#: Kept-alive connections to the few push services browsers use (one TLS handshake each, not one
#: per push). Only the sender's pass uses it, one at a time (``Worker._lock``).
_session = requests.Session()


class PushSender(Worker):
    description = "web push sending"

    def poll_seconds(self) -> float:
        return settings.KANDEV_PUSH_POLL_SECONDS

    def run_once(self) -> int:
        with self._lock:
            now = timezone.now()
            due = Delivery.objects.filter(provider=WEB_PUSH, pending=True).filter(
                Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
            )
            tried = 0
            for pk in list(due.order_by("pk").values_list("pk", flat=True)[:BATCH]):
                if self.claim(pk):
                    self.send(pk)
                    tried += 1
            return tried

    def claim(self, pk: int) -> bool:
        now = timezone.now()
        lease = now + timedelta(seconds=settings.KANDEV_PUSH_TIMEOUT_SECONDS * BATCH + 30)
        claimed = (
            Delivery.objects.filter(pk=pk, pending=True)
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .update(claimed_until=lease)
        )
        return claimed == 1

    def send(self, pk: int) -> None:
        delivery = Delivery.objects.get(pk=pk)
        # Queued while no web process ran, longer ago than a push service would have kept it: old news.
        if delivery.created_at >= timezone.now() - timedelta(seconds=TTL_SECONDS):
            data = delivery.payload.encode()
            for subscription in PushSubscription.objects.filter(user=delivery.user_id).order_by("pk"):
                push(subscription, data)
        Delivery.objects.filter(pk=pk).update(pending=False, claimed_until=None)


def push(subscription: PushSubscription, data: bytes) -> bool:
    """Send ``data`` to one browser; whether its push service took it. A gone browser is forgotten."""
    info = {"endpoint": subscription.endpoint, "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth}}
    try:
        webpush(
            info,
            data,
            vapid_private_key=vapid.key(),
            vapid_claims=vapid.claims(),
            ttl=TTL_SECONDS,
            timeout=settings.KANDEV_PUSH_TIMEOUT_SECONDS,
            requests_session=_session,
        )
    except WebPushException as error:
        status = getattr(error.response, "status_code", None)
        if status in GONE:
            PushSubscription.objects.filter(pk=subscription.pk).delete()
            logger.info("push subscription %s is gone (HTTP %s): removed", subscription.pk, status)
        else:
            logger.warning("push to subscription %s failed: HTTP %s", subscription.pk, status)
        return False
    except Exception as error:  # a refused connection, a timeout, a key the browser sent that does not work
        # Its message may quote the endpoint: only its kind is logged.
        logger.warning("push to subscription %s failed: %s", subscription.pk, type(error).__name__)
        return False
    return True


#: This process's push sender.
sender = PushSender()
