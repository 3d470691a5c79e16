"""Registering a repository on the workspace settings page: where it is, and on which machine.

The model's ``clean`` asks that machine whether the path is a git repository
and which branch new work starts from (``hosts.checkouts``). This form bounds
what is typed and, for anyone but a superuser, where: under
``KANDEV_REPOSITORY_ROOTS`` and clear of other workspaces' repositories and
of tasks' worktrees (``roots``). Without that, a workspace admin could point
the web machine at any directory it can read, another workspace's included.
"""

from pathlib import Path

from django import forms
from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kandev_web.agents.models import Executor
from kandev_web.forms import StorableCharField

from . import roots
from .models import Repository, Worktree


class RepositoryForm(forms.ModelForm):
    class Meta:
        model = Repository
        fields = ["name", "path", "default_branch", "executor"]
        field_classes = {"name": StorableCharField, "path": StorableCharField, "default_branch": StorableCharField}

    def __init__(self, *args, workspace, anywhere=False, **kwargs):
        """``anywhere``: the operator is a superuser, whom no root or other workspace bounds."""
        super().__init__(*args, **kwargs)
        self.anywhere = anywhere
        self.instance.workspace = workspace
        # The hosts the deployment granted this workspace (``Executor.workspaces``), and no others.
        self.fields["executor"].queryset = Executor.objects.filter(workspaces=workspace)
        self.fields["executor"].empty_label = _("This web machine")
        self.fields["path"].widget.attrs["placeholder"] = "/srv/code/shop"
        self.fields["default_branch"].widget.attrs["placeholder"] = _("detected")
        for name, field in self.fields.items():
            field.widget.attrs.setdefault("data-testid", f"repository-{name.replace('_', '-')}")

    def clean(self):
        """On the web machine, a path outside the roots is refused before git is run there at all."""
        cleaned = super().clean()
        path = cleaned.get("path")
        if not self.anywhere and path and cleaned.get("executor") is None and Path(path).is_absolute():
            self._refuse_outside_roots(roots.resolved_here(path), path)
        return cleaned

    def _post_clean(self):
        # The model's clean has replaced the path with the top level git found (resolved): check that one too.
        super()._post_clean()
        if self.anywhere or self.errors:
            return
        found = self.instance.path
        if self.instance.executor_id is None:
            found = roots.resolved_here(found)
        if self._refuse_outside_roots(found, found):
            return
        if self._taken(found):
            self.add_error(
                "path",
                gettext("%(path)s is another workspace's repository or a task's worktree, or holds one.")
                % {"path": found},
            )

    def _refuse_outside_roots(self, resolved: str, typed: str) -> bool:
        allowed = roots.configured_roots()
        if roots.inside_any(resolved, allowed):
            return False
        if allowed:
            message = gettext(
                "%(path)s is outside the directories repositories may be registered in (%(roots)s); "
                "only a superuser may register it."
            ) % {"path": typed, "roots": ", ".join(allowed)}
        else:
            message = gettext(
                "No directories are set for workspace admins' repositories (KANDEV_REPOSITORY_ROOTS): "
                "only a superuser may register one."
            )
        self.add_error("path", message)
        return True

    def _taken(self, found: str) -> bool:
        """Whether ``found`` overlaps another workspace's repository or any worktree on the same machine."""
        machine = Q(executor_id=self.instance.executor_id)
        others = Repository.objects.filter(machine).exclude(workspace=self.instance.workspace).exclude(path="")
        worktrees = Worktree.objects.filter(Q(repository__executor_id=self.instance.executor_id)).exclude(path="")
        taken = [*others.values_list("path", flat=True), *worktrees.values_list("path", flat=True)]
        if self.instance.executor_id is None:
            taken.append(roots.resolved_here(str(settings.KANDEV_WORKTREE_ROOT)))
        return any(roots.overlaps(found, path) for path in taken)
