from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web import git
from kandev_web.board.models import Task
from kandev_web.forms import StorableCharField
from kandev_web.repositories import hosts
from kandev_web.repositories.models import Repository


class TaskEditForm(forms.ModelForm):
    testid_prefix = "task-edit"

    class Meta:
        model = Task
        fields = ["title", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        field_classes = {"title": StorableCharField, "description": StorableCharField}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["title"].widget.attrs.update({"placeholder": _("What needs doing?"), "autocomplete": "off"})
        self.fields["description"].widget.attrs["placeholder"] = _("Details for the agent (optional)")
        for name, field in self.fields.items():
            field.widget.attrs["data-testid"] = f"{self.testid_prefix}-{name}"


class TaskCreateForm(TaskEditForm):
    testid_prefix = "task-form"

    class Meta(TaskEditForm.Meta):
        fields = ["title", "description", "step"]

    repository = forms.ModelChoiceField(
        label=_("Repository"),
        queryset=Repository.objects.none(),
        required=False,
        empty_label=_("No repository"),
        help_text=_("Its agents work in a worktree of their own on a branch named after the task."),
    )
    base_branch = forms.CharField(
        label=_("Base branch"), max_length=200, required=False, help_text=_("Empty: the repository's default branch.")
    )

    def __init__(self, *args, board, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["step"].queryset = board.steps.all()
        self.fields["step"].empty_label = None
        self.fields["repository"].queryset = board.workspace.repositories.all()
        self.fields["base_branch"].widget.attrs.update({"placeholder": _("default branch"), "autocomplete": "off"})
        for name in ("repository", "base_branch"):
            self.fields[name].widget.attrs["data-testid"] = f"{self.testid_prefix}-{name}"

    def clean(self):
        cleaned = super().clean()
        repository, base = cleaned.get("repository"), cleaned.get("base_branch")
        if base and repository is None:
            self.add_error("base_branch", _("A base branch needs a repository."))
        elif base:
            try:
                hosts.checkouts(repository).commit_of(repository.path, base)
            except git.GitError as error:
                if error.failure is git.Failure.UNREACHABLE:
                    message = _("%(executor)s, which holds %(repository)s, could not be reached to check the branch.")
                else:
                    message = _("%(repository)s has no branch %(branch)s.")
                self.add_error(
                    "base_branch",
                    message % {"executor": repository.executor, "repository": repository, "branch": base},
                )
        return cleaned


class TaskMoveForm(forms.Form):
    """Where a move button or a drop sends a task: a step's id.

    Only its shape is checked here (a malformed id is a 400); the view looks
    the step up among the task's board's, so an id that names none of them is
    a 404, as any object the operator cannot reach.
    """

    step = forms.IntegerField(min_value=1, max_value=2**63 - 1)
