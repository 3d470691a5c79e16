"""Registering a repository on the workspace settings page: where it is, and on which machine.

The model's ``clean`` asks that machine whether the path is a git repository
and which branch new work starts from (``hosts.checkouts``). This form bounds
what is typed and, for anyone but a superuser, where: under
``KANDEV_REPOSITORY_ROOTS`` and clear of other workspaces' repositories and
of tasks' worktrees (``roots``). Without that, a workspace admin could point
the web machine at any directory it can read, another workspace's included.
"""

from pathlib import Path
from urllib.parse import urlsplit

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


#: The URL schemes a push remote may have: git's network transports.
NETWORK_SCHEMES = frozenset({"https", "http", "ssh", "git", "git+ssh", "ssh+git"})


class PushRemoteForm(forms.Form):
    """Where "Push branch" sends a task's branch, and the credential for it (write-only).

    The token is never shown again: left empty, the stored one is kept;
    "Forget the token" clears it. A URL with a password in it is refused,
    so that no credential sits in clear in the database or in git's messages.
    A plain form, not the model's: saving these two asks nothing of the
    repository's machine (the model's ``clean`` would).
    """

    push_remote = StorableCharField(
        label=_("Push remote"),
        max_length=500,
        required=False,
        help_text=Repository._meta.get_field("push_remote").help_text,
    )
    push_token = forms.CharField(
        label=_("Push token"),
        max_length=2000,
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=Repository._meta.get_field("push_token").help_text,
    )
    forget_token = forms.BooleanField(label=_("Forget the stored token"), required=False)

    def __init__(self, data=None, *, repository: Repository, anywhere: bool = False):
        """``anywhere``: the operator is a superuser, who may push to a path on the machine."""
        super().__init__(data, initial={"push_remote": repository.push_remote})
        self.repository = repository
        self.anywhere = anywhere
        self.fields["push_remote"].widget.attrs["placeholder"] = "origin"
        self.fields["push_token"].widget.attrs["placeholder"] = _("kept") if repository.push_token else _("none")
        for name, field in self.fields.items():
            field.widget.attrs["data-testid"] = f"repository-{name.replace('_', '-')}"
            field.widget.attrs["id"] = f"id_{name}_{repository.pk}"

    def clean_push_remote(self):
        """A remote's name, or a network URL; a path on the machine only from a superuser.

        A path (or ``file://``) would let a workspace admin push into any
        repository the server's user can write, another workspace's included;
        a remote's name is the repository's own configuration, made by
        whoever set the machine up. Git's other transports (``ext::``…) never.
        """
        remote = self.cleaned_data["push_remote"].strip()
        if remote.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in remote):
            raise forms.ValidationError(gettext("Give a remote's name or a URL, without spaces or a leading dash."))
        if not remote:
            return remote
        if "://" in remote:
            try:
                parts = urlsplit(remote)
                password = parts.password
            except ValueError:
                raise forms.ValidationError(gettext("%(remote)s is not a URL.") % {"remote": remote}) from None
            if password is not None:
                # Not echoed back in the field either: the page would show the password it refuses to store.
                self.data = self.data.copy()
                self.data[self.add_prefix("push_remote")] = remote.replace(f":{password}@", ":***@", 1)
                raise forms.ValidationError(
                    gettext("Put the password or token in the push token field, not in the URL.")
                )
            if parts.scheme.lower() == "file":
                return self._local(remote)
            if parts.scheme.lower() not in NETWORK_SCHEMES or not parts.hostname:
                raise forms.ValidationError(gettext("Give an https, ssh or git URL, or a remote's name."))
            return remote
        if "::" in remote:
            raise forms.ValidationError(gettext("Give an https, ssh or git URL, or a remote's name."))
        if remote.startswith(("/", ".", "~")):
            return self._local(remote)
        return remote  # a remote's name, or git's scp-like user@host:path

    def _local(self, remote: str) -> str:
        if not self.anywhere:
            raise forms.ValidationError(
                gettext("Only a superuser may push to a path on the machine: give a URL, or a remote's name.")
            )
        return remote

    def clean_push_token(self):
        token = self.cleaned_data.get("push_token", "")
        if any(ch.isspace() or ord(ch) < 32 for ch in token):
            raise forms.ValidationError(gettext("A token has no spaces or line breaks."))
        return token

    def save(self) -> Repository:
        """The token typed replaces the stored one; none typed keeps it, unless it is to be forgotten."""
        repository = self.repository
        repository.push_remote = self.cleaned_data["push_remote"]
        if self.cleaned_data["forget_token"]:
            repository.push_token = ""
        elif self.cleaned_data["push_token"]:
            repository.push_token = self.cleaned_data["push_token"]
        repository.save(update_fields=["push_remote", "push_token"])
        return repository
