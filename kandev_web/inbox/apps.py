from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InboxConfig(AppConfig):
    """Everything waiting on an operator, across every workspace they belong to, answerable in one place."""

    name = "kandev_web.inbox"
    verbose_name = _("Inbox")
