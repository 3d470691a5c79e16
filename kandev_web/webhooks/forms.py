from django import forms
from django.core.validators import URLValidator
from django.utils.translation import gettext_lazy as _

from .models import Event, Webhook


class WebhookForm(forms.ModelForm):
    url = forms.URLField(
        label=_("URL"),
        max_length=2000,
        validators=[URLValidator(schemes=["http", "https"])],
        assume_scheme="https",
        help_text=_("Where kandev POSTs the signed JSON."),
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=Event.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[Event.QUESTION_ASKED],
        error_messages={"required": _("Choose at least one event.")},
    )

    class Meta:
        model = Webhook
        fields = ["name", "url", "events"]

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.workspace = workspace
