from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentsConfig(AppConfig):
    """Agent profiles, the executor hosts agents run on, and the secrets both keep."""

    name = "kandev_web.agents"
    verbose_name = _("Agents")
