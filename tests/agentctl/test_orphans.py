"""An agentctl that no client holds ends: its turns cancelled, its agent stopped, itself gone.

Over real processes, with ``KANDEV_AGENTCTL_UNHELD_TIMEOUT`` short
(``docs/agent-stream.md#orphans``): a web process that died and was never
replaced must not leave its agents running for ever.
"""

from __future__ import annotations

import asyncio
import os

import psutil
import pytest

from testing_support.agentctl import open_session, text_prompt

pytestmark = pytest.mark.asyncio

UNHELD = "2s"
OPTIONS = [{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"}]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "KANDEV_AGENTCTL_UNHELD_TIMEOUT": UNHELD, **extra}


async def _exits_within(agentctl, seconds: float) -> int:
    async with asyncio.timeout(seconds):
        return await agentctl.wait()


def _agent_pids(agentctl) -> list[int]:
    return [child.pid for child in psutil.Process(agentctl.pid).children(recursive=True)]


async def test_an_agentctl_nobody_ever_connects_to_exits_saying_why(start_agentctl, capfd) -> None:
    agentctl = await start_agentctl(env=_env())
    assert await _exits_within(agentctl, 15) == 0
    assert "no client has connected for 2s; cancelling open turns, stopping the agent and exiting" in (
        capfd.readouterr().err
    )


async def test_a_connected_client_keeps_it_and_the_clock_starts_again_when_the_last_one_leaves(
    start_agentctl, connect, mock_agent
) -> None:
    agentctl = await start_agentctl(mock_agent, env=_env())
    client, _ = await connect(agentctl)
    session_id = await open_session(client)
    [agent_pid] = _agent_pids(agentctl)
    other, inbox = await connect(agentctl)
    with pytest.raises(TimeoutError):
        await _exits_within(agentctl, 3)

    await client.close()  # one client still holds it
    with pytest.raises(TimeoutError):
        await _exits_within(agentctl, 3)
    await other.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("still here?")})
    assert (await inbox.next("turn.completed"))["stop_reason"] == "end_turn"

    loop = asyncio.get_running_loop()
    await other.close()
    left = loop.time()
    assert await _exits_within(agentctl, 15) == 0
    # Counted from when the last client left, not from any earlier moment.
    assert loop.time() - left >= 1.5
    assert not psutil.pid_exists(agent_pid)


async def test_an_orphan_cancels_its_open_turn_and_settles_what_the_agent_waits_for_before_stopping_it(
    start_agentctl, connect, scripted, capfd
) -> None:
    permission = {
        "jsonrpc": "2.0",
        "id": "perm-1",
        "method": "session/request_permission",
        "params": {"sessionId": scripted.session_id, "toolCall": {"toolCallId": "t"}, "options": OPTIONS},
    }
    steps = [
        {"expect": "session/prompt"},
        {"send": permission},
        {"expect": "session/cancel"},
        {"expect_response": "perm-1"},
        {"reply": {"stopReason": "cancelled"}},
    ]
    agentctl = await start_agentctl(scripted.argv(steps), env=_env())
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    [agent_pid] = _agent_pids(agentctl)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("go")})
    await inbox.next("permission.requested")
    await client.close()  # the web process dies; nobody takes over

    assert await _exits_within(agentctl, 15) == 0
    assert not psutil.pid_exists(agent_pid)
    [cancel] = scripted.received("session/cancel")
    assert cancel["params"] == {"sessionId": scripted.session_id}
    [answer] = [frame for frame in scripted.received() if frame.get("id") == "perm-1"]
    assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
    log = capfd.readouterr().err
    assert "no client has connected for 2s" in log
    assert agentctl.token not in log
