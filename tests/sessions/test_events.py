"""How agentctl's notifications become the session's messages and states."""

import pytest

from kandev_web.board.models import TaskState
from kandev_web.sessions import events
from kandev_web.sessions.models import AgentExecution, Message, MessageType, SessionState

#: What agents report, on SQLite and again on PostgreSQL (scripts/test).
pytestmark = pytest.mark.postgres


@pytest.fixture
def session(make_task, make_session, board):
    task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
    return make_session(task)


def chunk(kind, text):
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def test_text_chunks_coalesce_until_something_else_is_said(session):
    for update in [
        chunk("agent_message_chunk", "Hel"),
        chunk("agent_message_chunk", "lo"),
        chunk("agent_thought_chunk", "hmm"),
        chunk("agent_message_chunk", "Again"),
    ]:
        events.record_session_update(session.pk, update)
    assert list(Message.objects.values_list("type", "content")) == [
        ("message", "Hello"),
        ("thinking", "hmm"),
        ("message", "Again"),
    ]


def test_tool_call_is_one_message_updated_in_place(session):
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Run pytest",
            "kind": "execute",
            "status": "pending",
        },
    )
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "3 passed"}}],
        },
    )
    [message] = Message.objects.all()
    assert message.type == MessageType.TOOL_EXECUTE
    assert (message.metadata["status"], message.metadata["output"]) == ("completed", "3 passed")


def test_plan_is_replaced_not_repeated(session):
    events.record_session_update(
        session.pk, {"sessionUpdate": "plan", "entries": [{"content": "a", "status": "pending"}]}
    )
    events.record_session_update(
        session.pk, {"sessionUpdate": "plan", "entries": [{"content": "a", "status": "completed"}]}
    )
    [plan] = Message.objects.filter(type=MessageType.AGENT_PLAN)
    assert plan.metadata["entries"][0]["status"] == "completed"


def test_unknown_updates_are_ignored(session):
    events.record_session_update(session.pk, {"sessionUpdate": "available_commands_update", "availableCommands": []})
    events.record_session_update(session.pk, {"no": "kind"})
    assert not Message.objects.exists()


def test_permission_request_waits_for_input_and_settles(session):
    events.record_permission_requested(
        session.pk, {"pending_id": "p1", "tool_call": {"title": "Edit"}, "options": [{"optionId": "ok", "name": "OK"}]}
    )
    session.refresh_from_db()
    assert session.state == SessionState.WAITING_FOR_INPUT
    message = Message.objects.get(type=MessageType.PERMISSION_REQUEST)
    assert (message.metadata["status"], message.requests_input) == ("pending", True)

    events.record_permission_settled(session.pk, {"pending_id": "p1", "outcome": "selected", "option_id": "ok"})
    session.refresh_from_db()
    message.refresh_from_db()
    assert session.state == SessionState.RUNNING
    assert (message.metadata["status"], message.metadata["option_id"]) == ("approved", "ok")


def permission(pending_id, title="Edit"):
    return {"pending_id": pending_id, "tool_call": {"title": title}, "options": [{"optionId": "ok", "name": "OK"}]}


def permission_statuses(session):
    requests = Message.objects.filter(session=session, type=MessageType.PERMISSION_REQUEST).order_by("pk")
    return [(m.metadata["pending_id"], m.metadata["status"]) for m in requests]


def test_a_permission_request_reported_again_is_shown_once(session):
    events.record_permission_requested(session.pk, permission("p1"))
    events.record_permission_requested(session.pk, permission("p1"))
    assert permission_statuses(session) == [("p1", "pending")]


def test_after_a_gap_agentctl_s_open_permission_requests_are_the_truth(session):
    """p1 was settled in the part of the stream agentctl no longer kept; p3 was asked in it."""
    events.record_permission_requested(session.pk, permission("p1"))
    events.record_permission_requested(session.pk, permission("p2"))

    events.reconcile_permissions(session.pk, [permission("p2"), permission("p3", "Run tests")])

    assert permission_statuses(session) == [("p1", "cancelled"), ("p2", "pending"), ("p3", "pending")]
    session.refresh_from_db()
    assert session.state == SessionState.WAITING_FOR_INPUT
    # What the rest of the replay then says of them is applied once, as ever.
    events.record_permission_requested(session.pk, permission("p3", "Run tests"))
    events.record_permission_settled(session.pk, {"pending_id": "p3", "outcome": "selected", "option_id": "ok"})
    assert permission_statuses(session) == [("p1", "cancelled"), ("p2", "pending"), ("p3", "approved")]


def test_turn_completed_moves_the_task_to_review(session, board):
    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "end_turn"})
    session.refresh_from_db()
    session.task.refresh_from_db()
    assert session.state == SessionState.WAITING_FOR_INPUT
    assert session.task.state == TaskState.REVIEW
    assert session.task.step.name == "Review"
    assert session.turns.get().stop_reason == "end_turn"


