from dataclasses import replace

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web import limits
from kandev_web.clarifications.redaction import is_withheld
from kandev_web.clarifications.requester import Requester
from kandev_web.clarifications.requester import requester as requester_of
from kandev_web.clarifications.settlement import Settlement, describe, ending_of_message

register = template.Library()

#: The limits a page's text fields announce as ``maxlength``, so a browser stops where the server would refuse.
TEXT_LIMITS = {
    "prompt": limits.PROMPT_CHARS,
    "skip_reason": limits.SKIP_REASON_CHARS,
    "ask_answer": limits.ASK_ANSWER_CHARS,
    "elicitation_answer": limits.ELICITATION_ANSWER_CHARS,
}


@register.simple_tag
def text_limit(name: str) -> int:
    """``limits``' value for a field: ``maxlength="{% text_limit 'skip_reason' %}"``."""
    return TEXT_LIMITS[name]


@register.filter
def requester(record) -> Requester | None:
    """Who the overlay says asks ``record`` (``requester.py``)."""
    return requester_of(source=record.source, tool_call_id=record.tool_call_id, questions=record.questions)


@register.filter
def answer_text(metadata: dict) -> str:
    """What the operator answered to one question of a ``clarification_request`` message."""
    response = metadata.get("response") or {}
    if response.get("rejected"):  # skipped, on either path
        return _("Skipped")
    question = metadata.get("question") or {}
    if is_withheld(response, metadata.get("question_id")):
        # A secret typed into a credential-looking field: sent, never kept (docs/decisions.md#secrets).
        if metadata.get("settled_reason") == "undelivered":
            return _("•••• (not sent, not stored)")
        return _("•••• (sent, not stored)")
    labels = {o.get("option_id"): o.get("label") for o in question.get("options", [])}
    for answer in response.get("answers", []):
        if answer.get("question_id") == metadata.get("question_id"):
            value = answer.get("value")
            if isinstance(value, bool):
                return _("Yes") if value else _("No")
            if value is not None:
                return str(value)
            if answer.get("custom_text"):
                return answer["custom_text"]
            return ", ".join(labels.get(o, o) for o in answer.get("selected_options", []))
    return _("No selection")


@register.filter
def constraint_hint(question: dict) -> str:
    """What a typed form's question asks of its answer, said before the operator answers.

    The same limits agentctl checks (docs/decisions.md#typed-forms), in words: a
    range, a length, a format, a number of picks. The pattern is the agent's text
    and is shown as it is (escaped by the template).
    """
    c = question.get("constraints") or {}
    kind = question.get("kind")
    parts: list[str] = []
    low, high = c.get("minimum"), c.get("maximum")
    if kind == "integer":
        parts.append(_("A whole number"))
    elif kind == "number":
        parts.append(_("A number"))
    if low is not None and high is not None:
        parts.append(_("from %(low)s to %(high)s") % {"low": low, "high": high})
    elif low is not None:
        parts.append(_("at least %(low)s") % {"low": low})
    elif high is not None:
        parts.append(_("at most %(high)s") % {"high": high})
    if parts:
        parts = [" ".join(parts)]
    fmt = c.get("format")
    if fmt:
        parts.append(
            {
                "email": _("An e-mail address"),
                "uri": _("A URL"),
                "date": _("A date"),
                "date-time": _("A date and time"),
            }.get(fmt, fmt)
        )
    shortest, longest = c.get("minLength"), c.get("maxLength")
    if shortest is not None and longest is not None:
        parts.append(_("%(low)s to %(high)s characters") % {"low": shortest, "high": longest})
    elif shortest is not None:
        parts.append(_("At least %(low)s characters") % {"low": shortest})
    elif longest is not None:
        parts.append(_("At most %(high)s characters") % {"high": longest})
    fewest, most = c.get("minItems"), c.get("maxItems")
    if fewest is not None and most is not None:
        parts.append(_("Choose %(low)s to %(high)s") % {"low": fewest, "high": most})
    elif fewest is not None:
        parts.append(_("Choose at least %(low)s") % {"low": fewest})
    elif most is not None:
        parts.append(_("Choose at most %(high)s") % {"high": most})
    if c.get("pattern"):
        parts.append(_("Matching %(pattern)s") % {"pattern": c["pattern"]})
    return " · ".join(parts)


@register.filter
def is_in(value, collection) -> bool:
    """Membership for the template, which has ``in`` only inside ``{% if %}``."""
    return value in collection


@register.filter
def choices(question: dict) -> list[dict]:
    """The option buttons a question shows: its options, or Yes and No for a boolean."""
    if question.get("kind") == "boolean":
        return [{"option_id": "true", "label": _("Yes")}, {"option_id": "false", "label": _("No")}]
    return question.get("options") or []


@register.filter
def default_options(question: dict) -> list[str]:
    """The option ids the form's default picks before the operator does (never sent unless left in place)."""
    default = question.get("default")
    if question.get("kind") == "boolean" and isinstance(default, bool):
        return ["true" if default else "false"]
    if question.get("kind") == "multi" and isinstance(default, list):
        return [d for d in default if isinstance(d, str)]
    if question.get("kind") == "single" and isinstance(default, str):
        return [default]
    return []


@register.filter
def default_text(question: dict) -> str:
    """What a text or number field starts with."""
    default = question.get("default")
    if question.get("kind") in ("text", "number", "integer") and not isinstance(default, bool | list | dict):
        return "" if default is None else str(default)
    return ""


_INPUT_TYPES: dict[object, str] = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}


@register.filter
def input_type(question: dict) -> str:
    """The native input a typed text question gets, by its format."""
    fmt = (question.get("constraints") or {}).get("format")
    return _INPUT_TYPES.get(fmt, "")


@register.filter
def answer_limit(question: dict) -> int:
    """An elicitation's text field's maxlength: the question's own, within what agentctl takes."""
    longest = (question.get("constraints") or {}).get("maxLength")
    most = limits.ELICITATION_ANSWER_CHARS
    return min(longest, most) if isinstance(longest, int) else most


@register.simple_tag(takes_context=True)
def settlement(context, message) -> Settlement | None:
    """How a ``clarification_request`` message's question ended, for this viewer.

    ``tab`` in the context is the viewer's live connection (``settlement.tab_id``),
    set when a task page's socket renders; a page's first render has none.
    """
    ending = ending_of_message(message.metadata, message.created_at)
    if ending.settled_at is not None:
        ending = replace(ending, settled_at=timezone.localtime(ending.settled_at))
    return describe(ending, viewer_tab=context.get("tab", ""), today=timezone.localdate())
