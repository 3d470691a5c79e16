"""Each mock-agent scenario, played through a real agentctl, does what it promises.

Every update it streams is also checked against the ACP schema of the SDK.
"""

from __future__ import annotations

import pytest
from acp.schema import RequestPermissionRequest, SessionNotification

pytestmark = pytest.mark.asyncio


def _text(updates: list[dict]) -> str:
    return "".join(update["content"]["text"] for update in updates)


def _assert_valid_acp(session) -> None:
    for update in session.updates():
        SessionNotification.model_validate({"sessionId": session.session_id, "update": update})


async def test_simple_message(mock_session) -> None:
    turn_id = await mock_session.prompt("/e2e:simple-message")
    completed = await mock_session.inbox.next("turn.completed")
    assert (completed["turn_id"], completed["stop_reason"]) == (turn_id, "end_turn")
    assert _text(mock_session.updates("agent_message_chunk")) == "This is a simple message from the mock agent."
    _assert_valid_acp(mock_session)


async def test_any_other_prompt_gets_a_plausible_streamed_reply(mock_session) -> None:
    await mock_session.prompt("Please fix the login bug")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    chunks = mock_session.updates("agent_message_chunk")
    assert len(chunks) >= 5
    assert 'You said: "Please fix the login bug"' in _text(chunks)
    assert mock_session.updates("agent_thought_chunk")
    _assert_valid_acp(mock_session)


async def test_an_unknown_scenario_says_which_ones_exist(mock_session) -> None:
    await mock_session.prompt("/e2e:no-such-thing")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    text = _text(mock_session.updates("agent_message_chunk"))
    assert "There is no scenario called 'no-such-thing'" in text
    assert "permission-flow" in text


async def test_tool_calls(mock_session) -> None:
    await mock_session.prompt("/e2e:tool-calls")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    kinds = [update["sessionUpdate"] for update in mock_session.updates()]
    assert kinds[:4] == ["plan", "tool_call", "tool_call_update", "tool_call_update"]
    assert kinds.count("tool_call") == 2

    calls = {update["toolCallId"]: update for update in mock_session.updates("tool_call")}
    statuses = {call_id: [calls[call_id]["status"]] for call_id in calls}
    for update in mock_session.updates("tool_call_update"):
        statuses[update["toolCallId"]].append(update["status"])
    assert sorted(statuses.values()) == [["in_progress", "completed"], ["pending", "in_progress", "completed"]]
    assert [entry["status"] for entry in mock_session.updates("plan")[-1]["entries"]] == ["completed", "completed"]
    assert _text(mock_session.updates("agent_message_chunk")) == "I read the README and all 42 tests pass."
    _assert_valid_acp(mock_session)


async def test_rich_timeline_sends_markdown_a_diff_and_a_terminal(mock_session) -> None:
    await mock_session.prompt("/e2e:rich-timeline")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    text = _text(mock_session.updates("agent_message_chunk"))
    assert text.startswith("# Release notes\n")
    assert text.endswith("END-OF-TIMELINE")
    [edit, command] = mock_session.updates("tool_call")
    assert [item["type"] for item in edit["content"]] == ["diff"]
    assert command["content"] == [{"type": "terminal", "terminalId": command["toolCallId"]}]
    metas = [update.get("_meta", {}) for update in mock_session.updates("tool_call_update")]
    assert "3 passed" in next(meta["terminal_output"]["data"] for meta in metas[::-1] if "terminal_output" in meta)
    assert any(meta.get("terminal_exit", {}).get("exit_code") == 0 for meta in metas)
    _assert_valid_acp(mock_session)


async def test_fix_a_bug_sends_a_plan_a_diff_and_a_passing_test_run(mock_session) -> None:
    """The demo's offered counterpart of rich-timeline: the same kinds of content, as ordinary work."""
    await mock_session.prompt("/e2e:fix-a-bug")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    assert [entry["status"] for entry in mock_session.updates("plan")[-1]["entries"]] == ["completed"] * 3
    [edit, command] = mock_session.updates("tool_call")
    assert [item["type"] for item in edit["content"]] == ["diff"]
    assert command["content"] == [{"type": "terminal", "terminalId": command["toolCallId"]}]
    metas = [update.get("_meta", {}) for update in mock_session.updates("tool_call_update")]
    assert any(meta.get("terminal_exit", {}).get("exit_code") == 0 for meta in metas)
    assert _text(mock_session.updates("agent_message_chunk")).startswith("## Login accepts an expired session")
    _assert_valid_acp(mock_session)


