"""The question record and its timeline messages, shared by both ways an agent asks.

An ``ask_user_question_kandev`` bundle (``services``) and an ACP elicitation
(``elicitations``) end up as the same thing: a :class:`Clarification` with one
``clarification_request`` message per question, which links to the record
and shows what the record says (``timeline``).
Both paths import this module; neither imports the other. Settling one, with
every open view told why, is ``actions``' business.
"""

from django.db import transaction

from kandev_web import live
from kandev_web.board.models import Task
from kandev_web.sessions import events, workflow
from kandev_web.sessions.models import Message, MessageType, TaskSession

from . import overlay, signals, timeline
from .models import Clarification, Source


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
            metadata=timeline.link(record, index),
            requests_input=index == len(record.questions) - 1,
        )
    if record.source == Source.ELICITATION:
        workflow.elicitation_asked(record.session)
    else:
        workflow.question_asked(record.session)
    signals.question_asked.send(Clarification, record=record)


def messages_changed(record: Clarification) -> None:
    """Show a change of the record in every open view of its messages.

    Nothing is written to them: a message keeps only its link to the record
    (``timeline.link``), and its row is rendered again from the record.
    """
    for message in Message.objects.select_related("session").filter(
        session=record.session_id, type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id
    ):
        events.message_changed(message, created=False)
