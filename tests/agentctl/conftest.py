"""Fixtures that run a real kandev-agentctl process and connect to it over a real socket."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox

MOCK_AGENT = [str(Path(sys.executable).parent / "kandev-mock-agent")]
SCRIPTED_AGENT = Path(__file__).with_name("scripted_agent.py")

Start = Callable[..., Awaitable[AgentctlProcess]]
Connect = Callable[..., Awaitable[tuple[AgentStreamClient, Inbox]]]


class ScriptedAgent:
    """Writes scripts for scripted_agent.py and reads back what it received."""

    session_id = "sess-1"

    def __init__(self, directory: Path) -> None:
        self._script = directory / "script.json"
        self._record = directory / "record.jsonl"

    def argv(
        self, steps: list[dict[str, Any]], *, handshake: bool = True, capabilities: dict[str, Any] | None = None
    ) -> list[str]:
        """The agent command; with ``handshake``, initialize and session/new are answered first.

        The handshake's ``agentCapabilities`` are ``capabilities`` (default ``{}``).
        """
        if handshake:
            agent = {"protocolVersion": 1, "agentCapabilities": capabilities or {}, "agentInfo": {"name": "scripted"}}
            steps = [
                {"expect": "initialize"},
                {"reply": agent},
                {"expect": "session/new"},
                {"reply": {"sessionId": self.session_id}},
                *steps,
            ]
        self._script.write_text(json.dumps(steps))
        return [sys.executable, str(SCRIPTED_AGENT), str(self._script), str(self._record)]

    def header(self) -> dict[str, Any]:
        """``{"pid", "env"}`` of the agent process."""
        return self._lines()[0]

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        """The frames the agent read so far, optionally only those of one method."""
        return [frame for frame in self._lines()[1:] if method is None or frame.get("method") == method]

    def _lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._record.read_text().splitlines()]


@pytest.fixture
def scripted(tmp_path: Path) -> ScriptedAgent:
    return ScriptedAgent(tmp_path)


@pytest.fixture
def mock_agent() -> list[str]:
    return MOCK_AGENT


@pytest_asyncio.fixture
async def start_agentctl() -> AsyncIterator[Start]:
    """Start agentctl (by default for the mock agent); every one started is stopped afterwards."""
    started: list[AgentctlProcess] = []

    async def start(agent_argv: list[str] = MOCK_AGENT, **options: Any) -> AgentctlProcess:
        agentctl = await launch(agent_argv, **options)
        started.append(agentctl)
        return agentctl

    yield start
    for agentctl in started:
        await agentctl.stop()


@pytest_asyncio.fixture
async def connect() -> AsyncIterator[Connect]:
    """Connect a stream client whose notifications land in an Inbox."""
    clients: list[AgentStreamClient] = []

    async def open_client(agentctl: AgentctlProcess, **options: Any) -> tuple[AgentStreamClient, Inbox]:
        inbox = Inbox()
        client = agentctl.client(on_notification=inbox, **options)
        await client.connect()
        clients.append(client)
        return client, inbox

    yield open_client
    for client in clients:
        await client.close()
