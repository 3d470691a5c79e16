"""What is waiting on an operator: pending questions and permission requests, oldest first.

The inbox lists them and every page's navigation counts them. A question is
waiting while its record is pending (answered where the task page would answer
it, left-behind bundles included); a permission request while its message is
pending and its session still running, since an agent that went away took the
request with it.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from kandev_web.board.models import Task
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.sessions.models import ACTIVE_SESSION_STATES, Message, MessageType
from kandev_web.sessions.usage import over_budget_tasks

QUESTION: Final = "question"
PERMISSION: Final = "permission"


@dataclass(frozen=True)
class WaitingItem:
    """One thing an operator can answer: a question bundle (``record``) or a permission request (``message``)."""

    kind: Literal["question", "permission"]
    pending_id: str
    task: Task
    agent_name: str
    asked_at: datetime
    record: Clarification | None = None
    message: Message | None = None

    @property
    def records(self) -> list[Clarification]:
        """The question as the overlay takes it: a list of bundles (the task page shows all of a task's)."""
        return [self.record] if self.record is not None else []


def _questions(user, task_ids):
    records = Clarification.objects.for_user(user).filter(status=Status.PENDING)
    if task_ids is not None:
        records = records.filter(session__task_id__in=task_ids)
    return records.select_related("session__agent_profile", "session__task__board")


def _permissions(user, task_ids):
    messages = Message.objects.filter(
        session__task__board__workspace__members=user,
        session__state__in=ACTIVE_SESSION_STATES,
        type=MessageType.PERMISSION_REQUEST,
        metadata__status="pending",
    )
    if task_ids is not None:
        messages = messages.filter(session__task_id__in=task_ids)
    return messages.select_related("session__agent_profile", "session__task__board")


def agent_name(session) -> str:
    """The name the inbox gives the agent of ``session`` (its profile's), or ``""``."""
    return session.agent_profile.name if session.agent_profile_id else ""


def waiting_items(user, *, task_ids=None) -> list[WaitingItem]:
    """Everything waiting on ``user`` (on ``task_ids`` only, when given), oldest first."""
    items = [
        WaitingItem(QUESTION, r.pending_id, r.session.task, agent_name(r.session), r.created_at, record=r)
        for r in _questions(user, task_ids)
    ]
    items += [
        WaitingItem(
            PERMISSION, m.metadata["pending_id"], m.session.task, agent_name(m.session), m.created_at, message=m
        )
        for m in _permissions(user, task_ids)
        if m.metadata.get("pending_id")
    ]
    return sorted(items, key=lambda item: (item.asked_at, item.pending_id))


def waiting_count(user) -> int:
    """How many items :func:`waiting_items` lists, counted by the database."""
    return _questions(user, None).count() + _permissions(user, None).exclude(metadata__pending_id=None).count()


def over_budget(user) -> list[Task]:
    """The viewer's tasks whose agents spent more than the task's budget (``sessions.usage``), in one query."""
    return over_budget_tasks(Task.objects.for_user(user).select_related("board").order_by("pk"))
