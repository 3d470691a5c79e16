"""The task/session lifecycle: where each transition leaves task and session, and what open pages are told.

Transitions are driven through the code that makes them happen (agentctl's
notifications, an operator's actions, the question paths) wherever it can run
without an agent; the announcements are read from the channel layer, as the
board and task consumers receive them.
"""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from kandev_web import live
from kandev_web.board.models import TaskState
from kandev_web.clarifications import actions, elicitations
from kandev_web.clarifications import services as clarifications
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions import events, tasks, workflow
from kandev_web.sessions import services as sessions
from kandev_web.sessions.models import Activity, AgentExecution, SessionState, TaskSession

QUESTIONS = parse_bundle(
    [
        {
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
)
ELICITATION = {
    "pending_id": "7d3c9a52-0000-4000-8000-00000000000a",
    "questions": [{"id": "colour", "prompt": "Pick a colour", "options": [{"id": "red"}, {"id": "blue"}]}],
}


@pytest.fixture
def steps(board):
    return {str(step.name): step for step in board.steps.all()}


@pytest.fixture
def fill(make_task):
    """Put three tasks in a column, so a task arriving there has somewhere to go after them."""

    def fill(step):
        return [make_task(f"{step.name} {i}", step=step, position=i) for i in range(3)]

    return fill


@pytest.fixture
def session(make_task, make_session, steps, operator):
    task = make_task("Agent at work", step=steps["In Progress"], state=TaskState.IN_PROGRESS)
    return make_session(task, activity=Activity.GENERATING)


@pytest.fixture
def pages(django_capture_on_commit_callbacks):
    """Run a change and commit it, with a board page and a task page of ``task`` listening.

    ``with pages(task) as told:`` then ``told.board("board.changed")`` is the
    first such event the board page received.
    """
    layer = get_channel_layer()
    joined = []

    class Told:
        def __init__(self, task):
            self.channels = {"board": async_to_sync(layer.new_channel)(), "task": async_to_sync(layer.new_channel)()}
            for page, group in (("board", live.board_group(task.board_id)), ("task", live.task_group(task.pk))):
                async_to_sync(layer.group_add)(group, self.channels[page])
                joined.append((group, self.channels[page]))
            self.capture = django_capture_on_commit_callbacks(execute=True)

        def __enter__(self):
            self.capture.__enter__()
            return self

        def __exit__(self, *exc):
            return self.capture.__exit__(*exc)

        def _first(self, page, type_):
            async def receive():
                # Everything was sent before this runs; the timeout only turns "never sent" into a failure.
                async with asyncio.timeout(5):
                    while (event := await layer.receive(self.channels[page]))["type"] != type_:
                        pass
                    return event

            return async_to_sync(receive)()

        def board(self, type_="board.changed"):
            return self._first("board", type_)

        def task(self, type_="task.changed"):
            return self._first("task", type_)

    yield Told
    for group, channel in joined:
        async_to_sync(layer.group_discard)(group, channel)


def column(step) -> list[str]:
    return [task.title for task in step.tasks.order_by("position", "pk")]


def refreshed(session):
    session.refresh_from_db()
    session.task.refresh_from_db()
    return session, session.task


# --- Started, prompted, turn finished ------------------------------------------------------------


def test_starting_an_agent_puts_the_task_at_the_end_of_the_start_step(make_task, steps, fill, make_profile, operator):
    task = make_task("Backlog item", step=steps["Backlog"])
    fill(steps["In Progress"])
    profile = make_profile()

    session = sessions.start_session(task, profile, "Go", mcp_url="http://127.0.0.1/mcp/")

    session, task = refreshed(session)
    assert (session.state, session.activity) == (SessionState.STARTING, Activity.GENERATING)
    assert (task.state, task.step) == (TaskState.IN_PROGRESS, steps["In Progress"])
    assert column(steps["In Progress"]) == ["In Progress 0", "In Progress 1", "In Progress 2", "Backlog item"]


def test_a_finished_turn_puts_the_task_at_the_end_of_review_and_tells_both_columns(session, steps, fill, pages):
    fill(steps["Review"])
    with pages(session.task) as told:
        events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    session, task = refreshed(session)
    assert (session.state, session.activity) == (SessionState.WAITING_FOR_INPUT, Activity.NONE)
    assert (task.state, task.step) == (TaskState.REVIEW, steps["Review"])
    assert column(steps["Review"]) == ["Review 0", "Review 1", "Review 2", "Agent at work"]
    board_event = told.board()
    assert board_event["task_ids"] == [task.pk]
    assert board_event["step_ids"] == sorted([steps["In Progress"].pk, steps["Review"].pk])
    told.task()


def test_a_turn_finishing_after_an_operator_moved_the_task_on_leaves_it_where_they_put_it(session, steps, fill):
    fill(steps["Done"])
    tasks.move_task(session.task, steps["Done"])
    placed = session.task.position

    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})

    session, task = refreshed(session)
    assert (task.state, task.step, task.position) == (TaskState.REVIEW, steps["Done"], placed)
    assert column(steps["Done"])[-1] == "Agent at work"


