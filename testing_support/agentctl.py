"""Helpers for tests that drive a real agentctl (agentctl's own tests, the web app's, the benchmarks).

Tests wait for the notification they expect, never for time to pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kandev_web.agentctl.envelope import Payload
from kandev_web.agentctl.stream_client import AgentStreamClient


class Inbox:
    """Collects notifications, to be passed as a stream client's ``on_notification``."""

    def __init__(self) -> None:
        self.received: list[tuple[str, Payload]] = []
        self._taken: set[int] = set()
        self._arrived = asyncio.Event()

    def __call__(self, action: str, payload: Payload) -> None:
        self.received.append((action, payload))
        self._arrived.set()

    def all(self, action: str) -> list[Payload]:
        return [payload for name, payload in self.received if name == action]

    def actions(self) -> list[str]:
        return [name for name, _ in self.received]

    async def next(
        self, action: str, where: Callable[[Payload], bool] | None = None, *, timeout: float = 5.0
    ) -> Payload:
        """The earliest notification of ``action`` (matching ``where``) not returned before."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    for index, (name, payload) in enumerate(self.received):
                        if index not in self._taken and name == action and (where is None or where(payload)):
                            self._taken.add(index)
                            return payload
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            raise TimeoutError(f"no {action} notification within {timeout}s; received {self.actions()}") from None


def text_prompt(text: str) -> list[Payload]:
    """A prompt of one text block."""
    return [{"type": "text", "text": text}]


def message_text(inbox: Inbox, session_id: str) -> str:
    """The agent's message chunks received so far in this session, joined."""
    return "".join(
        note["update"]["content"]["text"]
        for note in inbox.all("session.update")
        if note["session_id"] == session_id and note["update"].get("sessionUpdate") == "agent_message_chunk"
    )


async def open_session(
    client: AgentStreamClient,
    *,
    agent_id: str = "claude-acp",
    elicitation: bool = False,
    cwd: str = "/tmp",
    url: bool | None = None,
    http_loopback: bool | None = None,
) -> str:
    """Initialize the agent and create one session; return the session id.

    ``url`` and ``http_loopback`` are sent only when given, so that every other
    test's ``agent.initialize`` stays the one the web app always sent.
    """
    initialize: dict = {"agent_id": agent_id, "runtime_flags": {"features.acpElicitation": elicitation}}
    if url is not None:
        initialize["runtime_flags"]["features.acpUrlElicitation"] = url
    if http_loopback is not None:
        initialize["url_http_loopback"] = http_loopback
    await client.request("agent.initialize", initialize)
    session = await client.request("agent.session.new", {"cwd": cwd, "mcp_servers": []})
    return str(session["session_id"])
