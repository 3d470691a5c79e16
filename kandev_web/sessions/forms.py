"""The task page's forms (starting an agent, a follow-up prompt) and an agent profile's, secrets write-only."""

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web import limits
from kandev_web.board.models import Task
from kandev_web.forms import SecretEnvField, StorableCharField
from kandev_web.secret_box import looks_like_credential

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


class AgentProfileForm(forms.ModelForm):
    """An agent profile, its secrets edited through ``secrets`` (write-only) and its ``env`` in clear.

    The admin uses it; so can any settings page: a subclass names its own
    ``Meta.fields`` and keeps ``secrets``. A variable that looks like a
    credential (``secret_box.looks_like_credential``) is refused in the clear
    ``env``, with the way to keep it secret.
    """

    secrets = SecretEnvField(label=_("Secrets"))

    class Meta:
        model = AgentProfile
        fields = [
            "workspace", "name", "agent_id", "command", "env", "working_dir", "mcp_servers", "auth_method", "executor"
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["secrets"].initial = self.instance.secret_names

    def clean_env(self):
        env = self.cleaned_data.get("env")
        if isinstance(env, dict):
            credentials = sorted(name for name in env if isinstance(name, str) and looks_like_credential(name))
            if credentials:
                raise forms.ValidationError(
                    _("%(names)s looks like a credential: add it under Secrets, where it is stored encrypted."),
                    params={"names": ", ".join(credentials)},
                )
        return env

    def _post_clean(self):
        # Before the model's own clean, which refuses a name both in env and among the secrets.
        change = self.cleaned_data.get("secrets")
        if change:
            self.instance.apply_secret_change(change)
        super()._post_clean()
