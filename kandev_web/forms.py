"""Form fields shared by the apps' forms.

An operator's text is stored as typed, except for what no database can keep:
Django's ``CharField`` refuses a NUL ("Null characters are not allowed."), an
invisible character the operator cannot find in what they pasted; here it
becomes a visible U+FFFD instead, as in an agent's text (``storable``).

Secrets (API keys in an agent profile's environment) are edited write-only
through :class:`SecretEnvField`: the page learns which names are set, never a
value (docs/decisions/operator.md#secrets-at-rest).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django import forms
from django.core.exceptions import ValidationError
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from . import limits
from .secret_box import is_variable_name
from .storable import storable_text


class StorableCharField(forms.CharField):
    """A ``CharField`` whose value is made storable before it is validated, instead of refused."""

    def to_python(self, value):
        value = super().to_python(value)
        return storable_text(value) if isinstance(value, str) else value


@dataclass(frozen=True, repr=False)
class SecretEnvChange:
    """What an operator asked of a profile's secrets: values to seal, names to clear. Falsy when nothing."""

    values: dict[str, str] = field(default_factory=dict)
    cleared: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        # The values are the secrets themselves: a traceback or a log shows names only.
        return f"<SecretEnvChange set={sorted(self.values)} cleared={sorted(self.cleared)}>"

    def __bool__(self) -> bool:
        return bool(self.values or self.cleared)

    def names_after(self, names: Iterable[str]) -> set[str]:
        """Which secrets are set once this change is applied to ``names``."""
        return (set(names) - self.cleared) | set(self.values)


class SecretEnvWidget(forms.Widget):
    """Write-only editing of secret variables: each name with "set" or "not set", never its value.

    Each set name has a password input to replace it (empty keeps it; never
    pre-filled) and a box to clear it; ``new_rows`` pairs of name and value
    add more. Its value is the list of names set, so nothing secret can ever
    be rendered back, not even after a refused submit.
    """

    template_name = "forms/widgets/secret_env.html"

    def __init__(self, attrs=None, *, new_rows: int = 2, expected_names: Iterable[str] = ()) -> None:
        super().__init__(attrs)
        self.new_rows = new_rows
        self.expected_names = list(expected_names)

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        names = set(value or ())
        rows = [{"name": secret, "set": secret in names} for secret in sorted(names | set(self.expected_names))]
        context["widget"].update(
            {
                "secrets": rows,
                "new_rows": [f"{name}-new-{index}" for index in range(self.new_rows)],
                "value": None,
            }
        )
        return context

    def value_from_datadict(self, data, files, name):
        replace_prefix, clear_prefix = f"{name}-replace-", f"{name}-clear-"
        return {
            "replace": {key[len(replace_prefix) :]: data[key] for key in data if key.startswith(replace_prefix)},
            "clear": [key[len(clear_prefix) :] for key in data if key.startswith(clear_prefix)],
            "new": [
                (data.get(f"{row}-name", ""), data.get(f"{row}-value", ""))
                for row in (f"{name}-new-{index}" for index in range(self.new_rows))
            ],
        }

    def value_omitted_from_data(self, data, files, name):
        return False

    def id_for_label(self, id_):
        return None


class SecretEnvField(forms.Field):
    """A form field for secret environment variables, cleaned into a :class:`SecretEnvChange`.

    Its initial value is the list of names already set (never values); the
    form applies the change (``AgentProfile.apply_secret_change``). Values are
    refused when no environment can hold them (a NUL) or when longer than
    ``limits.SECRET_VALUE_CHARS``; names must be shell variable names.
    """

    widget = SecretEnvWidget

    def __init__(self, *, expected_names: Iterable[str] = (), **kwargs) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.widget.expected_names = list(expected_names)

    def bound_data(self, data, initial):
        # A refused form is shown again with the names as stored: what was typed is never sent back.
        return initial

    def has_changed(self, initial, data):
        try:
            return bool(self.clean(data))
        except ValidationError:
            return True

    def clean(self, value) -> SecretEnvChange:
        value = value or {}
        values: dict[str, str] = {}
        errors: list[ValidationError] = []
        cleared = {storable_text(str(name)) for name in value.get("clear", [])}
        pairs = [(name, secret) for name, secret in (value.get("replace") or {}).items() if secret]
        for name, secret in value.get("new", []):
            if not name.strip() and not secret:
                continue
            if not name.strip():
                errors.append(ValidationError(_("Name the secret you typed a value for."), code="unnamed"))
            elif not secret:
                errors.append(
                    ValidationError(_("Give %(name)s a value."), code="no_value", params={"name": name.strip()})
                )
            else:
                pairs.append((name.strip(), secret))
        for name, secret in pairs:
            name = storable_text(name)
            if len(name) > limits.SECRET_NAME_CHARS or not is_variable_name(name):
                errors.append(
                    ValidationError(
                        _("%(name)s is not a variable name: letters, digits and _, not starting with a digit."),
                        code="bad_name",
                        params={"name": Truncator(name).chars(40)},
                    )
                )
            elif name in values:
                errors.append(ValidationError(_("%(name)s is given twice."), code="twice", params={"name": name}))
            elif name in cleared:
                errors.append(
                    ValidationError(
                        _("Either replace %(name)s or clear it, not both."), code="both", params={"name": name}
                    )
                )
            elif "\0" in secret:
                errors.append(
                    ValidationError(
                        _("The value of %(name)s holds a NUL character, which no environment variable can."),
                        code="nul",
                        params={"name": name},
                    )
                )
            elif len(secret) > limits.SECRET_VALUE_CHARS:
                errors.append(
                    ValidationError(
                        _("The value of %(name)s is longer than %(limit)d characters."),
                        code="too_long",
                        params={"name": name, "limit": limits.SECRET_VALUE_CHARS},
                    )
                )
            else:
                values[name] = storable_text(secret)
        if errors:
            raise ValidationError(errors)
        return SecretEnvChange(values=values, cleared=frozenset(cleared))
