from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web.forms import StorableCharField

from .models import Task


class TaskEditForm(forms.ModelForm):
    testid_prefix = "task-edit"

    class Meta:
        model = Task
        fields = ["title", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        field_classes = {"title": StorableCharField, "description": StorableCharField}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["title"].widget.attrs.update(
            {"placeholder": _("What needs doing?"), "autocomplete": "off"}
        )
        self.fields["description"].widget.attrs["placeholder"] = _("Details for the agent (optional)")
        for name, field in self.fields.items():
            field.widget.attrs["data-testid"] = f"{self.testid_prefix}-{name}"


class TaskCreateForm(TaskEditForm):
    testid_prefix = "task-form"

    class Meta(TaskEditForm.Meta):
        fields = ["title", "description", "step"]

    def __init__(self, *args, board, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["step"].queryset = board.steps.all()
        self.fields["step"].empty_label = None


class TaskMoveForm(forms.Form):
    """Where a move button or a drop sends a task: a step's id.

    Only its shape is checked here (a malformed id is a 400); the view looks
    the step up among the task's board's, so an id that names none of them is
    a 404, as any object the operator cannot reach.
    """

    step = forms.IntegerField(min_value=1, max_value=2**63 - 1)
