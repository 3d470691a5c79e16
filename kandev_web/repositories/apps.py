from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RepositoriesConfig(AppConfig):
    """The git repositories agents work on, each task's worktree of one, and the machines they are checked out on."""

    name = "kandev_web.repositories"
    verbose_name = _("Repositories")

    def ready(self):
        from .roots import configured_roots

        configured_roots()  # a relative root stops the process at start, with the setting's name
