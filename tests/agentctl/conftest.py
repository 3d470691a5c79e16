"""Fixtures that run a real kandev-agentctl process and connect to it over a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox
from testing_support.agents import MOCK_AGENT, ScriptedAgent

Start = Callable[..., Awaitable[AgentctlProcess]]
Connect = Callable[..., Awaitable[tuple[AgentStreamClient, Inbox]]]


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
