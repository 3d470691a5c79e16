"""The one state icon a task card or task row shows.

Kandev's precedence (``docs/decisions/board-and-timeline.md#state-icon-precedence``), first match
wins. The icon is chosen from plain values so board cards, task rows and tests all agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy as _

from kandev_web.board.models import TaskState
from kandev_web.sessions.models import Activity, SessionState
from kandev_web.sessions.pending import CLARIFICATION, PERMISSION, PendingAction

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


@dataclass(frozen=True, slots=True)
class StateIcon:
    name: str
    label: StrOrPromise
    loading_phase: str = ""

    @property
    def testid(self) -> str:
        return f"task-state-{self.name}"


PENDING_PERMISSION = StateIcon("pending-permission", _("Waiting for your permission"))
WAITING_FOR_INPUT = StateIcon("waiting-for-input", _("Waiting for your answer"))
RUNNING = StateIcon("running", _("Agent working"))
PREPARING = StateIcon("running", _("Preparing the agent"), loading_phase="preparing")
BACKGROUND_RUNNING = StateIcon("background-running", _("Agent working in the background"))
INTERRUPTED = StateIcon("interrupted", _("Interrupted"))
WORKFLOW_COMPLETE = StateIcon("workflow-complete", _("Done"))
TURN_FINISHED = StateIcon("turn-finished", _("Ready for review"))
BACKLOG = StateIcon("backlog", _("Not started"))

_INTERRUPTED_SESSION_STATES = {SessionState.FAILED, SessionState.CANCELLED}


def task_state_icon(
    *,
    task_state: str,
    session_state: str | None,
    activity: str,
    pending_action: PendingAction,
    on_last_step: bool,
) -> StateIcon:
    """``session_state`` and ``activity`` are the task's primary (newest) session's."""
    if pending_action == PERMISSION:
        return PENDING_PERMISSION
    if pending_action == CLARIFICATION:
        return WAITING_FOR_INPUT
    if activity == Activity.GENERATING:
        return RUNNING
    if activity == Activity.BACKGROUND:
        return BACKGROUND_RUNNING
    if task_state == TaskState.WAITING_FOR_INPUT:
        return WAITING_FOR_INPUT
    if task_state == TaskState.SCHEDULING or session_state == SessionState.STARTING:
        return PREPARING
    if task_state == TaskState.IN_PROGRESS:
        return RUNNING
    if session_state in _INTERRUPTED_SESSION_STATES and task_state not in (
        TaskState.COMPLETED,
        TaskState.REVIEW,
    ):
        return INTERRUPTED
    if task_state == TaskState.REVIEW:
        return WORKFLOW_COMPLETE if on_last_step else TURN_FINISHED
    return BACKLOG
