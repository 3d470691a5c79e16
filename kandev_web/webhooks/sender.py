"""Sending queued webhook deliveries from the web server's loop, off every request, once each.

Each web process runs one :class:`Sender` on the loop that serves pages
(a ``background.Worker`` whose passes may overlap). It wakes when a
delivery commits and every ``KANDEV_WEBHOOK_POLL_SECONDS`` besides (for
retries, and for rows another process committed), claims due rows with one
conditional UPDATE — which works on SQLite and PostgreSQL alike and lets
only one process win a row — and POSTs them through ``kandev_web.outgoing``:
only to public addresses (unless the deployment allows others), no
redirects, each POST over within ``KANDEV_WEBHOOK_TIMEOUT_SECONDS``, each
receiver's deliveries in turn and different receivers' side by side. A
claim is a lease: a process that dies mid-send lets go of its rows when it
runs out.
"""

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from kandev_web import outgoing
from kandev_web.metrics import WEBHOOK_DELIVERIES
from kandev_web.secret_box import SecretUnreadable

from . import signing
from .models import DeliveryState, WebhookAttempt, WebhookDelivery
from .retries import retry_delay

logger = logging.getLogger(__name__)

USER_AGENT = "kandev-webhooks/1"
#: How many due deliveries one pass looks at.
BATCH = 20


@dataclass(frozen=True)
class _Post:
    """One claimed delivery, ready to send: everything the POST needs, read from the database beforehand."""

    delivery: WebhookDelivery
    url: str
    body: bytes
    headers: dict[str, str]


def _send(post: _Post) -> tuple[outgoing.Outcome, int]:
    """POST it (in a pool thread: no database here); what came of it, and how long it took in ms."""
    started = time.monotonic()
    outcome = outgoing.post(post.url, post.body, post.headers, settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS)
    return outcome, int((time.monotonic() - started) * 1000)


class Sender(outgoing.DeliveryWorker):
    description = "webhook sending"

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self.name = name or f"sender-{uuid.uuid4().hex[:12]}"

    def poll_seconds(self) -> float:
        return settings.KANDEV_WEBHOOK_POLL_SECONDS

    # -- anywhere ------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Send every delivery due now that this sender can claim; how many it tried.

        Each receiver's deliveries go one after the other, different
        receivers' side by side (``outgoing.by_destination``): one slow
        receiver delays only its own.
        """
        now = timezone.now()
        due = WebhookDelivery.objects.filter(
            state=DeliveryState.PENDING, next_attempt_at__lte=now, webhook__active=True
        ).filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        claimed = [
            pk for pk in due.order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:BATCH] if self.claim(pk)
        ]
        self.attempt(*claimed)
        return len(claimed)

    def claim(self, pk: int) -> bool:
        """Take delivery ``pk`` for one attempt, if it is due and nobody holds it: one UPDATE, one winner."""
        now = timezone.now()
        # A receiver's deliveries wait for each other: a whole batch may be one receiver's.
        lease = now + timedelta(seconds=settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS * BATCH + 30)
        claimed = (
            WebhookDelivery.objects.filter(pk=pk, state=DeliveryState.PENDING, next_attempt_at__lte=now)
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .update(claimed_by=self.name, claimed_until=lease)
        )
        return claimed == 1

    def attempt(self, *pks: int) -> None:
        """POST each claimed delivery once and record what came of it, as each comes back."""
        posts = []
        for delivery in (
            WebhookDelivery.objects.select_related("webhook").filter(pk__in=pks).order_by("next_attempt_at", "pk")
        ):
            try:
                secret = delivery.webhook.signing_secret()
            except SecretUnreadable:
                # Not sent unsigned: retried, so restoring the key lets it through before it is given up.
                unsigned = outgoing.Outcome(
                    "unsigned", None, "its signing secret does not open with KANDEV_SECRETS_KEY"
                )
                self._record(delivery, unsigned, 0)
                continue
            body = delivery.body.encode()
            headers = {
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "X-Kandev-Event": delivery.event,
                **signing.headers(secret, str(delivery.delivery), body, int(time.time())),
            }
            posts.append(_Post(delivery, delivery.webhook.url, body, headers))
        for post, (outcome, duration_ms) in outgoing.by_destination(
            posts, lambda p: outgoing.destination(p.url), _send
        ):
            self._record(post.delivery, outcome, duration_ms)

    @transaction.atomic
    def _record(self, delivery: WebhookDelivery, outcome: outgoing.Outcome, duration_ms: int) -> None:
        WEBHOOK_DELIVERIES.labels(outcome.kind).inc()
        status, error = outcome.status, outcome.error
        now = timezone.now()
        number = delivery.attempts + 1
        WebhookAttempt.objects.create(
            delivery=delivery, number=number, at=now, status=status, error=error, duration_ms=duration_ms
        )
        changes: dict = {"attempts": F("attempts") + 1, "last_status": status, "last_error": error}
        if not error:
            changes |= {"state": DeliveryState.DELIVERED, "delivered_at": now, "next_attempt_at": None}
        else:
            delay = retry_delay(number, tuple(settings.KANDEV_WEBHOOK_BACKOFF_SECONDS))
            if delay is None:
                changes |= {"state": DeliveryState.FAILED, "next_attempt_at": None}
            else:
                changes |= {"next_attempt_at": now + timedelta(seconds=delay)}
            logger.warning(
                "webhook %s delivery %s attempt %d failed: %s", delivery.webhook_id, delivery.delivery, number, error
            )
        WebhookDelivery.objects.filter(pk=delivery.pk, claimed_by=self.name).update(
            claimed_by="", claimed_until=None, **changes
        )


#: This process's sender.
sender = Sender()