def test_a_follow_up_prompt_puts_the_task_back_at_the_end_of_the_start_step(session, steps, fill, pages):
    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})
    fill(steps["In Progress"])
    session, task = refreshed(session)

    with pages(task) as told:
        workflow.prompt_sent(session)

    session, task = refreshed(session)
    assert (session.state, session.activity) == (SessionState.RUNNING, Activity.GENERATING)
    assert (task.state, task.step) == (TaskState.IN_PROGRESS, steps["In Progress"])
    assert column(steps["In Progress"]) == ["In Progress 0", "In Progress 1", "In Progress 2", "Agent at work"]
    assert told.board()["step_ids"] == sorted([steps["In Progress"].pk, steps["Review"].pk])


def test_the_agent_opening_its_acp_session_makes_it_running(session, pages):
    TaskSession.objects.filter(pk=session.pk).update(state=SessionState.STARTING)
    with pages(session.task) as told:
        events.record_acp_session(session.pk, "acp-7")

    session, _ = refreshed(session)
    assert (session.state, session.acp_session_id) == (SessionState.RUNNING, "acp-7")
    assert told.board()["step_ids"] == [session.task.step_id]


# --- Failures and exits ------------------------------------------------------------------------


def test_a_failed_start_fails_session_and_task(session, pages):
    with pages(session.task) as told:
        events.record_start_failed(session.pk, "agentctl did not start")

    session, task = refreshed(session)
    assert (session.state, session.activity, session.error) == (
        SessionState.FAILED,
        Activity.NONE,
        "agentctl did not start",
    )
    assert task.state == TaskState.FAILED
    told.task()


@pytest.mark.parametrize(
    ("session_state", "task_state", "stop_requested", "expected"),
    [
        # An agent that dies mid-turn fails its session and its task.
        (SessionState.RUNNING, TaskState.IN_PROGRESS, False, (SessionState.FAILED, TaskState.FAILED)),
        # After its turn was handed over for review, the task keeps its review.
        (SessionState.WAITING_FOR_INPUT, TaskState.REVIEW, False, (SessionState.FAILED, TaskState.REVIEW)),
        # Stopped by an operator: cancelled, no failure.
        (SessionState.WAITING_FOR_INPUT, TaskState.REVIEW, True, (SessionState.CANCELLED, TaskState.REVIEW)),
        # A failure already shown stays one when the stop follows.
        (SessionState.FAILED, TaskState.FAILED, True, (SessionState.FAILED, TaskState.FAILED)),
        # A session that had ended just stops generating.
        (SessionState.CANCELLED, TaskState.REVIEW, False, (SessionState.CANCELLED, TaskState.REVIEW)),
    ],
)
def test_the_agent_exiting(session, pages, session_state, task_state, stop_requested, expected):
    TaskSession.objects.filter(pk=session.pk).update(state=session_state)
    session.task.state = task_state
    session.task.save()
    execution = AgentExecution.objects.create(session=session, stop_requested=stop_requested)

    with pages(session.task) as told:
        events.record_agent_exited(execution.pk, {"exit_code": 1, "signal": None})

    session, task = refreshed(session)
    assert (session.state, task.state) == expected
    assert session.activity == Activity.NONE
    told.board()


