import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from kandev_web.agents.models import secret_box
from kandev_web.board.models import Workspace


class Event(models.TextChoices):
    QUESTION_ASKED = "question.asked", _("An agent asks a question")
    QUESTION_ANSWERED = "question.answered", _("A question is answered or skipped")
    QUESTION_WITHDRAWN = "question.withdrawn", _("A question goes away unanswered")
    TURN_FINISHED = "turn.finished", _("An agent finished its turn")


#: Sent only by the page's "Send a test event", whatever the webhook's events.
TEST_EVENT = "webhook.test"


class WebhookQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(workspace__members=user)


class Webhook(models.Model):
    """A URL that hears about a workspace's questions and turns, signed with its own secret.

    The secret must sign, so a hash will not do: it is sealed with the
    deployment's keys (``KANDEV_SECRETS_KEY``, ``kandev_web/secret_box.py``)
    like an agent profile's API keys, and opened only to sign a delivery and
    on the one page that shows it after it is added.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhooks")
    name = models.CharField(_("name"), max_length=100)
    url = models.URLField(_("URL"), max_length=2000, help_text=_("Where kandev POSTs the signed JSON."))
    #: The signing secret, sealed (a Fernet token): see :meth:`signing_secret`.
    secret = models.CharField(max_length=500, editable=False)
    events = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = WebhookQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name

    def set_signing_secret(self, value: str) -> None:
        self.secret = secret_box().seal(value)

    def signing_secret(self) -> str:
        """The secret in clear; ``SecretUnreadable`` if no key of ``KANDEV_SECRETS_KEY`` opens it."""
        return secret_box().open(f"webhook {self.pk}", self.secret)


class DeliveryState(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Given up")


class WebhookDelivery(models.Model):
    """One event for one webhook: sent until a 2xx, with backoff, or given up.

    ``(webhook, event, occurrence)`` is unique, so an occurrence (a question,
    a turn) reaches each webhook once however often it is reported; the
    ``delivery`` UUID is the receiver's idempotency key, the same on every retry.
    """

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    delivery = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.CharField(max_length=64)
    occurrence = models.CharField(max_length=100)
    #: The exact body sent (and signed) on every attempt.
    body = models.TextField()
    state = models.CharField(max_length=16, choices=DeliveryState, default=DeliveryState.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    #: Which sender is trying it, until when: a sender that died lets go when its lease ends.
    claimed_by = models.CharField(max_length=64, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    last_status = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event", "occurrence"], name="webhook_once_per_occurrence")
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"])]

    def __str__(self):
        return f"{self.webhook} · {self.event} · {self.delivery}"


class WebhookAttempt(models.Model):
    """One POST of a delivery and what came of it, for the delivery log."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    at = models.DateTimeField()
    status = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["number"]

    def __str__(self):
        return f"{self.delivery} #{self.number}"
