"""Where a question is settled: every write that ends one, each by exactly one writer.

In Zulip's shape: ``check_*`` refuses, before anything is written, what
must not be recorded at all; ``do_*`` writes and announces, and what it
announces (``live``, ``signals.question_settled``'s receivers) goes out once
the transaction commits, so nobody is told of a settlement that rolled back.

Who settles a question, for each way it can end:

- an elicitation, however it ended (answered, skipped, timed out,
  withdrawn): the process owning its execution's stream, on agentctl's
  ``elicitation.settled`` (:func:`do_settle_elicitation`). The process an
  operator answered on writes no settlement: before forwarding, it makes the
  attempt known to the owner under a ``ref`` agentctl echoes for the answer
  that won (in memory when it is the owner itself, :func:`hand_over`; else as
  an :class:`~.models.Attempt` row, :func:`do_record_attempt`), and the owner
  settles from it, with who answered and what they chose, and tells every
  page once;
- an elicitation whose agent is gone, so that nobody else will: the answering
  process (:func:`do_settle_undelivered`);
- an elicitation agentctl no longer lists after a reconnect: the owner
  (:func:`do_settle_gone`), as answered or skipped if agentctl took an
  operator's answer to it (the answering process marks its attempt
  accepted, :func:`do_accept_attempt`, and the settlement agentctl sent
  for it may have reached nobody), withdrawn otherwise;
- an ask_user_question_kandev bundle: whoever holds its locked row, answering
  or expiring it (``services.respond``, ``services._expire``), through
  :func:`do_settle`.
"""

import collections
import threading
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from kandev_web import limits, live
from kandev_web.sessions import workflow

from . import records, signals
from .models import Attempt, Clarification, Status
from .redaction import stored_response
from .settlement import OPERATOR_REASONS, Answerer

#: agentctl's ``elicitation.settled`` outcome and reason, as the record's status.
_STATUS = {
    ("accepted", "operator"): Status.ANSWERED,
    ("declined", "operator_skipped"): Status.REJECTED,
    ("declined", "answer_timeout"): Status.EXPIRED,
}


class SkipReasonTooLong(ValueError):
    """A Skip's reason longer than reaches the agent; ``chars`` is its length."""

    def __init__(self, chars: int):
        super().__init__(chars)
        self.chars = chars


def check_skip_reason(reject_reason: str) -> None:
    """Refuse a Skip whose reason the agent would not get whole.

    Before anything is recorded, on either path: the board must not say
    "Skipped" for a skip the agent never gets.
    """
    chars = len(reject_reason.strip())
    if chars > limits.SKIP_REASON_CHARS:
        raise SkipReasonTooLong(chars)


def do_settle(
    record: Clarification, status: str, reason: str, response: dict | None, *, answerer: Answerer | None = None
) -> None:
    """End a pending record: status, why, who and from where, its timeline rows, the waiting icon, and a notice.

    Inside the caller's transaction, with ``record`` locked by it. What a
    sensitive question was given is not kept (``redaction``). The notice
    tells every open page of the task why the question went away; each says
    it in its own words (``settlement``), and the page that answered says
    nothing more (``AnswerSocket.first_to_tell``).
    """
    response = stored_response(record.questions, response)
    Clarification.objects.filter(pk=record.pk).update(
        status=status,
        settled_reason=reason,
        response=response,
        responded_at=timezone.now(),
        **_answerer_fields(answerer),
    )
    record.refresh_from_db()
    records.messages_changed(record)
    workflow.question_settled(record.session)
    signals.question_settled.send(Clarification, record=record)
    live.clarification_settled(record.session.task_id, record.pending_id, reason)


def _answerer_fields(answerer: Answerer | None) -> dict:
    if answerer is None:
        return {}
    return {"answered_by_id": answerer.user_id, "answered_via": answerer.surface, "answered_from": answerer.tab}


def _operator_side(record: Clarification, answers: list[dict], rejected: bool) -> dict:
    """What the record keeps of an operator's answer beside what went on the wire."""
    return stored_response(record.questions, {"rejected": rejected, "answers": [] if rejected else answers}) or {}


