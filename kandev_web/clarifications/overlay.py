"""The answer overlay as every open view of a task shows it, rendered once for all of them.

A new question is what an operator waits for, so its overlay is rendered by
the process that recorded it, right after the record is committed, and sent
to the task's pages as it is; no socket re-reads or re-renders it. That is
right for every viewer because the overlay holds nothing of any one of them:
no CSRF token (answers travel on the page's socket, which checks its own
viewer), nothing but the task's pending questions, which every viewer of the
task may see.
"""

from django.template.loader import render_to_string

from .models import Clarification, Status


def pending_for_task(task_id: int) -> list[Clarification]:
    """The bundles the task's overlay shows: pending, in the session's current turn or left behind."""
    return list(
        Clarification.objects.filter(session__task_id=task_id, status=Status.PENDING)
        .select_related("session__agent_profile")
        .order_by("created_at", "pk")
    )


def render_inbox_item(record: Clarification, task) -> str:
    """The question's item in every inbox (``inbox/inbox.html#item``), out of band: the same for every member.

    Like the overlay it holds no viewer's data, so it is rendered once, here,
    and each inbox checks only that its viewer is a member of the workspace.
    """
    profile = record.session.agent_profile
    agent = profile.name if profile is not None else ""
    item = {
        "kind": "question",
        "pending_id": record.pending_id,
        "task": task,
        "agent_name": agent,
        "asked_at": record.created_at,
        "records": [record],
    }
    return render_to_string("inbox/inbox.html#item-oob", {"item": item})


def render(task_id: int, pending: list[Clarification] | None = None) -> str:
    """The task page's composer showing the task's pending questions, out of band; ``""`` when there are none.

    ``pending`` is :func:`pending_for_task` read already, for rendering it in
    several languages. With none (the question was settled in the meantime)
    the composer is the prompt or start form, which the settle announces and
    each page renders.
    """
    if pending is None:
        pending = pending_for_task(task_id)
    if not pending:
        return ""
    return render_to_string("sessions/task.html#composer", {"clarifications": pending, "oob": True})
