"""agentctl ends once its agent has: after telling the clients, and after a grace for one reconnecting.

Over real processes: the agentctl process and the agent process are counted
before and after (``docs/agent-stream.md#when-the-agent-exits``).
"""

from __future__ import annotations

import asyncio
import os

import psutil
import pytest

from kandev_web.agentctl.stream_client import AgentStreamClient, Conflict
from testing_support.agentctl import Inbox, open_session, text_prompt

pytestmark = pytest.mark.asyncio

GRACE = {"KANDEV_AGENTCTL_EXIT_GRACE": "2s"}


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **GRACE, **extra}


async def _exits_within(agentctl, seconds: float) -> int:
    async with asyncio.timeout(seconds):
        return await agentctl.wait()


def _agent_pids(agentctl) -> list[int]:
    return [child.pid for child in psutil.Process(agentctl.pid).children(recursive=True)]


async def test_agentctl_exits_after_its_agent_crashed_and_the_client_heard_it(
    start_agentctl, connect, scripted
) -> None:
    steps = [{"expect": "session/prompt"}, {"stderr": "fatal"}, {"exit": 3}]
    agentctl = await start_agentctl(scripted.argv(steps), env=_env())
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    [agent_pid] = _agent_pids(agentctl)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})

    assert (await inbox.next("agent.exited"))["exit_code"] == 3
    assert (await inbox.next("turn.completed"))["stop_reason"] == "error"
    # Within the grace it still answers, as before: nothing is open, nothing can be prompted.
    assert await client.request("agent.elicitations.list") == {"pending": []}
    with pytest.raises(Conflict, match="exited"):
        await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("again")})

    assert await _exits_within(agentctl, 10) == 0
    assert not psutil.pid_exists(agentctl.pid)
    assert not psutil.pid_exists(agent_pid)


async def test_a_client_connecting_during_the_grace_hears_agent_exited_first(start_agentctl, scripted) -> None:
    """The web process that was reconnecting, or one adopting the execution, learns the agent is gone."""
    steps = [{"expect": "session/prompt"}, {"exit": 4}]
    agentctl = await start_agentctl(scripted.argv(steps), env=_env(KANDEV_AGENTCTL_EXIT_GRACE="5s"))
    first = agentctl.client()
    await first.connect()
    session_id = await open_session(first)
    await first.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await first.close()  # gone while the agent dies

    late = Inbox()
    async with AgentStreamClient(agentctl.url, agentctl.token, on_notification=late) as client:
        exited = await late.next("agent.exited")
        assert exited["exit_code"] == 4
        assert late.actions()[0] == "agent.exited"
        assert await client.request("agent.permissions.list") == {"pending": []}
    assert await _exits_within(agentctl, 15) == 0


async def test_agentctl_with_no_client_at_all_still_exits_after_the_grace(start_agentctl, scripted) -> None:
    steps = [{"expect": "session/prompt"}, {"exit": 0}]
    agentctl = await start_agentctl(scripted.argv(steps), env=_env())
    async with agentctl.client() as client:
        session_id = await open_session(client)
        await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    assert await _exits_within(agentctl, 10) == 0


async def test_a_running_agent_keeps_its_agentctl(start_agentctl, connect, mock_agent) -> None:
    """Only the agent's end ends agentctl: an idle one between turns stays, beyond the grace."""
    agentctl = await start_agentctl(mock_agent, env=_env())
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
    await inbox.next("turn.completed")
    with pytest.raises(TimeoutError):
        await _exits_within(agentctl, 4)
    assert await client.request("agent.elicitations.list") == {"pending": []}
