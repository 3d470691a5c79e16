"""Agents a test runs behind a real kandev-agentctl: the mock agent, and a scripted one that plays a JSON script.

``scripted_agent.py`` (beside this module) is the scripted agent's program;
:class:`ScriptedAgent` writes its scripts and reads back what it received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox

MOCK_AGENT = [str(Path(sys.executable).parent / "kandev-mock-agent")]
SCRIPTED_AGENT = Path(__file__).with_name("scripted_agent.py")


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
