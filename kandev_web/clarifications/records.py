"""The question record and its timeline messages, shared by both ways an agent asks.

An ``ask_user_question_kandev`` bundle (``services``) and an ACP elicitation
(``elicitations``) end up as the same thing: a :class:`Clarification` with one
``clarification_request`` message per question, kept in step with the record,
settled once, with every open view told why. Both paths import this module;
neither imports the other.
"""

from django.db import transaction
from django.utils import timezone

from kandev_web import live
from kandev_web.board.models import Task
from kandev_web.sessions import events, workflow
from kandev_web.sessions.models import Message, MessageType, TaskSession

from . import overlay, signals
from .models import Clarification, Source
from .redaction import stored_response
from .settlement import Answerer


def _question_metadata(record: Clarification, index: int, question: dict) -> dict:
    return {
        "pending_id": record.pending_id,
        "question_id": question["id"],
        "question": question,
        "question_index": index,
        "question_total": len(record.questions),
        "context": record.context,
        "source": record.source,
        "status": record.status,
    }


def show_overlay(record: Clarification, *, pending: list[Clarification] | None = None) -> None:
    """Put a newly committed ``record`` in front of every open view of its task, before anything else about it.

    Called once the record is committed, so an operator can answer what they
    see; the timeline rows, icon and notification follow (:func:`announce`).
    ``pending`` is the task's pending questions when the caller knows them
    already (``overlay.pending_for_task``): read here otherwise.
    """
    task_id = record.session.task_id
    # Once in each language, each sent as soon as it is rendered: one read for all of them.
    if pending is None:
        pending = overlay.pending_for_task(task_id)
    for language, html in live.in_every_language(lambda: overlay.render(task_id, pending)):
        live.question_asked(task_id, record.pending_id, language, html)
    # Then every inbox, before the timeline rows and the rest: its item, as every member sees it.
    task = Task.objects.select_related("board").filter(pk=task_id).first()
    if task is not None:
        for language, html in live.in_every_language(lambda: overlay.render_inbox_item(record, task)):
            live.question_waiting(task.board.workspace_id, task_id, record.pending_id, language, html)
    # And the operators away from every page: their notifications, each once (``question_asked`` tells them
    # again, in case this process stops before it gets there).
    with transaction.atomic():
        signals.question_shown.send(Clarification, record=record)


@transaction.atomic
def announce(record: Clarification) -> None:
    """Everything a new question brings besides its overlay: one ``clarification_request`` message per question
    (the last one requests input), the task's icon and state, and ``question_asked`` (a notification, webhooks).

    Idempotent, so a record whose process stopped between committing it and
    announcing it is announced when agentctl lists it again.
    """
    if Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id).exists():
        return
    record.session = TaskSession.objects.select_for_update().select_related("task__board").get(pk=record.session_id)
    for index, question in enumerate(record.questions):
        events.add_message(
            record.session,
            type=MessageType.CLARIFICATION_REQUEST,
            content=question["prompt"],
            metadata=_question_metadata(record, index, question),
            requests_input=index == len(record.questions) - 1,
        )
    if record.source == Source.ELICITATION:
        workflow.elicitation_asked(record.session)
    else:
        workflow.question_asked(record.session)
    signals.question_asked.send(Clarification, record=record)


def update_messages(record: Clarification, **changes) -> None:
    """Carry a change of the record into its messages, and show it in every open view."""
    for message in Message.objects.select_for_update().filter(
        session=record.session_id, type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id
    ):
        message.metadata = {**message.metadata, **changes}
        message.save(update_fields=["metadata"])
        events.message_changed(message, created=False)


def settle(
    record: Clarification,
    status: str,
    reason: str,
    response: dict | None,
    *,
    answerer: Answerer | None = None,
    notice: bool = True,
) -> None:
    """End a pending record: status, why, who and from where, its messages, the waiting icon, and a notice.

    Inside the caller's transaction, with ``record`` locked by it. What a
    sensitive question was given is not kept (``redaction``). ``notice``
    tells every open page of the task why the question went away; each
    says it in its own words (``settlement``), and the page that answered
    says nothing more.
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
    update_messages(record, status=status, response=response, **_ending_metadata(record, answerer))
    workflow.question_settled(record.session)
    signals.question_settled.send(Clarification, record=record)
    if notice:
        live.clarification_settled(record.session.task_id, record.pending_id, reason)


def _answerer_fields(answerer: Answerer | None) -> dict:
    if answerer is None:
        return {}
    return {"answered_by_id": answerer.user_id, "answered_via": answerer.surface, "answered_from": answerer.tab}


def _ending_metadata(record: Clarification, answerer: Answerer | None) -> dict:
    """How it ended, as its messages carry it for the timeline (``settlement.ending_of_message``)."""
    assert record.responded_at is not None  # settled
    metadata = {"settled_reason": record.settled_reason, "settled_at": record.responded_at.isoformat()}
    if answerer is not None:
        metadata |= answerer.as_metadata()
    return metadata


def amend_response(record: Clarification, response: dict, *, answerer: Answerer | None = None) -> None:
    """Complete a record agentctl settled first: what the operator chose, and who they were, in every view.

    agentctl's ``elicitation.settled`` for an operator's answer knows neither
    who answered nor from where, so it announces nothing; the notice goes out
    here, once the answering process has said.
    """
    record.response = stored_response(record.questions, {**(record.response or {}), **response})
    fields = ["response"]
    if answerer is not None and record.answered_by_id is None:
        for name, value in _answerer_fields(answerer).items():
            setattr(record, name, value)
        fields += ["answered_by", "answered_via", "answered_from"]
    record.save(update_fields=fields)
    changes = {"response": record.response}
    if answerer is not None and "answered_by" in fields:
        changes |= answerer.as_metadata()
        task = record.session.task
        live.clarification_settled(task.pk, record.pending_id, record.settled_reason)
        # The inboxes that already showed it leaving now say who answered it.
        live.waiting_changed(task.board.workspace_id, task.pk)
    update_messages(record, **changes)

