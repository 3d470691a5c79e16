from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "kandev_web.webhooks"
    verbose_name = _("Webhooks")

    def ready(self):
        from kandev_web.clarifications import signals as questions
        from kandev_web.sessions import signals

        from . import services

        def turn_ended(sender, session, turn, stop_reason, **kwargs):
            # As for notifications: a cancelled or failed turn is not "finished".
            if turn is not None and stop_reason == "end_turn":
                services.turn_finished(session, turn)

        def question_asked(sender, record, **kwargs):
            services.question_asked(record)

        def question_settled(sender, record, **kwargs):
            services.question_settled(record)

        signals.turn_ended.connect(turn_ended, weak=False, dispatch_uid="webhooks.turn_ended")
        questions.question_asked.connect(question_asked, weak=False, dispatch_uid="webhooks.question_asked")
        questions.question_settled.connect(question_settled, weak=False, dispatch_uid="webhooks.question_settled")
