"""Where a task stands and what its agent session is doing: the one writer of both.

A task's state, step and position and a session's lifecycle state change only
through the named transitions here, so Kandev's simple workflow (start step
while an agent works, the step after it once a turn is done) is read in one
place, a task that changes column always lands at its end, and every change is
announced the same way: the task's pages and its card on every board, through
:mod:`kandev_web.live`, after commit.

Transitions are synchronous and open no transaction of their own: the caller
holds one (usually with the session row locked) and writes its timeline
messages in it, so state, messages and announcements commit or roll back
together.
"""

from collections.abc import Iterable
from itertools import pairwise

from django.db.models import Max

from kandev_web import live
from kandev_web.board.models import Step, Task, TaskState
from kandev_web.sessions.models import ACTIVE_SESSION_STATES, Activity, SessionState, TaskSession

#: A session in one of these states will not run again; its agent is gone or going.
ENDED_SESSION_STATES = (SessionState.FAILED, SessionState.CANCELLED, SessionState.COMPLETED)


def end_of_column(step: Step) -> int:
    """The position that puts a task last in ``step``'s column."""
    highest = step.tasks.aggregate(highest=Max("position"))["highest"]
    return 0 if highest is None else highest + 1


def has_ended(session: TaskSession) -> bool:
    return session.state in ENDED_SESSION_STATES


def _start_step(task: Task) -> Step | None:
    return task.board.steps.filter(is_start=True).first()


def _review_step(task: Task) -> Step | None:
    """The step after the start step, when the task is on the start step (else ``None``: it stays)."""
    steps = list(task.board.steps.all())
    for step, after in pairwise(steps):
        if step.is_start and task.step_id == step.pk:
            return after
    return None


def _set_task(task: Task, state: str, step: Step | None = None) -> int:
    """Give ``task`` its new state, and the end of ``step``'s column if it changes column; return its old step."""
    old_step_id = task.step_id
    task.state = state
    fields = ["state", "updated_at"]
    if step is not None and step.pk != task.step_id:
        task.step, task.position = step, end_of_column(step)
        fields += ["step", "position"]
    task.save(update_fields=fields)
    return old_step_id


def _save_session(session: TaskSession, *fields: str) -> None:
    session.save(update_fields=[*fields, "updated_at"])


def _announce(task: Task, *, old_step_id: int | None = None, parts: Iterable[str] = live.TASK_PARTS) -> None:
    """The task's pages (the ``parts`` that changed), its card (icon, column, column counts) on every board,
    and what waits on its workspace's members (their inboxes and counts: any transition may settle or withdraw).
    """
    live.task_changed(task.pk, parts)
    step_ids = [task.step_id] if old_step_id is None else [old_step_id, task.step_id]
    live.board_changed(task.board_id, step_ids=step_ids, task_ids=[task.pk])
    live.waiting_changed(task.board.workspace_id, task.pk)


def _agent_works(session: TaskSession) -> None:
    """Save ``session`` (its new state set by the caller) generating, and put its task in progress.

    The task goes to the end of the start step's column when the board has a
    start step and the task is elsewhere.
    """
    session.activity = Activity.GENERATING
    _save_session(session, "state", "activity")
    task = session.task
    old_step_id = _set_task(task, TaskState.IN_PROGRESS, _start_step(task))
    _announce(task, old_step_id=old_step_id)


# --- Operators ---------------------------------------------------------------------------------


def task_moved(task: Task, step: Step) -> None:
    """An operator moved ``task`` to another column: it goes to the end, as everything moved there does."""
    old_step_id = task.step_id
    task.step, task.position = step, end_of_column(step)
    task.save(update_fields=["step", "position", "updated_at"])
    _announce(task, old_step_id=old_step_id)


def session_started(session: TaskSession) -> None:
    """An operator started an agent on the task; its agentctl is launched after commit."""
    session.state = SessionState.STARTING
    _agent_works(session)


def prompt_sent(session: TaskSession) -> None:
    """An operator's follow-up prompt opens a new turn in the same ACP session."""
    session.state = SessionState.RUNNING
    _agent_works(session)


# --- The agent ---------------------------------------------------------------------------------


def session_opened(session: TaskSession, acp_session_id: str) -> None:
    """The agent opened its ACP session: it is running, and prompts can reach it."""
    session.acp_session_id, session.state = acp_session_id, SessionState.RUNNING
    _save_session(session, "acp_session_id", "state")
    _announce(session.task)


def turn_finished(session: TaskSession) -> None:
    """A turn ended (done, cancelled or failed): the agent waits for a prompt, and its work goes to review.

    A task still in progress goes to review, and from the start step to the
    end of the step after it; one an operator moved off the start step
    meanwhile keeps its column.
    """
    if session.state in ACTIVE_SESSION_STATES:
        session.state = SessionState.WAITING_FOR_INPUT
    session.activity = Activity.NONE
    _save_session(session, "state", "activity")
    task = session.task
    old_step_id = None
    if task.state in (TaskState.IN_PROGRESS, TaskState.SCHEDULING):
        old_step_id = _set_task(task, TaskState.REVIEW, _review_step(task))
    _announce(task, old_step_id=old_step_id)


