"""The agent profile form of the workspace settings page.

A preset (``presets``) only fills this form; everything stays editable. The
command is one line of shell words (``shlex``), stored as argv. The auth
method is a choice among those the profile's last check found, or free text
before any check.

Credentials (API keys, tokens) are the profile's secrets, edited write-only
and stored encrypted (``sessions.forms.AgentProfileForm``, whose checks this
form keeps); the environment holds the rest, in clear, one ``NAME=value``
per line. A preset's variables land on the side their names say:
``ANTHROPIC_API_KEY`` among the secrets, ``GOOSE_MODEL`` in the environment.
"""

from __future__ import annotations

import shlex

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext_lazy as _

from kandev_web import limits
from kandev_web.forms import StorableCharField
from kandev_web.secret_box import looks_like_credential

from . import check_report
from . import forms as profile_admin_forms
from .models import Executor
from .presets import Preset

#: Environment variable names as POSIX shells take them.
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


class EnvironmentWidget(forms.Textarea):
    """``NAME=value`` per line; none of them is a secret (credentials are refused here)."""

    def format_value(self, value):
        if isinstance(value, dict):
            return "\n".join(f"{name}={setting}" for name, setting in value.items())
        return super().format_value(value)


class EnvironmentField(forms.CharField):
    """``NAME=value`` lines to a dict."""

    widget = EnvironmentWidget

    def bound_data(self, data, initial):
        # A refused form is shown again: a key typed here by mistake must not be sent back with it.
        lines = str(data or "").splitlines()
        return "\n".join(
            f"{name}=" if equals and looks_like_credential(name.strip()) else f"{name}{equals}{value}"
            for name, equals, value in (line.partition("=") for line in lines)
        )

    def to_python(self, value):
        # The environment as a dict, where CharField gives a str: hence no annotations here.
        if isinstance(value, dict):
            return value
        text = super().to_python(value)
        env = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            name, equals, setting = line.partition("=")
            name = name.strip()
            if not equals or not name or name[0].isdigit() or not set(name) <= _NAME_CHARS:
                raise ValidationError(
                    _("Line %(number)d is not NAME=value with a variable name of letters, digits and _."),
                    params={"number": number},
                )
            env[name] = setting
        return env


def environment_field() -> forms.Field:
    return EnvironmentField(
        label=_("Environment"),
        required=False,
        max_length=limits.PROFILE_ENVIRONMENT_CHARS,
        widget=EnvironmentWidget(attrs={"rows": 4, "data-testid": "profile-env", "spellcheck": "false"}),
        help_text=_("One NAME=value per line, e.g. the agent's model. Keys and tokens go under Secrets."),
    )


class ConfigOptionsWidget(forms.Textarea):
    """``option=value`` per line."""

    def format_value(self, value):
        if isinstance(value, dict):
            return "\n".join(f"{option}={setting}" for option, setting in value.items())
        return super().format_value(value)


class ConfigOptionsField(forms.CharField):
    """``option=value`` lines to a dict: the ACP session config options set at session start."""

    widget = ConfigOptionsWidget

    def to_python(self, value):
        # A dict, where CharField gives a str: hence no annotations here.
        if isinstance(value, dict):
            return value
        options = {}
        for number, line in enumerate(super().to_python(value).splitlines(), start=1):
            if not line.strip():
                continue
            option, equals, setting = line.partition("=")
            if not equals or not option.strip() or option.strip() != option.strip().split()[0]:
                raise ValidationError(
                    _("Line %(number)d is not option=value, e.g. collaboration_mode=plan."), params={"number": number}
                )
            options[option.strip()] = setting.strip()
        return options


class CommandField(StorableCharField):
    """argv as one line of shell words, e.g. ``npx -y @agentclientprotocol/codex-acp@2.6.0``."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return shlex.join(str(arg) for arg in value)
        return value

    def to_python(self, value):
        if isinstance(value, list):
            return value
        text = super().to_python(value)
        if self.max_length is not None:
            # Refused before shlex reads it, which takes seconds over a long enough text; after,
            # max_length would count the words, not the characters.
            MaxLengthValidator(self.max_length)(text)
        try:
            argv = shlex.split(text)
        except ValueError:
            raise ValidationError(_("The command has an unclosed quote.")) from None
        if not argv:
            raise ValidationError(_("Give the command that starts the agent."))
        return argv


class AgentProfileForm(profile_admin_forms.AgentProfileForm):
    command = CommandField(
        label=_("Command"),
        max_length=limits.PROFILE_COMMAND_CHARS,
        help_text=_("What agentctl runs, speaking ACP on stdio: shell words, quoted where they hold spaces."),
    )

    #: The preset a new profile's form started from, which the page shows picked (set by the view).
    preset: Preset | None

    class Meta(profile_admin_forms.AgentProfileForm.Meta):
        fields = [
            "name",
            "agent_id",
            "command",
            "env",
            "working_dir",
            "auth_method",
            "gateway_base_url",
            "config_options",
            "executor",
        ]
        field_classes = {"name": StorableCharField, "agent_id": StorableCharField, "working_dir": StorableCharField}

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.workspace = workspace
        self.fields["env"] = environment_field()
        self.fields["config_options"] = ConfigOptionsField(
            label=_("Config options at session start"),
            required=False,
            max_length=limits.PROFILE_ENVIRONMENT_CHARS,
            widget=ConfigOptionsWidget(attrs={"rows": 2, "spellcheck": "false"}),
            help_text=_("One option=value per line, set when a session starts, e.g. collaboration_mode=plan (Codex)."),
        )
        self.fields["secrets"].widget.attrs["data-testid"] = "profile-secrets"
        # The hosts the deployment granted this workspace (``Executor.workspaces``), and no others.
        self.fields["executor"].queryset = Executor.objects.filter(workspaces=workspace)
        self.fields["executor"].empty_label = _("This web machine")
        choices = check_report.report(self.instance.last_check).auth_choices if self.instance.pk else []
        if choices:
            current = self.instance.auth_method
            options = [("", _("Only when the agent asks, with a method that needs nobody"))]
            options += [(ident, f"{label} ({ident})") for ident, label in choices]
            if current and current not in dict(choices):
                options.append((current, _("%(id)s (not offered at the last check)") % {"id": current}))
            self.fields["auth_method"] = forms.ChoiceField(
                label=_("Auth method"), choices=options, required=False, help_text=_("From the last check.")
            )
        else:
            self.fields["auth_method"].help_text = _(
                "Check the profile to choose among the methods the agent offers; until then, type its id."
            )
        for name, field in self.fields.items():
            field.widget.attrs.setdefault("data-testid", f"profile-{name.replace('_', '-')}")

    def fill_from(self, preset: Preset) -> None:
        """Start from ``preset``: its command, agent id and variable names (values for the operator)."""
        credentials = [name for name in preset.env_vars if looks_like_credential(name)]
        self.initial.update(
            {
                "name": self.initial.get("name") or (str(preset.label) if preset.command else ""),
                "agent_id": preset.agent_id,
                "command": list(preset.command),
                "env": dict.fromkeys((name for name in preset.env_vars if name not in credentials), ""),
                "config_options": dict(preset.config_options),
            }
        )
        self.fields["secrets"].widget.expected_names = credentials
