"""An agent profile's form, its secrets write-only: the admin's, and the base of the profiles page's."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web.forms import SecretEnvField
from kandev_web.secret_box import looks_like_credential

from .models import GATEWAY_HEADERS_SECRET, AgentProfile


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
            "workspace",
            "name",
            "agent_id",
            "command",
            "env",
            "working_dir",
            "mcp_servers",
            "auth_method",
            "gateway_base_url",
            "config_options",
            "executor",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["secrets"].initial = self.instance.secret_names

    def clean_secrets(self):
        """The gateway's headers secret must be a JSON object of header names to string values."""
        change = self.cleaned_data.get("secrets")
        headers = change.values.get(GATEWAY_HEADERS_SECRET) if change else None
        if headers is not None:
            try:
                parsed = json.loads(headers)
            except ValueError:
                parsed = None
            if not (isinstance(parsed, dict) and all(isinstance(value, str) for value in parsed.values())):
                raise forms.ValidationError(
                    _('%(name)s is a JSON object of header names to values, e.g. {"Authorization": "Bearer …"}.'),
                    params={"name": GATEWAY_HEADERS_SECRET},
                )
        return change

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
