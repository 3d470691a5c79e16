from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FlagsConfig(AppConfig):
    name = "kandev_web.flags"
    verbose_name = _("Runtime flags")

    def ready(self):
        from . import checks  # noqa: F401  (registers the system check)
