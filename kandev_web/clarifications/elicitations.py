"""Clarifications backed by an ACP elicitation, which agentctl holds.

agentctl announces a pending elicitation and settles it; this module mirrors
both onto a clarification record (with agentctl's ``pending_id`` verbatim,
never deduplicated: D4, AC-60) and forwards every operator answer to agentctl
*first*, with no local already-answered short cut (AC-61): whether an answer
counts is decided in one place, the process holding the ACP request.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kandev_web.agentctl.stream_client import AgentStreamNotConnected, NotFound, StreamError, ValidationFailed
from kandev_web.board import live
from kandev_web.sessions import events
from kandev_web.sessions.models import AgentExecution, TaskSession
from kandev_web.sessions.runtime import Endpoint, runner

from .models import Clarification, Source, Status

logger = logging.getLogger(__name__)

#: Why an elicitation ended, as the operator is told (agentctl's reasons, plus ours).
SETTLED_NOTICES = {
    "operator": gettext_lazy("Answered."),
    "operator_skipped": gettext_lazy("Skipped."),
    "answer_timeout": gettext_lazy("Timed out: nobody answered in time, so the agent was told you skipped it."),
    "turn_cancelled": gettext_lazy("Withdrawn: the turn was cancelled."),
    "agent_cancelled_request": gettext_lazy("Withdrawn by the agent."),
    "agent_exited": gettext_lazy("Withdrawn: the agent exited."),
    "agentctl_shutdown": gettext_lazy("Withdrawn: the agent was stopped."),
    "gone": gettext_lazy("Withdrawn: the agent no longer has this question."),
}
_STATUS = {
    ("accepted", "operator"): Status.ANSWERED,
    ("declined", "operator_skipped"): Status.REJECTED,
    ("declined", "answer_timeout"): Status.EXPIRED,
}


def _question(question: dict) -> dict:
    """agentctl's wire question, in the shape the overlay and messages use."""
    return {
        "id": question["id"],
        "title": question.get("title") or "",
        "prompt": question.get("prompt") or "",
        "kind": question.get("kind", "single"),
        "accepts_text": bool(question.get("accepts_text")),
        "sensitive": bool(question.get("sensitive")),
        "options": [
            {"option_id": o["id"], "label": o.get("label") or o["id"], "description": o.get("description") or ""}
            for o in question.get("options", [])
        ],
    }


@transaction.atomic
def record_requested(execution_id: int, session_id: int, payload: dict) -> Clarification | None:
    from . import services

    if Clarification.objects.filter(pending_id=payload["pending_id"]).exists():
        return None  # announced again after a reconnect
    session = TaskSession.objects.select_for_update().select_related("task__board").get(pk=session_id)
    record = Clarification.objects.create(
        pending_id=payload["pending_id"],
        session=session,
        turn=events.current_turn(session),
        execution_id=execution_id,
        source=Source.ELICITATION,
        questions=[_question(q) for q in payload.get("questions", [])],
        context=payload.get("message") or "",
        tool_call_id=payload.get("tool_call_id") or "",
    )
    services.add_question_messages(record)
    # The turn is still open: the session stays RUNNING (AC-09); the pending
    # action is what turns the icon into "waiting for input".
    events.session_changed(session)
    from kandev_web.notifications import services as notifications

    notifications.clarification_requested(record)
    return record


def _settle(record: Clarification, status: str, reason: str, response: dict | None) -> None:
    from . import services

    Clarification.objects.filter(pk=record.pk).update(
        status=status, settled_reason=reason, response=response, responded_at=timezone.now()
    )
    record.refresh_from_db()
    services.update_messages(record, status=status, response=response, settled_reason=reason)
    events.session_changed(record.session)
    live.send_after_commit(
        live.task_group(record.session.task_id),
        {"type": "clarification.settled", "pending_id": record.pending_id, "reason": reason},
    )


@transaction.atomic
def record_settled(payload: dict) -> None:
    record = (
        Clarification.objects.select_for_update()
        .select_related("session__task")
        .filter(pending_id=payload.get("pending_id"), status=Status.PENDING)
        .first()
    )
    if record is None:
        return
    outcome, reason = payload.get("outcome", ""), payload.get("reason", "")
    response = {"outcome": outcome, "rejected": reason == "operator_skipped"}
    if outcome == "accepted":
        response["content"] = payload.get("content")
    _settle(record, _STATUS.get((outcome, reason), Status.CANCELLED), reason, response)


