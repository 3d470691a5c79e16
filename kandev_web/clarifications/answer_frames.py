"""Reading an answer that arrives as a frame on the task page's socket.

The overlay's form is sent by htmx's ws extension as one JSON object: the
form's fields (``answer-<question id>-option``, ``answer-<question id>-custom``,
``reject_reason``), ``type`` and ``pending_id`` from its ``hx-vals``, the
``action`` of the button that sent it, and the ``HEADERS`` htmx adds. Pure
functions: anything else is refused with a sentence the operator can read,
and nothing is half-applied.
"""

from dataclasses import dataclass

from django.utils.translation import gettext as _

from kandev_web import socket_input

from .answering import CUSTOM_FIELD, OPTION_FIELD, form_answers

ANSWER = "clarification.answer"

#: An answer must fit into agentctl's own 1 MiB frame; nothing bigger is read.
MAX_FRAME_BYTES = 1024 * 1024

#: Fields every answer frame may carry besides the questions' own.
ENVELOPE_FIELDS = frozenset({"type", "pending_id", "action", "reject_reason", "HEADERS", "csrfmiddlewaretoken"})


class BadFrame(ValueError):
    """The frame cannot be used; ``str()`` says why, for the operator."""


def decode(text: str | None, data: bytes | None) -> dict:
    """The frame's JSON object with a known ``type`` and a ``pending_id``; raise ``BadFrame``."""
    if text is None:
        raise BadFrame(_("The page sent a binary frame; only JSON text is understood."))
    try:
        frame = socket_input.json_frame(text, max_bytes=MAX_FRAME_BYTES)
    except socket_input.UnreadableFrame as unreadable:
        raise BadFrame(_unreadable_sentence(unreadable.reason)) from None
    if not isinstance(frame, dict):
        raise BadFrame(_("The page sent JSON that is not an object."))
    if frame.get("type") != ANSWER:
        raise BadFrame(_("The page sent a message this server does not know."))
    if not isinstance(frame.get("pending_id"), str) or not frame["pending_id"]:
        raise BadFrame(_("The answer does not say which question it is for."))
    return frame


def _unreadable_sentence(reason: str) -> str:
    if reason == socket_input.UnreadableFrame.TOO_LARGE:
        return _("Your answer is too large to send (over 1 MiB).")
    return _("The page sent something that is not JSON.")


@dataclass(frozen=True)
class Submission:
    answers: list[dict]
    rejected: bool
    reject_reason: str


def submission(frame: dict, questions: list[dict]) -> Submission:
    """The operator's answer to ``questions`` in a decoded frame; raise ``BadFrame``."""
    allowed = ENVELOPE_FIELDS | {field.format(q["id"]) for q in questions for field in (OPTION_FIELD, CUSTOM_FIELD)}
    unknown = sorted(key for key in frame if key not in allowed)
    if unknown:
        message = _("The answer has fields this question does not have: %(fields)s")
        raise BadFrame(message % {"fields": ", ".join(unknown[:5])})
    for key in frame.keys() - ENVELOPE_FIELDS:
        value = frame[key]
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise BadFrame(_("The answer's field %(field)s is not text.") % {"field": key})
    reason = frame.get("reject_reason", "")
    if not isinstance(reason, str):
        raise BadFrame(_("The reason for skipping is not text."))
    action = frame.get("action", "submit")
    if action not in ("submit", "skip"):
        raise BadFrame(_("The answer's action must be submit or skip."))
    skipped = action == "skip"
    answers = [] if skipped else form_answers(questions, lambda name: _values(frame, name))
    return Submission(answers, skipped, reason)


def _values(frame: dict, name: str) -> list[str]:
    value = frame.get(name)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