def start_failed(session: TaskSession, error: str) -> None:
    """The agent could not be started or initialised: nothing is running, so session and task failed."""
    session.state, session.activity, session.error = SessionState.FAILED, Activity.NONE, error
    _save_session(session, "state", "activity", "error")
    _set_task(session.task, TaskState.FAILED)
    _announce(session.task)


def agent_stopped(session: TaskSession) -> None:
    """The agent exited because an operator stopped it: no failure, unless one was already shown."""
    if session.state != SessionState.FAILED:
        session.state = SessionState.CANCELLED
    session.activity = Activity.NONE
    _save_session(session, "state", "activity")
    _announce(session.task)


def agent_failed(session: TaskSession, error: str, *, output: str = "") -> None:
    """The agent (or its agentctl) exited on its own while the session was live.

    ``error`` says how it ended, ``output`` is what it last wrote to stderr.
    The task fails with it, unless its work was already handed over for review
    or completed: a crash after the turn ended loses nothing.
    """
    session.state, session.activity, session.error = SessionState.FAILED, Activity.NONE, error
    session.error_output = output
    _save_session(session, "state", "activity", "error", "error_output")
    task = session.task
    if task.state not in (TaskState.COMPLETED, TaskState.REVIEW):
        _set_task(task, TaskState.FAILED)
    _announce(task)


def resume_requested(session: TaskSession) -> None:
    """An operator resumes a session whose agent died: a new agentctl is starting for it.

    Its failure is over, and until the agent has taken the ACP session up
    again no prompt can reach it, so the session is starting and has none.
    The task keeps its state and column.
    """
    session.state, session.activity, session.acp_session_id = SessionState.STARTING, Activity.NONE, ""
    session.error, session.error_output = "", ""
    _save_session(session, "state", "activity", "acp_session_id", "error", "error_output")
    _announce(session.task)


def session_resumed(session: TaskSession, acp_session_id: str) -> None:
    """The agent took its ACP session up again: it waits for a prompt, and a failed task is back in review."""
    session.acp_session_id, session.state = acp_session_id, SessionState.WAITING_FOR_INPUT
    _save_session(session, "acp_session_id", "state")
    if session.task.state == TaskState.FAILED:
        _set_task(session.task, TaskState.REVIEW)
    _announce(session.task)


def resume_failed(session: TaskSession, acp_session_id: str, error: str) -> None:
    """The session could not be resumed: it failed again, still naming its ACP session for another try."""
    session.acp_session_id = acp_session_id
    session.state, session.activity, session.error = SessionState.FAILED, Activity.NONE, error
    _save_session(session, "acp_session_id", "state", "activity", "error")
    _announce(session.task)


def agent_exited(session: TaskSession) -> None:
    """The agent of a session that had already ended went away: it is no longer doing anything."""
    session.activity = Activity.NONE
    _save_session(session, "activity")
    _announce(session.task)


def connection_changed(session: TaskSession) -> None:
    """The web process holding the agent's stream lost or regained it; the task page says so."""
    _announce(session.task)


# --- Waiting for an operator -------------------------------------------------------------------


def permission_requested(session: TaskSession) -> None:
    """The agent asks before a tool call: the turn waits for an operator."""
    session.state = SessionState.WAITING_FOR_INPUT
    _save_session(session, "state")
    _announce(session.task)


def permission_settled(session: TaskSession, *, runs_again: bool) -> None:
    """A permission request was answered or withdrawn: the turn runs again, if open and asking nothing else.

    Announced either way: the pending request was what the card's icon showed.
    """
    if runs_again and session.state == SessionState.WAITING_FOR_INPUT:
        session.state = SessionState.RUNNING
        _save_session(session, "state")
    _announce(session.task)


def question_asked(session: TaskSession) -> None:
    """The agent called ask_user_question_kandev and its tool call blocks until an answer.

    The session waits for input and the task is in review, in the column it is
    in: an operator has to act on it.
    """
    session.state = SessionState.WAITING_FOR_INPUT
    _save_session(session, "state")
    _set_task(session.task, TaskState.REVIEW)
    # The overlay itself went out first, on its own (``live.question_asked``).
    _announce(session.task, parts=("details", "session"))


def elicitation_asked(session: TaskSession) -> None:
    """The agent asked through an ACP elicitation, inside its open turn.

    The session stays running because the turn is (agentctl holds the
    request); the pending question alone turns the icon to "waiting for input"
    and the session's badge to "needs your answer".
    The overlay itself went out first, on its own (``live.question_asked``).
    """
    _announce(session.task, parts=("details", "session"))


def question_answered(session: TaskSession, *, agent_waiting: bool) -> None:
    """An operator answered an ask_user_question_kandev bundle.

    An agent still waiting on it carries on: running, the task in progress
    again. One that had moved on gets the answer as a new prompt, which is
    :func:`prompt_sent`'s business.
    """
    if agent_waiting and session.state == SessionState.WAITING_FOR_INPUT:
        session.state = SessionState.RUNNING
        _save_session(session, "state")
        _set_task(session.task, TaskState.IN_PROGRESS)
    _announce(session.task)


def question_settled(session: TaskSession) -> None:
    """A question ended without changing what the agent does (an elicitation settled, a bundle expired).

    Only the overlay and the pending-question icon change.
    """
    _announce(session.task)
