from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from .forms import AgentProfileForm
from .models import AgentProfile, Executor


class WriteOnlyTextarea(forms.Textarea):
    """A text area that never shows the stored value (a private key): typing replaces it."""

    def format_value(self, value):
        return None


@admin.register(Executor)
class ExecutorAdmin(admin.ModelAdmin):
    list_display = ["name", "host", "user"]
    fieldsets = [
        (None, {"fields": ["name"]}),
        (_("Over SSH"), {"fields": ["host", "port", "user", "host_key", "private_key", "agentctl", "workdir_root"]}),
        (_("Who may use it"), {"fields": ["workspaces"]}),
    ]
    filter_horizontal = ["workspaces"]
    #: Credentials are write-only here: shown once typed, never read back out; left blank, kept.
    WRITE_ONLY = ("private_key",)

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.base_fields["private_key"].widget = WriteOnlyTextarea(attrs={"autocomplete": "off"})
        return form

    def save_model(self, request, obj, form, change):
        for name in self.WRITE_ONLY:
            if change and not form.cleaned_data.get(name):
                setattr(obj, name, type(obj).objects.values_list(name, flat=True).get(pk=obj.pk))
        super().save_model(request, obj, form, change)


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    """Secrets are write-only here: names with "set", inputs to replace or clear, never a value.

    The change history records "Changed Secrets." (a field's name), never what was typed.
    """

    form = AgentProfileForm
    list_display = ["name", "agent_id", "workspace", "executor"]
