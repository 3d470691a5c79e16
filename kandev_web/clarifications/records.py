"""The question record and its timeline messages, shared by both ways an agent asks.

An ``ask_user_question_kandev`` bundle (``services``) and an ACP elicitation
(``elicitations``) end up as the same thing: a :class:`Clarification` with one
``clarification_request`` message per question, kept in step with the record,
settled once, with every open view told why. Both paths import this module;
neither imports the other.
"""

from django.utils import timezone
from django.utils.translation import gettext_lazy

from kandev_web import live
from kandev_web.board import workflow
from kandev_web.sessions import events
from kandev_web.sessions.models import Message, MessageType

from .models import Clarification, Status

#: Why a question ended, as the operator is told (agentctl's reasons, plus ours).
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


def add_question_messages(record: Clarification) -> None:
    """Show a new record: its overlay first, then one ``clarification_request`` message per question.

    The last message requests input. The overlay's event is registered before
    anything else, so every open page shows the question before the rest.
    """
    live.question_asked(record.session.task_id, record.pending_id)
    for index, question in enumerate(record.questions):
        events.add_message(
            record.session,
            type=MessageType.CLARIFICATION_REQUEST,
            content=question["prompt"],
            metadata=_question_metadata(record, index, question),
            requests_input=index == len(record.questions) - 1,
        )


def update_messages(record: Clarification, **changes) -> None:
    """Carry a change of the record into its messages, and show it in every open view."""
    for message in Message.objects.select_for_update().filter(
        session=record.session_id, type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id
    ):
        message.metadata = {**message.metadata, **changes}
        message.save(update_fields=["metadata"])
        events.message_changed(message, created=False)


def settle(record: Clarification, status: str, reason: str, response: dict | None, *, notice: bool = True) -> None:
    """End a pending record: status, messages, the waiting icon, and (``notice``) a notice saying why.

    Inside the caller's transaction, with ``record`` locked by it.
    """
    Clarification.objects.filter(pk=record.pk).update(
        status=status, settled_reason=reason, response=response, responded_at=timezone.now()
    )
    record.refresh_from_db()
    update_messages(record, status=status, response=response, settled_reason=reason)
    workflow.question_settled(record.session)
    if notice:
        live.clarification_settled(record.session.task_id, record.pending_id, reason)


def pending_for_task(task_id: int) -> list[Clarification]:
    """The bundles the task's overlay shows: pending, in the session's current turn or left behind."""
    return list(
        Clarification.objects.filter(session__task_id=task_id, status=Status.PENDING)
        .select_related("session__agent_profile")
        .order_by("created_at", "pk")
    )