# --- Waiting for an operator -------------------------------------------------------------------


def permission(pending_id="p1"):
    return {"pending_id": pending_id, "tool_call": {"title": "Edit"}, "options": [{"optionId": "ok", "name": "OK"}]}


def test_a_permission_request_waits_for_input_and_its_answer_resumes_the_turn(session, pages):
    with pages(session.task) as told:
        events.record_permission_requested(session.pk, permission())
    assert refreshed(session)[0].state == SessionState.WAITING_FOR_INPUT
    told.board()

    with pages(session.task) as told:
        events.record_permission_settled(session.pk, {"pending_id": "p1", "outcome": "selected", "option_id": "ok"})
    assert refreshed(session)[0].state == SessionState.RUNNING
    told.board()


def test_a_permission_settled_after_the_turn_ended_still_updates_the_card(session, pages):
    """The card showed the pending request; it must stop showing it even though the state stays."""
    events.record_permission_requested(session.pk, permission())
    session.turns.update(completed_at=timezone.now())

    with pages(session.task) as told:
        events.record_permission_settled(session.pk, {"pending_id": "p1", "outcome": "cancelled"})

    assert refreshed(session)[0].state == SessionState.WAITING_FOR_INPUT
    assert told.board()["task_ids"] == [session.task_id]
    told.task()


def test_a_question_from_the_kandev_tool_waits_for_input_and_puts_the_task_in_review_where_it_is(session, steps, pages):
    placed = (session.task.step, session.task.position)
    with pages(session.task) as told:
        clarifications.request_clarification(session, QUESTIONS)

    session, task = refreshed(session)
    assert session.state == SessionState.WAITING_FOR_INPUT
    assert (task.state, (task.step, task.position)) == (TaskState.REVIEW, placed)
    told.board()


def test_answering_the_kandev_tool_resumes_the_agent_and_the_task(session, pages):
    record, _ = clarifications.request_clarification(session, QUESTIONS)
    with pages(session.task) as told:
        clarifications.respond(record.pending_id, rejected=True)

    session, task = refreshed(session)
    assert (session.state, task.state) == (SessionState.RUNNING, TaskState.IN_PROGRESS)
    told.board()


def test_answering_after_the_agent_moved_on_changes_neither_session_nor_task(session, pages):
    record, _ = clarifications.request_clarification(session, QUESTIONS)
    clarifications.agent_moved_on(session.pk)
    with pages(session.task) as told:
        clarifications.respond(record.pending_id, rejected=True)

    session, task = refreshed(session)
    assert (session.state, task.state) == (SessionState.WAITING_FOR_INPUT, TaskState.REVIEW)
    told.board()


def test_an_elicitation_keeps_the_session_running_and_its_settling_updates_the_card(session, pages):
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent/stream", token="t")
    with pages(session.task) as told:
        elicitations.record_requested(execution.pk, session.pk, ELICITATION)
    session, task = refreshed(session)
    assert (session.state, task.state) == (SessionState.RUNNING, TaskState.IN_PROGRESS)
    told.board()
    # The session's badge turns to "needs your answer" though its state stays RUNNING.
    assert told.task("task.changed")["parts"] == ["details", "session"]

    with pages(session.task) as told:
        actions.do_settle_elicitation(
            {"pending_id": ELICITATION["pending_id"], "outcome": "cancelled", "reason": "turn_cancelled"}
        )
    session, task = refreshed(session)
    assert (session.state, task.state) == (SessionState.RUNNING, TaskState.IN_PROGRESS)
    told.board()
    assert told.task("clarification.settled")["reason"] == "turn_cancelled"


def test_a_lost_stream_is_shown_on_the_task_page(session, pages):
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent/stream", token="t")
    with pages(session.task) as told:
        events.record_stream_state(execution.pk, False)
    assert refreshed(session)[0].state == SessionState.RUNNING
    told.task()