def reconcile(execution_id: int, session_id: int, pending: list[dict]) -> None:
    """After a reconnect: adopt what was announced meanwhile, settle what went away."""
    live_ids = {p["pending_id"] for p in pending}
    for payload in pending:
        record_requested(execution_id, session_id, payload)
    with transaction.atomic():
        for record in (
            Clarification.objects.select_for_update()
            .select_related("session__task")
            .filter(execution_id=execution_id, status=Status.PENDING)
            .exclude(pending_id__in=live_ids)
        ):
            _settle(record, Status.CANCELLED, "gone", {"outcome": "cancelled"})


@dataclass(frozen=True)
class Delivery:
    """What became of an operator's answer to an elicitation."""

    delivered: bool
    message: str = ""
    level: str = "info"
    problems: tuple[str, ...] = ()


def _wire_answers(record: Clarification, answers: list[dict]) -> list[dict]:
    return [
        {
            "question_id": a["question_id"],
            "selected_options": list(a.get("selected_options", [])),
            "custom_text": a.get("custom_text", ""),
        }
        for a in answers
    ]


def forward(record: Clarification, *, answers: list[dict], rejected: bool, reject_reason: str) -> Delivery:
    """Send the answer to agentctl and report what happened; never decide locally first."""
    execution = AgentExecution.objects.filter(pk=record.execution_id).first()
    if execution is None or not execution.is_live or record.agent_disconnected:
        _record_undelivered(record, answers, rejected)
        return Delivery(False, _("The agent is gone; your answer was recorded but not delivered."))
    payload = {
        "pending_id": record.pending_id,
        "answers": [] if rejected else _wire_answers(record, answers),
        "rejected": rejected,
        "reject_reason": reject_reason,
    }
    endpoint = Endpoint(execution.pk, execution.url, execution.token)
    try:
        result = runner.call(runner.request(endpoint, "agent.elicitations.respond", payload))
    except NotFound:
        return Delivery(False, _("This question was already answered or withdrawn."))
    except ValidationFailed as invalid:
        problems = tuple(
            str(p.get("message", p)) if isinstance(p, dict) else str(p) for p in invalid.details.get("problems", [])
        )
        return Delivery(
            False,
            _("Your answer does not fit the question: %(problems)s") % {"problems": "; ".join(problems)},
            "error",
            problems,
        )
    except (AgentStreamNotConnected, TimeoutError):
        return Delivery(
            False,
            _("Not delivered: the connection to the agent is down. Your question is still open; try again."),
            "error",
        )
    except StreamError as error:
        logger.warning("agentctl refused an elicitation answer: %s", error.code)
        return Delivery(False, _("Not delivered: the agent refused the answer."), "error")
    _record_delivered(record, answers, rejected, result)
    return Delivery(True)


@transaction.atomic
def _record_delivered(record: Clarification, answers: list[dict], rejected: bool, result: dict) -> None:
    """Keep what the operator chose beside what went on the wire.

    agentctl's ``elicitation.settled`` may be applied first (on the owning
    process); either way the record ends with both.
    """
    current = Clarification.objects.select_for_update().select_related("session__task").get(pk=record.pk)
    response = {
        "outcome": "declined" if rejected else "accepted",
        "content": result.get("content"),
        "rejected": rejected,
        "answers": [] if rejected else answers,
    }
    if current.status == Status.PENDING:
        _settle(
            current,
            Status.REJECTED if rejected else Status.ANSWERED,
            "operator_skipped" if rejected else "operator",
            response,
        )
    else:
        from . import services

        current.response = {**(current.response or {}), **response}
        current.save(update_fields=["response"])
        services.update_messages(current, response=current.response)


@transaction.atomic
def _record_undelivered(record: Clarification, answers: list[dict], rejected: bool) -> None:
    """Keep the operator's choice as a record of what they chose; nothing reaches the agent."""
    response = {"outcome": "undelivered", "rejected": rejected, "answers": [] if rejected else answers}
    if Clarification.objects.filter(pk=record.pk, status=Status.PENDING).exists():
        _settle(record, Status.REJECTED if rejected else Status.ANSWERED, "undelivered", response)
