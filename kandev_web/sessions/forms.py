"""The task page's forms: starting an agent, and a follow-up prompt."""

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web.board.models import Task
from kandev_web.forms import StorableCharField

from .models import AgentProfile


class StartSessionForm(forms.Form):
    profile = forms.ModelChoiceField(queryset=AgentProfile.objects.none(), label=_("Agent"), empty_label=None)
    prompt = StorableCharField(label=_("Prompt"), widget=forms.Textarea(attrs={"rows": 3}), max_length=100_000)

    def __init__(self, *args, task: Task, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profile"].queryset = AgentProfile.objects.filter(workspace=task.board.workspace_id)
        # Kept as the operator left them when the page's parts are re-rendered live.
        self.fields["profile"].widget.attrs.update({"data-testid": "session-start-profile", "hx-preserve": "true"})
        self.fields["prompt"].widget.attrs.update(
            {
                "data-testid": "session-start-prompt",
                "placeholder": _("What should the agent do?"),
                "hx-preserve": "true",
            }
        )
        self.fields["prompt"].initial = task.description or task.title


class PromptForm(forms.Form):
    prompt = StorableCharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=100_000)
