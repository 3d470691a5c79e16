"""Sending queued webhook deliveries from the web server's loop, off every request, once each.

Each web process runs one :class:`Sender` on the loop that serves pages
(a ``background.Worker``). It wakes when a delivery commits and every
``KANDEV_WEBHOOK_POLL_SECONDS`` besides (for retries, and for rows another
process committed), claims due rows with one conditional UPDATE —
which works on SQLite and PostgreSQL alike and lets only one process win a
row — and POSTs each in a worker thread with a short timeout. A claim is a
lease: a process that dies mid-send lets go of its rows when it runs out.
"""

import logging
import time
import urllib.error
import urllib.request
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from kandev_web.background import Worker
from kandev_web.secret_box import SecretUnreadable

from . import signing
from .models import DeliveryState, WebhookAttempt, WebhookDelivery
from .retries import retry_delay

logger = logging.getLogger(__name__)

USER_AGENT = "kandev-webhooks/1"
#: How many due deliveries one pass looks at.
BATCH = 20


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is a failed attempt: following it would resend a signed body somewhere else (or drop it)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """POST ``body``; the response's status (``None`` if there was none) and a one-line error ('' on a 2xx).

    The error names what went wrong, never the response's body or the URL's
    query (either may carry a receiver's secrets into the delivery log).
    """
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 - WebhookForm admits http(s) only
    try:
        with _opener.open(request, timeout=timeout) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        return error.code, f"HTTP {error.code}"
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            return None, f"timed out after {timeout:g} s"
        return None, str(reason)[:300]
    except TimeoutError:
        return None, f"timed out after {timeout:g} s"
    except OSError as error:
        return None, (str(error) or type(error).__name__)[:300]
    if 200 <= status < 300:
        return status, ""
    return status, f"HTTP {status}"


class Sender(Worker):
    description = "webhook sending"

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self.name = name or f"sender-{uuid.uuid4().hex[:12]}"

    def poll_seconds(self) -> float:
        return settings.KANDEV_WEBHOOK_POLL_SECONDS

    # -- anywhere ------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Send every delivery due now that this sender can claim; how many it tried."""
        with self._lock:
            now = timezone.now()
            due = WebhookDelivery.objects.filter(
                state=DeliveryState.PENDING, next_attempt_at__lte=now, webhook__active=True
            ).filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            tried = 0
            for pk in list(due.order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:BATCH]):
                if self.claim(pk):
                    self.attempt(pk)
                    tried += 1
            return tried

    def claim(self, pk: int) -> bool:
        """Take delivery ``pk`` for one attempt, if it is due and nobody holds it: one UPDATE, one winner."""
        now = timezone.now()
        lease = now + timedelta(seconds=settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS + 30)
        claimed = (
            WebhookDelivery.objects.filter(pk=pk, state=DeliveryState.PENDING, next_attempt_at__lte=now)
            .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
            .update(claimed_by=self.name, claimed_until=lease)
        )
        return claimed == 1

    def attempt(self, pk: int) -> None:
        """POST claimed delivery ``pk`` once and record what came of it."""
        delivery = WebhookDelivery.objects.select_related("webhook").get(pk=pk)
        try:
            secret = delivery.webhook.signing_secret()
        except SecretUnreadable:
            # Not sent unsigned: retried, so restoring the key lets it through before it is given up.
            self._record(delivery, None, "its signing secret does not open with KANDEV_SECRETS_KEY", 0)
            return
        body = delivery.body.encode()
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Kandev-Event": delivery.event,
            "X-Kandev-Delivery": str(delivery.delivery),
            signing.HEADER: signing.sign(secret, body, timestamp),
        }
        started = time.monotonic()
        status, error = post(delivery.webhook.url, body, headers, settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS)
        duration_ms = int((time.monotonic() - started) * 1000)
        self._record(delivery, status, error, duration_ms)

    @transaction.atomic
    def _record(self, delivery: WebhookDelivery, status: int | None, error: str, duration_ms: int) -> None:
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
