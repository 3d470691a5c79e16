"""An agentctl killed with its agent: a new agentctl takes the session up again, history and all.

Over real processes: agentctl and the mock agent, which keeps its sessions in
``KANDEV_MOCK_SESSION_DIR`` as a real agent keeps them on disk, are killed
with SIGKILL; a new agentctl for the same agent resumes the session by its
ACP id (``docs/agent-stream.md#agentsessionresume-addition``).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest

from kandev_web.agentctl.launcher import AgentctlProcess
from kandev_web.agentctl.stream_client import Conflict, StreamError
from kandev_web.mock_agent.store import ENV_VAR
from testing_support.agentctl import Inbox, message_text, open_session, text_prompt
from testing_support.agents import MOCK_AGENT

pytestmark = pytest.mark.asyncio

EARLIER = "Use PostgreSQL, not SQLite"
RECALLED = f"Earlier in this session you said: “{EARLIER}”."


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, ENV_VAR: str(tmp_path / "sessions")}


async def _a_session_whose_agentctl_died(start_agentctl, connect, env: dict[str, str]) -> str:
    """Open a session, talk in it, then SIGKILL its agentctl and agent; the session's ACP id."""
    agentctl: AgentctlProcess = await start_agentctl(MOCK_AGENT, env=env)
    client, inbox = await connect(agentctl)
    session_id = await open_session(client, agent_id="mock")
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(EARLIER)})
    await inbox.next("turn.completed")
    [agent] = psutil.Process(agentctl.pid).children(recursive=True)

    os.kill(agentctl.pid, signal.SIGKILL)
    agent.kill()
    assert await agentctl.wait() == -signal.SIGKILL
    agent.wait(timeout=10)
    await client.close()
    return session_id


async def _resume(start_agentctl, connect, argv: list[str], env: dict[str, str], session_id: str) -> tuple[Any, Inbox]:
    """A new agentctl, initialized; the response to resuming ``session_id`` in it."""
    client, inbox = await connect(await start_agentctl(argv, env=env))
    await client.request("agent.initialize", {"agent_id": "mock", "runtime_flags": {}})
    resumed = await client.request("agent.session.resume", {"session_id": session_id, "cwd": "/tmp"})
    return (client, resumed), inbox


async def _recall(client, inbox: Inbox, session_id: str) -> str:
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:recall")})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"
    return message_text(inbox, session_id)


async def test_a_new_agentctl_resumes_the_session_with_its_conversation(start_agentctl, connect, env) -> None:
    session_id = await _a_session_whose_agentctl_died(start_agentctl, connect, env)

    (client, resumed), inbox = await _resume(start_agentctl, connect, MOCK_AGENT, env, session_id)

    assert resumed == {"session_id": session_id, "mcp_transports": {}, "method": "resume"}
    assert await _recall(client, inbox, session_id) == RECALLED


async def test_an_agent_that_only_loads_replays_nothing_to_the_client(start_agentctl, connect, env) -> None:
    session_id = await _a_session_whose_agentctl_died(start_agentctl, connect, env)

    argv = [*MOCK_AGENT, "--no-session-resume"]
    (client, resumed), inbox = await _resume(start_agentctl, connect, argv, env, session_id)

    assert resumed["method"] == "load"
    assert await _recall(client, inbox, session_id) == RECALLED
    # The agent replayed the first exchange during session/load; the client heard only the recall turn.
    kinds = {note["update"]["sessionUpdate"] for note in inbox.all("session.update")}
    assert kinds == {"agent_message_chunk"}
    assert inbox.actions()[-1] == "turn.completed"


async def test_an_agent_that_advertises_neither_gets_conflict(start_agentctl, connect, env) -> None:
    session_id = await _a_session_whose_agentctl_died(start_agentctl, connect, env)
    without_sessions = {key: value for key, value in env.items() if key != ENV_VAR}

    with pytest.raises(Conflict) as refused:
        await _resume(start_agentctl, connect, MOCK_AGENT, without_sessions, session_id)
    assert str(refused.value) == "the agent cannot resume a session"


async def test_a_session_the_agent_does_not_know_comes_back_as_its_refusal(start_agentctl, connect, env) -> None:
    with pytest.raises(StreamError) as refused:
        await _resume(start_agentctl, connect, MOCK_AGENT, env, "mock-000000000000")
    assert refused.value.code == "INTERNAL_ERROR"
    assert str(refused.value) == "the agent refused session/resume: Session not found"
    assert refused.value.details["error"] == {
        "code": -32002,
        "message": "Session not found",
        "data": {"sessionId": "mock-000000000000"},
    }
