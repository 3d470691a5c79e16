"""The task page's forms: starting an agent, a follow-up prompt, and the agent's mode and options."""

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web import limits
from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Task
from kandev_web.forms import StorableCharField
from kandev_web.sessions.models import TaskSession
from kandev_web.sessions.scenarios import offers_scenarios, scenario_choices, scenario_prompt


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
    return str(next(iter(form.errors.values()))[0])  # str(): a message may be a lazy translation


class ProfileSelect(forms.Select):
    """The agent picker; each profile that runs the mock agent is marked, for the scenario picker to follow it."""

    #: The profiles (their pks, as option values) that run the mock agent.
    mock_agent_ids: set[str]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mock_agent_ids = set()

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        option["attrs"]["data-scenarios"] = "true" if str(value) in self.mock_agent_ids else "false"
        return option


class StartSessionForm(forms.Form):
    """Starting an agent: a profile and a prompt, or for the mock agent a scenario picked by name.

    A scenario is sent as the prompt that plays it (``sessions.scenarios``);
    for any other profile the picker is hidden and what it holds is ignored.
    """

    profile = forms.ModelChoiceField(
        queryset=AgentProfile.objects.none(),
        label=_("Agent"),
        empty_label=None,
        widget=ProfileSelect,
        error_messages={
            "required": _("Choose an agent."),
            "invalid_choice": _("Choose one of this workspace's agents."),
        },
    )
    prompt = PromptField(label=_("Prompt"), widget=forms.Textarea(attrs={"rows": 3}))
    scenario = forms.ChoiceField(label=_("Scenario"), required=False)

    def __init__(self, *args, task: Task, **kwargs):
        super().__init__(*args, **kwargs)
        profile = cast(forms.ModelChoiceField, self.fields["profile"])
        profile.queryset = AgentProfile.objects.filter(workspace=task.board.workspace_id)
        profiles = list(profile.queryset.values_list("pk", "agent_id"))
        profile.widget.mock_agent_ids = {str(pk) for pk, agent_id in profiles if offers_scenarios(agent_id)}
        #: Whether the first profile, the one selected when the form is shown, plays scenarios.
        self.offers_scenarios = bool(profiles) and offers_scenarios(profiles[0][1])
        cast(forms.ChoiceField, self.fields["scenario"]).choices = scenario_choices()
        # Kept as the operator left them when the page's parts are re-rendered live.
        # data-role is what static/js/task.js hooks on; data-testid is the tests'.
        profile.widget.attrs.update(
            {"data-testid": "session-start-profile", "data-role": "start-profile", "hx-preserve": "true"}
        )
        self.fields["scenario"].widget.attrs.update(
            {"data-testid": "session-start-scenario", "data-role": "start-scenario", "hx-preserve": "true"}
        )
        self.fields["prompt"].widget.attrs.update(
            {
                "data-testid": "session-start-prompt",
                "data-role": "start-prompt",
                "placeholder": _("What should the agent do?"),
                "hx-preserve": "true",
            }
        )
        self.fields["prompt"].initial = task.description or task.title

    def clean(self):
        cleaned = super().clean()
        profile, scenario = cleaned.get("profile"), cleaned.get("scenario")
        if profile is not None and scenario and offers_scenarios(profile.agent_id):
            cleaned["prompt"] = scenario_prompt(scenario)
            self.errors.pop("prompt", None)
        return cleaned


class PromptForm(forms.Form):
    prompt = PromptField(widget=forms.Textarea(attrs={"rows": 2}))


class ModeForm(forms.Form):
    """The composer's mode picker: one of the modes the session's agent offers now."""

    mode = forms.ChoiceField(error_messages={"invalid_choice": _("The agent does not offer that mode (any more).")})

    def __init__(self, *args, session: TaskSession, **kwargs):
        super().__init__(*args, **kwargs)
        available = session.modes.get("available", []) if isinstance(session.modes, dict) else []
        cast(forms.ChoiceField, self.fields["mode"]).choices = [(mode["id"], mode["name"]) for mode in available]


class OptionForm(forms.Form):
    """One of the composer's on/off toggles: which of the agent's options, and whether it is now on."""

    option = forms.ChoiceField(error_messages={"invalid_choice": _("The agent does not offer that option (any more).")})
    value = forms.BooleanField(required=False)

    def __init__(self, *args, session: TaskSession, **kwargs):
        super().__init__(*args, **kwargs)
        options = session.config_options if isinstance(session.config_options, list) else []
        cast(forms.ChoiceField, self.fields["option"]).choices = [(option["id"], option["name"]) for option in options]


class BudgetForm(forms.Form):
    """A task's budget: a non-negative amount, or empty for none."""

    budget = forms.DecimalField(
        label=_("Budget"),
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=2,
        error_messages={
            "invalid": _("Give the budget as an amount, such as 5 or 12.50, or leave it empty for none."),
            "min_value": _("A budget cannot be below zero."),
            "max_digits": _("That budget is too large."),
            "max_decimal_places": _("Give the budget to the cent at most."),
            "max_whole_digits": _("That budget is too large."),
        },
    )
