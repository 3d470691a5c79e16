"""Registering a repository on the workspace settings page: where it is, and on which machine.

The model's ``clean`` asks that machine whether the path is a git repository
and which branch new work starts from (``hosts.checkouts``); this form
only bounds what is typed.
"""

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web.agents.models import Executor
from kandev_web.forms import StorableCharField

from .models import Repository


class RepositoryForm(forms.ModelForm):
    class Meta:
        model = Repository
        fields = ["name", "path", "default_branch", "executor"]
        field_classes = {"name": StorableCharField, "path": StorableCharField, "default_branch": StorableCharField}

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.workspace = workspace
        self.fields["executor"].queryset = Executor.objects.all()
        self.fields["executor"].empty_label = _("This web machine")
        self.fields["path"].widget.attrs["placeholder"] = "/srv/code/shop"
        self.fields["default_branch"].widget.attrs["placeholder"] = _("detected")
        for name, field in self.fields.items():
            field.widget.attrs.setdefault("data-testid", f"repository-{name.replace('_', '-')}")
