"""Which operator action a session (and a task) is waiting for.

Kandev's rules (``docs/decisions/board-and-timeline.md#pending-action``): only a session's *current turn* counts (the
newest stored turn). Within it a clarification is pending while the question
of any ``clarification_request`` is, as its ``Clarification`` row says (the
message links to it by ``pending_id``; ``agent_disconnected`` does not
matter), and a permission is pending only if the *latest*
``permission_request`` is (its message is its only record). Per session a clarification beats a permission; per
task, over its running sessions, a permission beats a clarification.

The rules are pure functions; :func:`pending_actions` reads any number of
sessions with one query.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.db.models import FilteredRelation, OuterRef, Q, QuerySet
from django.db.models.fields.json import KT

from .models import MessageType

PendingAction = Literal["clarification", "permission"] | None

CLARIFICATION: PendingAction = "clarification"
PERMISSION: PendingAction = "permission"


@dataclass(frozen=True, slots=True)
class RequestMessage:
    """The part of a request message the rules read."""

    type: str
    status: str


def session_pending_action(current_turn_requests: Iterable[RequestMessage]) -> PendingAction:
    """Pending action of one session, from its current turn's request messages in order."""
    latest_permission_status = None
    for message in current_turn_requests:
        if message.type == MessageType.CLARIFICATION_REQUEST and message.status in ("", "pending"):
            return CLARIFICATION
        if message.type == MessageType.PERMISSION_REQUEST:
            latest_permission_status = message.status
    return PERMISSION if latest_permission_status == "pending" else None


def task_pending_action(active_session_actions: Iterable[PendingAction]) -> PendingAction:
    """Pending action of a task, over the pending actions of its running sessions."""
    actions = set(active_session_actions)
    if PERMISSION in actions:
        return PERMISSION
    if CLARIFICATION in actions:
        return CLARIFICATION
    return None


def pending_actions(sessions: QuerySet) -> dict[int, PendingAction]:
    """Pending action of every session in ``sessions``, in one query.

    Sessions with nothing pending are absent from the result.
    """
    from .models import Message, current_turn_of

    rows = (
        Message.objects.filter(
            session__in=sessions.values("pk"),
            type__in=[MessageType.CLARIFICATION_REQUEST, MessageType.PERMISSION_REQUEST],
            turn=current_turn_of(OuterRef("session")),
        )
        # A question's own row, joined by the name its app gives the session's questions:
        # sessions reads it without importing the app that asks them.
        .annotate(
            question=FilteredRelation(
                "session__clarifications",
                condition=Q(session__clarifications__pending_id=KT("metadata__pending_id")),
            )
        )
        .order_by("session_id", "created_at", "pk")
        .values_list("session_id", "type", "metadata__status", "question__status")
    )
    by_session: dict[int, list[RequestMessage]] = defaultdict(list)
    for session_id, type_, message_status, question_status in rows:
        status = question_status if type_ == MessageType.CLARIFICATION_REQUEST else message_status
        by_session[session_id].append(RequestMessage(type_, status or ""))
    actions = {sid: session_pending_action(messages) for sid, messages in by_session.items()}
    return {sid: action for sid, action in actions.items() if action}