# Elicitations ------------------------------------------------------------


def new_attempt_ref() -> str:
    """An answer's ``answer_ref``: unique, and telling nothing about the answer."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class HandedOver:
    """An answer this process forwards to a stream it owns itself: what the owner settles from, in memory."""

    clarification_id: int
    response: dict
    answerer: Answerer | None


class _HandOvers:
    """Answers on their way to agentctl from this process, which also owns their streams, by ``answer_ref``.

    The owner settles from the winning attempt. When the owner is this very
    process, the attempt is handed to it here, in memory, and the answer
    leaves without waiting for a database write; the row is written once
    agentctl took the answer, for a reconnect (:func:`do_accept_attempt`).
    Put on the server's loop, taken in the agent runner's thread: hence the
    lock. An answer whose settlement never comes here (the stream was taken
    over meanwhile) is forgotten with the oldest, past ``LIMIT``.
    """

    LIMIT = 1000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_ref: collections.OrderedDict[str, HandedOver] = collections.OrderedDict()

    def put(self, ref: str, handed: HandedOver) -> None:
        with self._lock:
            self._by_ref[ref] = handed
            while len(self._by_ref) > self.LIMIT:
                self._by_ref.popitem(last=False)

    def take(self, ref: object) -> HandedOver | None:
        with self._lock:
            return self._by_ref.pop(ref, None) if isinstance(ref, str) else None


hand_overs = _HandOvers()


def hand_over(record: Clarification, *, answers: list[dict], rejected: bool, answerer: Answerer | None) -> str:
    """Hand an answer this process forwards to its own stream's settlement (:class:`_HandOvers`); its ``ref``."""
    ref = new_attempt_ref()
    hand_overs.put(ref, HandedOver(record.pk, _operator_side(record, answers, rejected), answerer))
    return ref


def do_record_attempt(
    record: Clarification,
    *,
    answers: list[dict],
    rejected: bool,
    answerer: Answerer | None,
    ref: str = "",
    reported: dict | None = None,
) -> str:
    """Record an answer forwarded to agentctl; its ``ref`` (``ref`` or a new one), for agentctl to echo if it wins.

    For a stream another process owns, committed before the answer leaves, so
    that owner finds it whenever agentctl's settlement reaches it. For one
    this process owns, the answer was handed over in memory
    (:func:`hand_over`), and the row is written once agentctl took it, with
    what it ``reported``, as :func:`do_accept_attempt` notes it. It settles nothing.
    """
    ref = ref or new_attempt_ref()
    Attempt.objects.create(
        ref=ref,
        clarification_id=record.pk,
        response=_operator_side(record, answers, rejected),
        accepted=None if reported is None else _accepted(record, reported),
        **_answerer_fields(answerer),
    )
    return ref


def do_accept_attempt(record: Clarification, ref: str, reported: dict) -> None:
    """Note on the attempt ``ref`` that agentctl took it, with what it ``reported``; it settles nothing.

    agentctl announces its settlement to whoever holds the stream at that
    moment, which may be nobody; this is how the owner still learns, on
    reconnect, that the question was answered and by whom (:func:`do_settle_gone`).
    """
    Attempt.objects.filter(ref=ref).update(accepted=_accepted(record, reported))


def _accepted(record: Clarification, reported: dict) -> dict | None:
    """What an attempt keeps of agentctl's report that it took the answer (as it may be stored: ``redaction``)."""
    return stored_response(record.questions, {key: reported[key] for key in ("content", "withheld") if key in reported})


@transaction.atomic
def do_settle_elicitation(payload: dict) -> None:
    """Apply agentctl's ``elicitation.settled``: the one write that settles an elicitation agentctl holds.

    For an operator's answer or Skip, who answered and what they chose come
    from the attempt agentctl names (``answer_ref``). An agentctl too old
    to name it leaves the answerer unknown unless only one answer was tried.
    """
    record = (
        Clarification.objects.select_for_update()
        .select_related("session__task")
        .filter(pending_id=payload.get("pending_id"), status=Status.PENDING)
        .first()
    )
    if record is not None:
        _settle_as_agentctl_did(record, payload)


