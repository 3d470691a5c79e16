from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ClarificationsConfig(AppConfig):
    name = "kandev_web.clarifications"
    verbose_name = _("Clarifications")

    def ready(self):
        from kandev_web.sessions import signals

        from . import services

        def agent_moved_on(sender, session, **kwargs):
            services.agent_moved_on(session.pk)

        signals.turn_ended.connect(agent_moved_on, weak=False, dispatch_uid="clarifications.turn_ended")
        signals.agent_gone.connect(agent_moved_on, weak=False, dispatch_uid="clarifications.agent_gone")
