"""A comment on a line of the branch under review."""

from django import forms
from django.utils.translation import gettext_lazy as _

from kandev_web.forms import StorableCharField

#: A comment is a note to the agent, not a document.
MAX_COMMENT_CHARS = 4000


class CommentForm(forms.Form):
    path = StorableCharField(max_length=1000)
    line = forms.IntegerField(label=_("Line"), min_value=1, max_value=10_000_000)
    text = StorableCharField(label=_("Comment"), max_length=MAX_COMMENT_CHARS, widget=forms.Textarea(attrs={"rows": 2}))
