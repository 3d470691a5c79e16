"""The precedence of the task state icon (docs/decisions/board-and-timeline.md#state-icon-precedence)."""

import pytest

from kandev_web.board.models import TaskState
from kandev_web.pages.board.state_icons import task_state_icon
from kandev_web.sessions.models import Activity, SessionState


def icon(task_state=TaskState.TODO, session_state=None, activity="", pending_action=None, on_last_step=False):
    return task_state_icon(
        task_state=task_state,
        session_state=session_state,
        activity=activity,
        pending_action=pending_action,
        on_last_step=on_last_step,
    )


def test_pending_permission_beats_everything():
    assert icon(TaskState.IN_PROGRESS, SessionState.RUNNING, Activity.GENERATING, "permission").testid == (
        "task-state-pending-permission"
    )


def test_pending_clarification_on_a_running_session_is_waiting_for_input_not_running():
    assert icon(TaskState.IN_PROGRESS, SessionState.RUNNING, Activity.GENERATING, "clarification").testid == (
        "task-state-waiting-for-input"
    )


def test_generating_then_background():
    assert icon(TaskState.REVIEW, SessionState.RUNNING, Activity.GENERATING).testid == "task-state-running"
    assert icon(TaskState.REVIEW, SessionState.RUNNING, Activity.BACKGROUND).testid == ("task-state-background-running")


def test_task_waiting_for_input_without_a_pending_action():
    assert icon(TaskState.WAITING_FOR_INPUT).testid == "task-state-waiting-for-input"


@pytest.mark.parametrize(
    ("task_state", "session_state"),
    [(TaskState.SCHEDULING, None), (TaskState.IN_PROGRESS, SessionState.STARTING)],
)
def test_preparing_is_running_with_a_loading_phase(task_state, session_state):
    result = icon(task_state, session_state)
    assert (result.testid, result.loading_phase) == ("task-state-running", "preparing")


def test_in_progress_interrupted_review_and_backlog():
    assert icon(TaskState.IN_PROGRESS, SessionState.RUNNING).testid == "task-state-running"
    assert icon(TaskState.IN_PROGRESS, SessionState.RUNNING).loading_phase == ""
    assert icon(TaskState.TODO, SessionState.FAILED).testid == "task-state-interrupted"
    assert icon(TaskState.REVIEW, SessionState.IDLE).testid == "task-state-turn-finished"
    assert icon(TaskState.REVIEW, SessionState.IDLE, on_last_step=True).testid == "task-state-workflow-complete"
    assert icon(TaskState.TODO).testid == "task-state-backlog"
