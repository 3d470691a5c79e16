from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BoardConfig(AppConfig):
    name = "kandev_web.board"
    verbose_name = _("Boards")

    def ready(self):
        from . import signals  # noqa: F401  (connects the membership receiver)
