"""Run the mock agent behind a real kandev-agentctl and watch the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from testing_support.agentctl import Inbox, open_session
from testing_support.agents import MOCK_AGENT, MockSession


@pytest_asyncio.fixture
async def mock_session() -> AsyncIterator[MockSession]:
    agentctl: AgentctlProcess = await launch(MOCK_AGENT)
    inbox = Inbox()
    client = agentctl.client(on_notification=inbox)
    try:
        await client.connect()
        yield MockSession(client, inbox, await open_session(client, agent_id="mock"))
    finally:
        await client.close()
        await agentctl.stop()
