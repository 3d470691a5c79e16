"""The task page's forms: starting an agent, and a follow-up prompt."""

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web import limits
from kandev_web.board.models import Task
from kandev_web.forms import StorableCharField

from .models import AgentProfile


class PromptField(StorableCharField):
    """What the operator tells the agent: at most ``limits.PROMPT_CHARS``, and a refusal that says so."""

    def __init__(self, **kwargs):
        messages = {
            "required": _("Write a prompt first."),
            "max_length": _(
                "The prompt has %(show_value)d characters; an agent takes at most %(limit_value)d. Shorten it."
            ),
        }
        super().__init__(max_length=limits.PROMPT_CHARS, error_messages=messages, **kwargs)


def first_error(form: forms.Form) -> str:
    """The sentence an action's toast shows for an invalid ``form``: its first field's first error."""
    return next(iter(form.errors.values()))[0]


class StartSessionForm(forms.Form):
    profile = forms.ModelChoiceField(
        queryset=AgentProfile.objects.none(),
        label=_("Agent"),
        empty_label=None,
        error_messages={
            "required": _("Choose an agent."),
            "invalid_choice": _("Choose one of this workspace's agents."),
        },
    )
    prompt = PromptField(label=_("Prompt"), widget=forms.Textarea(attrs={"rows": 3}))

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
    prompt = PromptField(widget=forms.Textarea(attrs={"rows": 2}))
