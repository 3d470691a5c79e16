from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "kandev_web.webhooks"
    verbose_name = _("Webhooks")

    def ready(self):
        from kandev_web.sessions import signals

        from . import services

        def turn_ended(sender, session, turn, stop_reason, **kwargs):
            # As for notifications: a cancelled or failed turn is not "finished".
            if turn is not None and stop_reason == "end_turn":
                services.turn_finished(session, turn)

        signals.turn_ended.connect(turn_ended, weak=False, dispatch_uid="webhooks.turn_ended")
