from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NotificationsConfig(AppConfig):
    name = "kandev_web.notifications"
    verbose_name = _("Notifications")

    def ready(self):
        from kandev_web.clarifications import signals as questions
        from kandev_web.sessions import signals

        from . import checks, services  # noqa: F401 - checks registers the Web Push deployment checks

        def turn_ended(sender, session, turn, stop_reason, **kwargs):
            # A cancelled or failed turn is the operator's doing or already on screen.
            if turn is not None and stop_reason == "end_turn":
                services.turn_finished(session, turn)

        def question_asked(sender, record, **kwargs):
            # Told as soon as it is shown, and again once asked in full, should this process have
            # stopped in between: each operator hears of it once (the occurrence is its pending_id).
            services.clarification_requested(record)

        signals.turn_ended.connect(turn_ended, weak=False, dispatch_uid="notifications.turn_ended")
        questions.question_shown.connect(question_asked, weak=False, dispatch_uid="notifications.question_shown")
        questions.question_asked.connect(question_asked, weak=False, dispatch_uid="notifications.question_asked")