def _settle_as_agentctl_did(record: Clarification, payload: dict) -> None:
    """Settle the locked, pending ``record`` as ``elicitation.settled``'s ``payload`` says."""
    outcome, reason = payload.get("outcome", ""), payload.get("reason", "")
    response = {"outcome": outcome, "rejected": reason == "operator_skipped"}
    winner = _winning_attempt(record, payload.get("answer_ref")) if reason in OPERATOR_REASONS else None
    if winner is not None:
        response |= winner.response
    if outcome == "accepted":
        response["content"] = payload.get("content")
        if payload.get("withheld"):
            response["withheld"] = payload["withheld"]
    status = _STATUS.get((outcome, reason), Status.CANCELLED)
    do_settle(record, status, reason, response, answerer=winner.answerer if winner else None)


def _winning_attempt(record: Clarification, ref: object) -> HandedOver | None:
    """The answer agentctl names: handed over by this process, else recorded by another one."""
    handed = hand_overs.take(ref)
    if handed is not None and handed.clarification_id == record.pk:
        return handed
    attempts = Attempt.objects.select_related("answered_by").filter(clarification=record)
    if isinstance(ref, str) and ref:
        attempt = attempts.filter(ref=ref).first()
    else:
        only = list(attempts[:2])
        attempt = only[0] if len(only) == 1 else None
    if attempt is None:
        return None
    return HandedOver(record.pk, attempt.response, _answerer_of(attempt))


def _answerer_of(attempt: Attempt) -> Answerer | None:
    if attempt.answered_by is None:
        return None
    return Answerer.of(attempt.answered_by, attempt.answered_via, attempt.answered_from)


@transaction.atomic
def do_settle_undelivered(
    record: Clarification, *, answers: list[dict], rejected: bool, answerer: Answerer | None
) -> None:
    """Keep the operator's choice for a question whose agent is gone; nothing reaches the agent, nobody else writes."""
    locked = (
        Clarification.objects.select_for_update()
        .select_related("session")
        .filter(pk=record.pk, status=Status.PENDING)
        .first()
    )
    if locked is None:
        return
    response = {"outcome": "undelivered", **_operator_side(locked, answers, rejected)}
    status = Status.REJECTED if rejected else Status.ANSWERED
    do_settle(locked, status, "undelivered", response, answerer=answerer)


#: Why a question was withdrawn when agentctl no longer holds it: it lost it
#: (an agentctl restarted), or it is gone, with the agent.
GONE = "gone"
AGENTCTL_GONE = "agentctl_gone"


def do_settle_gone(execution_id: int, live_ids: set[str], *, reason: str = GONE) -> None:
    """Settle the execution's pending questions agentctl no longer holds (after a reconnect, or with agentctl gone).

    One whose answer agentctl took ends as that answer, exactly as the
    ``elicitation.settled`` agentctl sent for it would have ended it, had it
    reached this process; the rest are withdrawn for ``reason``.
    """
    with transaction.atomic():
        for record in (
            Clarification.objects.select_for_update()
            .select_related("session__task")
            .filter(execution_id=execution_id, status=Status.PENDING)
            .exclude(pending_id__in=live_ids)
        ):
            # agentctl takes one answer per question; the latest is the one a restarted agentctl took, if ever.
            accepted = record.attempts.filter(accepted__isnull=False).order_by("-pk").first()
            if accepted is not None:
                _settle_as_agentctl_did(record, _settlement_of(record, accepted))
            else:
                do_settle(record, Status.CANCELLED, reason, {"outcome": "cancelled"})


def _settlement_of(record: Clarification, attempt: Attempt) -> dict:
    """The ``elicitation.settled`` agentctl sent when it took ``attempt``."""
    skipped = attempt.response.get("rejected") is True
    return {
        "pending_id": record.pending_id,
        "outcome": "declined" if skipped else "accepted",
        "reason": "operator_skipped" if skipped else "operator",
        "answer_ref": attempt.ref,
        **(attempt.accepted or {}),
    }
