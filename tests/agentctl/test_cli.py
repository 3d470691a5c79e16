"""The agentctl process: its ready line, its refusals to start, and how it stops."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys

import pytest

from kandev_web.agentctl.launcher import agentctl_command
from kandev_web.agentctl.stream_client import AgentStreamNotConnected
from testing_support.agentctl import open_session, text_prompt

READY_LINE = re.compile(
    r'\{"event": "ready", "url": "ws://127\.0\.0\.1:(\d+)/agent/stream", "pid": (\d+), "cwd": "[^"]+"\}\n'
)


def _run_agentctl(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("KANDEV_")}
    return subprocess.run(
        [*agentctl_command(), *args], env={**environ, **env}, capture_output=True, text=True, timeout=10
    )


def test_missing_token_exits_2_with_a_message() -> None:
    finished = _run_agentctl(["--", sys.executable, "-c", "pass"])
    assert finished.returncode == 2
    assert "KANDEV_AGENTCTL_TOKEN" in finished.stderr
    assert finished.stdout == ""


def test_empty_token_counts_as_missing() -> None:
    finished = _run_agentctl(["--", sys.executable, "-c", "pass"], KANDEV_AGENTCTL_TOKEN="")
    assert finished.returncode == 2
    assert "KANDEV_AGENTCTL_TOKEN" in finished.stderr


def test_an_agent_command_is_required() -> None:
    finished = _run_agentctl([], KANDEV_AGENTCTL_TOKEN="t")
    assert finished.returncode == 2
    assert "agent command" in finished.stderr


def test_F13a_refuses_to_start_when_the_answer_timeout_is_not_shorter() -> None:
    finished = _run_agentctl(
        ["--", sys.executable, "-c", "pass"],
        KANDEV_AGENTCTL_TOKEN="t",
        KANDEV_ELICITATION_ANSWER_TIMEOUT="1h",
        KANDEV_ACP_IDLE_TIMEOUT="60m",
    )
    assert finished.returncode == 2
    assert "KANDEV_ELICITATION_ANSWER_TIMEOUT (1h) must be shorter than KANDEV_ACP_IDLE_TIMEOUT (1h)" in finished.stderr
    assert finished.stdout == ""


def test_a_bad_duration_refuses_to_start() -> None:
    finished = _run_agentctl(
        ["--", sys.executable, "-c", "pass"], KANDEV_AGENTCTL_TOKEN="t", KANDEV_ACP_IDLE_TIMEOUT="1d"
    )
    assert finished.returncode == 2
    assert "KANDEV_ACP_IDLE_TIMEOUT: '1d' is not a duration" in finished.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("KANDEV_AGENTCTL_UNHELD_TIMEOUT", "0", "KANDEV_AGENTCTL_UNHELD_TIMEOUT: '0' is not a usable timeout"),
        ("KANDEV_AGENTCTL_REPLAY_BYTES", "8mb", "KANDEV_AGENTCTL_REPLAY_BYTES: '8mb' is not a size"),
        ("KANDEV_AGENTCTL_REPLAY_BYTES", "0", "KANDEV_AGENTCTL_REPLAY_BYTES: '0' is not a usable size"),
    ],
)
def test_a_bad_unheld_timeout_or_replay_bound_refuses_to_start(name: str, value: str, message: str) -> None:
    finished = _run_agentctl(["--", sys.executable, "-c", "pass"], KANDEV_AGENTCTL_TOKEN="t", **{name: value})
    assert finished.returncode == 2
    assert message in finished.stderr
    assert finished.stdout == ""


@pytest.mark.asyncio
async def test_prints_exactly_the_ready_line_and_nothing_else_on_stdout(mock_agent: list[str]) -> None:
    process = await asyncio.create_subprocess_exec(
        *agentctl_command(),
        "--",
        *mock_agent,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "KANDEV_AGENTCTL_TOKEN": "secret-token"},
    )
    assert process.stdout
    line = (await asyncio.wait_for(process.stdout.readline(), 10)).decode()
    ready = READY_LINE.fullmatch(line)
    assert ready, line
    assert int(ready[2]) == process.pid
    assert json.loads(line)["url"] == f"ws://127.0.0.1:{ready[1]}/agent/stream"

    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 10) == 0
    assert await process.stdout.read() == b""


@pytest.mark.asyncio
async def test_agent_shutdown_answers_then_exits_cleanly(start_agentctl, connect) -> None:
    agentctl = await start_agentctl()
    client, inbox = await connect(agentctl)
    await open_session(client)
    assert await client.request("agent.shutdown") == {"success": True}
    assert (await inbox.next("agent.exited"))["exit_code"] == 0
    assert await asyncio.wait_for(agentctl.process.wait(), 10) == 0


@pytest.mark.asyncio
async def test_agent_shutdown_before_initialize_exits_cleanly(start_agentctl, connect) -> None:
    agentctl = await start_agentctl()
    client, inbox = await connect(agentctl)
    assert await client.request("agent.shutdown") == {"success": True}
    assert await asyncio.wait_for(agentctl.process.wait(), 10) == 0
    assert inbox.received == []
    with pytest.raises(AgentStreamNotConnected):
        await client.request("agent.elicitations.list")


@pytest.mark.asyncio
async def test_sigterm_mid_turn_stops_the_agent_reports_it_and_exits_0(start_agentctl, connect, scripted) -> None:
    agentctl = await start_agentctl(scripted.argv([{"expect": "session/prompt"}]))
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    turn = await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("work")})

    agentctl.process.send_signal(signal.SIGTERM)
    assert (await inbox.next("agent.exited"))["exit_code"] == 0
    completed = await inbox.next("turn.completed")
    assert completed["turn_id"] == turn["turn_id"]
    assert completed["stop_reason"] == "error"
    assert await asyncio.wait_for(agentctl.process.wait(), 10) == 0
    with pytest.raises(ProcessLookupError):
        os.kill(scripted.header()["pid"], 0)


@pytest.mark.asyncio
async def test_shutdown_answers_open_permission_requests_before_stopping_the_agent(
    start_agentctl, connect, scripted
) -> None:
    permission = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": {
            "sessionId": scripted.session_id,
            "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }
    agentctl = await start_agentctl(scripted.argv([{"expect": "session/prompt"}, {"send": permission}]))
    client, inbox = await connect(agentctl)
    session_id = await open_session(client)
    await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("edit")})
    requested = await inbox.next("permission.requested")

    await client.request("agent.shutdown")
    settled = await inbox.next("permission.settled")
    assert settled == {
        "pending_id": requested["pending_id"],
        "session_id": session_id,
        "outcome": "cancelled",
        "option_id": None,
    }
    await inbox.next("agent.exited")
    assert await asyncio.wait_for(agentctl.process.wait(), 10) == 0
    answers = [frame for frame in scripted.received() if frame.get("id") == 0 and "result" in frame]
    assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}]