async def test_tool_call_ids_differ_between_turns(mock_session) -> None:
    for _ in range(2):
        await mock_session.prompt("/e2e:tool-calls")
        await mock_session.inbox.next("turn.completed")
    ids = [update["toolCallId"] for update in mock_session.updates("tool_call")]
    assert len(set(ids)) == 4


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"option_id": "allow-once"}, "Permission selected; the option chosen was allow-once."),
        ({"option_id": "reject-once"}, "Permission selected; the option chosen was reject-once."),
        ({"cancelled": True}, "Permission cancelled; the option chosen was none."),
    ],
)
async def test_permission_flow_says_which_option_was_chosen(mock_session, answer: dict, said: str) -> None:
    await mock_session.prompt("/e2e:permission-flow")
    requested = await mock_session.inbox.next("permission.requested")
    RequestPermissionRequest.model_validate(
        {"sessionId": requested["session_id"], "toolCall": requested["tool_call"], "options": requested["options"]}
    )
    await mock_session.client.request("agent.permissions.respond", {"pending_id": requested["pending_id"], **answer})
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    assert _text(mock_session.updates("agent_message_chunk")) == said
    _assert_valid_acp(mock_session)


async def test_permission_flow_honours_cancel(mock_session) -> None:
    await mock_session.prompt("/e2e:permission-flow")
    await mock_session.inbox.next("permission.requested")
    await mock_session.client.request("agent.cancel", {"session_id": mock_session.session_id})
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "cancelled"
    assert mock_session.updates("agent_message_chunk") == []


async def test_long_stream_streams_until_cancelled(mock_session) -> None:
    await mock_session.prompt("/e2e:long-stream")
    await mock_session.inbox.next("session.update", lambda note: "Line 3 " in str(note["update"].get("content")))
    streamed = _text(mock_session.updates("agent_message_chunk"))
    assert streamed.startswith("Line 1 of the long stream.\nLine 2 of the long stream.\nLine 3 ")
    await mock_session.client.request("agent.cancel", {"session_id": mock_session.session_id})
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "cancelled"
    assert len(mock_session.updates("agent_message_chunk")) < 300
    # The session takes the next prompt.
    await mock_session.prompt("/e2e:simple-message")
    assert (await mock_session.inbox.next("turn.completed"))["stop_reason"] == "end_turn"


async def test_crash_exits_mid_turn(mock_session) -> None:
    turn_id = await mock_session.prompt("/e2e:crash")
    assert await mock_session.inbox.next("agent.exited") == {
        "exit_code": 3,
        "signal": None,
        "stderr_tail": "mock agent: simulating a crash",
    }
    completed = await mock_session.inbox.next("turn.completed")
    assert (completed["turn_id"], completed["stop_reason"]) == (turn_id, "error")
    assert _text(mock_session.updates("agent_message_chunk")) == "Starting the work."


async def test_sessions_are_independent(mock_session) -> None:
    other = (await mock_session.client.request("agent.session.new", {"cwd": "/tmp"}))["session_id"]
    assert other != mock_session.session_id
    await mock_session.prompt("/e2e:long-stream")
    await mock_session.client.request(
        "agent.prompt", {"session_id": other, "prompt": [{"type": "text", "text": "/e2e:simple-message"}]}
    )
    done = await mock_session.inbox.next("turn.completed")
    assert (done["session_id"], done["stop_reason"]) == (other, "end_turn")
    await mock_session.client.request("agent.cancel", {"session_id": mock_session.session_id})
    done = await mock_session.inbox.next("turn.completed")
    assert (done["session_id"], done["stop_reason"]) == (mock_session.session_id, "cancelled")
