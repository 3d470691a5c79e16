from dataclasses import replace

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web import limits
from kandev_web.clarifications.overlay_model import BundleView, bundle_view
from kandev_web.clarifications.redaction import is_withheld
from kandev_web.clarifications.requester import Requester
from kandev_web.clarifications.requester import requester as requester_of
from kandev_web.clarifications.settlement import Settlement, describe, ending_of_record
from kandev_web.clarifications.timeline import AskedQuestion
from kandev_web.clarifications.timeline import asked as asked_of
from kandev_web.clarifications.url_mode import ShownUrl, shown_url

register = template.Library()

#: The limits a page's text fields announce as ``maxlength``, so a browser stops where the server would refuse.
TEXT_LIMITS = {
    "prompt": limits.PROMPT_CHARS,
    "skip_reason": limits.SKIP_REASON_CHARS,
}


@register.simple_tag
def text_limit(name: str) -> int:
    """``limits``' value for a field: ``maxlength="{% text_limit 'skip_reason' %}"``."""
    return TEXT_LIMITS[name]


@register.filter
def requester(record) -> Requester | None:
    """Who the overlay says asks ``record`` (``requester.py``)."""
    return requester_of(source=record.source, tool_call_id=record.tool_call_id, questions=record.questions)


@register.simple_tag(takes_context=True)
def asked(context, message) -> AskedQuestion | None:
    """The question a ``clarification_request`` message shows, read from its record; None for any other message.

    The page's records are in the context as ``question_records`` when it
    renders many rows (``timeline.records_of``), so each row reads none.
    """
    return asked_of(message, context.get("question_records"))


@register.filter
def answer_text(asked: AskedQuestion) -> str:
    """What the operator answered to one question of a bundle, as its record keeps it."""
    record = asked.record
    response = record.response or {}
    if response.get("rejected"):  # skipped, on either path
        return _("Skipped")
    if record.mode == "url":
        # Accept is consent: there is nothing else to show, and the address stays off the timeline.
        return _("Signed in") if record.completed_at else _("Continued after opening the page")
    if is_withheld(response, asked.question_id):
        # A secret typed into a credential-looking field: sent, never kept (docs/decisions/operator.md#secrets).
        if record.settled_reason == "undelivered":
            return _("•••• (not sent, not stored)")
        return _("•••• (sent, not stored)")
    labels = {o.get("id"): o.get("label") for o in asked.question.get("options", [])}
    for answer in response.get("answers", []):
        if answer.get("question_id") == asked.question_id:
            value = answer.get("value")
            if isinstance(value, bool):
                return _("Yes") if value else _("No")
            if value is not None:
                return str(value)
            text = answer.get("custom_text")
            picks = ", ".join(labels.get(o, o) for o in answer.get("selected_options", []))
            if text and picks and asked.question.get("note"):
                # Codex's note goes to the agent beside the pick (docs/decisions/mapping.md#codex-forms).
                return _("%(choice)s, with the note: %(note)s") % {"choice": picks, "note": text}
            return text or picks
    return _("No selection")


@register.filter
def url_view(record) -> ShownUrl:
    """A URL-mode request's address, split around its host (``url_mode.shown_url``)."""
    return shown_url(record.url)


@register.filter
def overlay_view(record) -> BundleView:
    """The overlay's view-model of a pending ``record`` (``overlay_model.py``): what each question shows, and how."""
    return bundle_view(record.pending_id, record.source, record.questions)


@register.simple_tag(takes_context=True)
def settlement(context, asked: AskedQuestion) -> Settlement | None:
    """How a timeline row's question ended, as its record says, for this viewer.

    ``tab`` in the context is the viewer's live connection (``settlement.tab_id``),
    set when a task page's socket renders; a page's first render has none.
    """
    ending = ending_of_record(asked.record)
    if ending.settled_at is not None:
        ending = replace(ending, settled_at=timezone.localtime(ending.settled_at))
    return describe(ending, viewer_tab=context.get("tab", ""), today=timezone.localdate())
