"""Form fields shared by the apps' forms.

An operator's text is stored as typed, except for what no database can keep:
Django's ``CharField`` refuses a NUL ("Null characters are not allowed."), an
invisible character the operator cannot find in what they pasted; here it
becomes a visible U+FFFD instead, as in an agent's text (``storable``).
"""

from django import forms

from .storable import storable_text


class StorableCharField(forms.CharField):
    """A ``CharField`` whose value is made storable before it is validated, instead of refused."""

    def to_python(self, value):
        value = super().to_python(value)
        return storable_text(value) if isinstance(value, str) else value
