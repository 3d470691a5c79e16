from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SessionsConfig(AppConfig):
    name = "kandev_web.sessions"
    # "sessions" is django.contrib.sessions' label.
    label = "agent_sessions"
    verbose_name = _("Agent sessions")

    def ready(self) -> None:
        from . import checks, lifecycle  # noqa: F401 - registers its system checks, connects its signal receivers
