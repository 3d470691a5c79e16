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
    """One notification sent; the unique key is what makes each occurrence notify once."""

    provider = models.CharField(max_length=32)
    event = models.CharField(max_length=64, choices=Event)
    occurrence = models.CharField(max_length=100, help_text=_("The pending id or turn id it is about."))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "event", "occurrence", "user"], name="notify_once")
        ]

    def __str__(self):
        return f"{self.user} · {self.get_event_display()} · {self.occurrence}"