def test_agent_exit_without_a_stop_is_a_failure_told_once_with_what_the_agent_printed(session):
    execution = AgentExecution.objects.create(session=session)
    crash = {"exit_code": 3, "signal": None, "stderr_tail": "Traceback …\nKeyError: 'ANTHROPIC_API_KEY'"}
    events.record_agent_exited(execution.pk, crash)
    events.record_agent_exited(execution.pk, {"exit_code": 0, "signal": None}, agentctl_gone=True)
    # agentctl then reports the open turn as ended by the exit: nothing more to tell.
    error = {"code": "agent_exited", "message": "the agent exited (exit code 3) before the turn ended"}
    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "error", "error": error})
    session.refresh_from_db()
    assert session.state == SessionState.FAILED
    assert session.error == "The agent exited unexpectedly with code 3."
    assert session.error_output == "Traceback …\nKeyError: 'ANTHROPIC_API_KEY'"
    [marker] = Message.objects.filter(type=MessageType.ERROR)
    assert "code 3" not in marker.content
    assert "KeyError" not in marker.content


def test_a_signal_reads_as_one(session):
    execution = AgentExecution.objects.create(session=session)
    events.record_agent_exited(execution.pk, {"exit_code": None, "signal": "SIGKILL", "stderr_tail": ""})
    session.refresh_from_db()
    assert session.error == "The agent was killed by signal 9 (SIGKILL)."
    assert session.error_output == ""


def test_stderr_is_capped_whoever_sends_it(session):
    execution = AgentExecution.objects.create(session=session)
    flood = "\n".join(f"line {i}" for i in range(1000))
    events.record_agent_exited(execution.pk, {"exit_code": 1, "signal": None, "stderr_tail": flood})
    session.refresh_from_db()
    assert session.error_output.splitlines() == [f"line {i}" for i in range(980, 1000)]


def test_a_turn_that_ended_in_an_agent_error_still_says_so(session):
    error = {"code": -32603, "message": "Internal error"}
    events.record_turn_completed(session.pk, {"turn_id": "", "stop_reason": "error", "error": error})
    [entry] = Message.objects.filter(type=MessageType.ERROR)
    assert entry.content == "The turn ended with an error: Internal error"


def test_agent_exit_after_a_stop_is_no_failure(session):
    execution = AgentExecution.objects.create(session=session, stop_requested=True)
    events.record_agent_exited(execution.pk, {"exit_code": 0, "signal": None})
    session.refresh_from_db()
    assert session.state == SessionState.CANCELLED
    assert session.error == ""


def test_a_tool_calls_diff_and_terminal_are_kept_beside_its_text(session):
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit app.py",
            "kind": "edit",
            "content": [
                {"type": "diff", "path": "app.py", "oldText": "a = 1\n", "newText": "a = 2\n"},
                {"type": "content", "content": {"type": "text", "text": "Edited."}},
            ],
        },
    )
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "b1",
            "title": "ls",
            "kind": "execute",
            "content": [{"type": "terminal", "terminalId": "b1"}],
        },
    )
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "b1",
            "status": "completed",
            "_meta": {
                "terminal_output": {"terminal_id": "b1", "data": "README.md\n"},
                "terminal_exit": {"terminal_id": "b1", "exit_code": 0},
            },
        },
    )
    edit, command = Message.objects.order_by("pk")
    assert edit.metadata["output"] == "Edited."
    assert [line["text"] for line in edit.metadata["diffs"][0]["lines"][1:]] == ["a = 1", "a = 2"]
    [terminal] = command.metadata["terminals"]
    assert (terminal["output"], terminal["exited"], terminal["exit_code"]) == ("README.md\n", True, 0)


@pytest.mark.parametrize(("option_id", "status"), [("allow", "in_progress"), ("reject", "failed"), (None, "failed")])
def test_answering_its_permission_moves_a_pending_tool_call_on(session, option_id, status):
    events.record_session_update(
        session.pk,
        {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit", "kind": "edit", "status": "pending"},
    )
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "kind": "reject_once"},
    ]
    events.record_permission_requested(
        session.pk, {"pending_id": "p1", "tool_call": {"toolCallId": "e1", "title": "Edit"}, "options": options}
    )
    outcome = {"outcome": "selected", "option_id": option_id} if option_id else {"outcome": "cancelled"}
    events.record_permission_settled(session.pk, {"pending_id": "p1", **outcome})
    tool = Message.objects.get(type=MessageType.TOOL_EDIT)
    assert tool.metadata["status"] == status
    # What the agent reports later is the agent's word.
    events.record_session_update(
        session.pk, {"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}
    )
    tool.refresh_from_db()
    assert tool.metadata["status"] == "completed"
