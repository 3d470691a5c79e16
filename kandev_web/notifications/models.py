from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Event(models.TextChoices):
    CLARIFICATION_REQUESTED = "session.clarification_requested", _("An agent asks you a question")
    TURN_FINISHED = "session.turn_finished", _("An agent finished its turn")


#: Operators hear about questions unless they opt out; finished turns only if they opt in.
DEFAULTS = {Event.CLARIFICATION_REQUESTED: True, Event.TURN_FINISHED: False}


class NotificationSetting(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings")
    event = models.CharField(max_length=64, choices=Event)
    enabled = models.BooleanField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "event"], name="one_setting_per_event")]

    def __str__(self):
        return f"{self.user} · {self.get_event_display()}"


class Delivery(models.Model):
    """One notification sent; the unique key is what makes each occurrence notify once.

    An in-app notification is sent as its row is written. A Web Push one is
    queued: ``pending`` until the push sender (``push_sender``) has offered
    ``payload`` to each of the operator's browsers, once.
    """

    provider = models.CharField(max_length=32)
    event = models.CharField(max_length=64, choices=Event)
    occurrence = models.CharField(max_length=100, help_text=_("The pending id or turn id it is about."))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    #: What a push says (``webpush.build``): JSON, names the task, never the question.
    payload = models.TextField(blank=True)
    pending = models.BooleanField(default=False)
    #: Until when a push sender is offering it: one that died lets go when this passes.
    claimed_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "event", "occurrence", "user"], name="notify_once")]
        indexes = [models.Index(fields=["pending", "provider"])]

    def __str__(self):
        return f"{self.user} · {self.get_event_display()} · {self.occurrence}"


class PushSubscription(models.Model):
    """One browser an operator turned Web Push on in: where its push service takes messages for it.

    The endpoint and keys are what anyone needs to push to that browser, so
    they are never logged or shown; the browser's own subscription is the
    only copy the operator sees. An endpoint belongs to whoever registered it
    first (``services.subscribe``); an operator has at most
    ``services.MAX_SUBSCRIPTIONS`` of them.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions")
    endpoint = models.URLField(max_length=2000, unique=True)
    #: The browser's P-256 public key and auth secret, base64url as ``PushSubscription.toJSON()`` gives them.
    p256dh = models.CharField(max_length=100)
    auth = models.CharField(max_length=50)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.user} · push subscription {self.pk}"
