"""The one way an operator's answer reaches an agent, from whichever surface it came.

The task page's socket (``TaskConsumer.receive``) and the HTTP endpoint (for
clients without JavaScript, and API use) both call :func:`answer`, and the
fork between the two question paths is here and nowhere else:

- an elicitation is forwarded to agentctl first, which alone decides whether
  the answer still counts (``elicitations.forward``);
- an ask_user_question_kandev bundle is settled in the database, which wakes
  the agent's waiting tool call; one the agent left behind reaches it as a
  new prompt.

It runs on the server loop: database work goes through
``database_sync_to_async`` and the wait for agentctl is awaited here, never
inside a database thread, so one unresponsive agent holds no thread that
other pages need.
"""

import re
from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _

from kandev_web import limits
from kandev_web.db import database_sync_to_async
from kandev_web.metrics import ANSWER_SECONDS, Timer
from kandev_web.sessions import services as sessions
from kandev_web.storable import storable, storable_text

from . import actions, elicitations, services
from .delivery import Delivery, Outcome
from .models import Clarification, Source
from .settlement import Answerer
from .validation import InvalidBundle

#: The overlay's fields, per question: ``answer-<question id>-option`` (one per
#: chosen option) and ``answer-<question id>-custom``.
OPTION_FIELD = "answer-{}-option"
CUSTOM_FIELD = "answer-{}-custom"


class UnknownQuestion(LookupError):
    """No question with that pending id that this operator may answer."""


def question_for(user, pending_id: str) -> Clarification:
    """The record ``user`` may answer, or ``UnknownQuestion`` (another workspace's looks the same)."""
    record = (
        Clarification.objects.for_user(user)
        .select_related("session", "execution")
        .filter(pending_id=storable_text(pending_id))  # a NUL is no id, not a database error
        .first()
    )
    if record is None:
        raise UnknownQuestion(pending_id)
    return record


#: A JSON number, as ``<input type=number>`` writes one; anything else is sent as typed, for agentctl to refuse.
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_BOOLEANS = {"true": True, "false": False}


def form_answers(questions: list[dict], values: Callable[[str], list[str]]) -> list[dict]:
    """The answers in the overlay's fields, read through ``values(name) -> [value, ...]``.

    Only answered questions are listed: omission is how "unanswered" is said. A
    typed question's answer is its ``value``: a yes/no pick as a JSON boolean, a
    number field as a JSON number. What does not read as one is passed on as
    the text it is, so that agentctl, which alone judges an answer, says why.
    """
    answers = []
    for question in questions:
        qid = question["id"]
        selected = [value for value in values(OPTION_FIELD.format(qid)) if value]
        custom = next((value.strip() for value in values(CUSTOM_FIELD.format(qid)) if value.strip()), "")
        kind = question.get("kind")
        if kind == "boolean" and selected:
            answers.append({"question_id": qid, "value": _BOOLEANS.get(selected[0], selected[0])})
        elif kind in ("number", "integer") and custom:
            answers.append({"question_id": qid, "value": _number(custom)})
        elif selected or custom:
            answers.append({"question_id": qid, "selected_options": selected, "custom_text": custom})
    return answers


def _number(text: str) -> int | float | str:
    if not _JSON_NUMBER.fullmatch(text):
        return text
    try:
        if any(mark in text for mark in ".eE"):
            number = float(text)
            # A huge exponent overflows to infinity, which JSON cannot carry: send the text instead.
            return number if number not in (float("inf"), float("-inf")) else text
        return int(text)
    except ValueError:  # more digits than Python converts
        return text


async def answer(
    record: Clarification,
    *,
    answers: list[dict],
    rejected: bool,
    reject_reason: str,
    answerer: Answerer | None = None,
) -> Delivery:
    """Deliver the operator's answer (or Skip, ``rejected``) and say what became of it.

    ``answerer`` is who answered and from which surface, for the record's audit trail.
    How long that took is ``kandev_answer_seconds``, by outcome.
    """
    with Timer() as timer:
        delivery = await _answer(
            record, answers=answers, rejected=rejected, reject_reason=reject_reason, answerer=answerer
        )
    ANSWER_SECONDS.labels(delivery.outcome.value).observe(timer.seconds)
    return delivery


async def _answer(
    record: Clarification, *, answers: list[dict], rejected: bool, reject_reason: str, answerer: Answerer | None
) -> Delivery:
    # What the operator typed goes to a row (and to the agent) storable, whichever surface it came from.
    answers, reject_reason = storable([answers, reject_reason])
    if rejected:
        try:
            actions.check_skip_reason(reject_reason)
        except actions.SkipReasonTooLong as long:
            message = _(
                "Your reason for skipping has %(count)d characters; at most %(limit)d reach the agent. Shorten it."
            )
            said = message % {"count": long.chars, "limit": limits.SKIP_REASON_CHARS}
            return Delivery(Outcome.INVALID, said, "error")
    given: dict[str, Any] = {
        "answers": answers,
        "rejected": rejected,
        "reject_reason": reject_reason,
        "answerer": answerer,
    }
    if record.source == Source.ELICITATION:
        return await elicitations.forward(record, **given)
    return await _answer_bundle(record, **given)


async def _answer_bundle(record: Clarification, **given) -> Delivery:
    try:
        answered = await database_sync_to_async(services.respond)(record.pending_id, **given)
    except services.AlreadyAnswered:
        return Delivery(Outcome.ALREADY_SETTLED, _("This question was already answered."))
    except InvalidBundle as invalid:
        message = _("Your answer could not be used: %(errors)s") % {"errors": "; ".join(invalid.errors)}
        return Delivery(Outcome.INVALID, message, "error", tuple(invalid.errors))
    if not answered.agent_disconnected:
        return Delivery(Outcome.DELIVERED)
    try:
        await sessions.send_prompt_async(answered.session_id, services.late_answer_prompt(answered))
    except sessions.TurnOpen:
        message = _(
            "The agent had moved on and is busy with another turn; your answer was recorded but not sent. "
            "Tell it in a message once its turn ends."
        )
        return Delivery(Outcome.AGENT_BUSY, message, "error")
    except sessions.SessionActionError:
        return Delivery(Outcome.AGENT_GONE, _("The agent is gone; your answer was recorded but not delivered."))
    return Delivery(Outcome.RESUMED, _("The agent had moved on; your answer was sent as a new message."))
