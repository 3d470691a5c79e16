"""Run the mock agent behind a real kandev-agentctl and watch the stream."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox, open_session

MOCK_AGENT = [str(Path(sys.executable).parent / "kandev-mock-agent")]


class MockSession:
    """One mock-agent session behind agentctl, with everything it streamed."""

    def __init__(self, client: AgentStreamClient, inbox: Inbox, session_id: str) -> None:
        self.client = client
        self.inbox = inbox
        self.session_id = session_id

    async def prompt(self, text: str) -> str:
        """Send a text prompt; return the turn id."""
        payload = {"session_id": self.session_id, "prompt": [{"type": "text", "text": text}]}
        return (await self.client.request("agent.prompt", payload))["turn_id"]

    def updates(self, kind: str | None = None) -> list[dict]:
        """The ACP updates streamed so far, optionally of one ``sessionUpdate`` kind."""
        updates = [note["update"] for note in self.inbox.all("session.update")]
        return [update for update in updates if kind is None or update["sessionUpdate"] == kind]


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
