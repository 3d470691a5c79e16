"""A scripted ACP agent on stdio: what the demo, the tests and the e2e specs run.

``/e2e:<scenario>`` as the prompt plays ``scenarios/<scenario>.json``; any
other prompt plays ``scenarios/reply.json``, a plausible streamed answer.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass
from typing import Any

from kandev_web.agentctl.jsonrpc import INVALID_PARAMS, JsonRpcError, JsonRpcId, JsonRpcPeer
from kandev_web.mock_agent import engine, mcp_steps  # noqa: F401  (mcp_steps registers its step)

_SCENARIO_PROMPT = re.compile(r"\s*/e2e:(\S+)")

AGENT_INFO = {"name": "kandev-mock-agent", "title": "Kandev mock agent", "version": "1"}


@dataclass
class _Session:
    id: str
    cwd: str
    mcp_servers: list[Any]
    cancelled: asyncio.Event | None = None  # set while a turn is open


class MockAgent:
    """Answers ``initialize``, ``session/new``, ``session/prompt`` and ``session/cancel``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, mcp_http: bool = True) -> None:
        self._sessions: dict[str, _Session] = {}
        self._mcp_http = mcp_http
        self.peer = JsonRpcPeer(
            reader,
            writer,
            requests={
                "initialize": self._initialize,
                "session/new": self._new_session,
                "session/prompt": self._prompt,
            },
            notifications={"session/cancel": self._cancel},
            label="client",
        )

    async def run(self) -> None:
        """Serve until the client closes stdin."""
        await self.peer.run()

    async def _initialize(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": False,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
                # Like the Claude bridge; without it Kandev's MCP server comes over stdio.
                "mcpCapabilities": {"http": self._mcp_http, "sse": False},
            },
            "agentInfo": AGENT_INFO,
            "authMethods": [],
        }

    async def _new_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        cwd = params.get("cwd") if isinstance(params, dict) else None
        if not isinstance(cwd, str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "cwd must be a string"})
        mcp_servers = params.get("mcpServers")
        session = _Session(
            id=f"mock-{uuid.uuid4().hex[:12]}",
            cwd=cwd,
            mcp_servers=mcp_servers if isinstance(mcp_servers, list) else [],
        )
        self._sessions[session.id] = session
        return {"sessionId": session.id}

    async def _prompt(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        session = self._session(params)
        if session.cancelled is not None:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "a prompt is already running"})
        text = _prompt_text(params.get("prompt"))
        turn = engine.Turn(
            peer=self.peer,
            session_id=session.id,
            cancelled=asyncio.Event(),
            cwd=session.cwd,
            variables={
                "session_id": session.id,
                "prompt": text,
                "args": _SCENARIO_PROMPT.sub("", text, count=1).split() if _SCENARIO_PROMPT.match(text) else [],
                "turn": uuid.uuid4().hex[:8],
                "mcp_servers": session.mcp_servers,
            },
        )
        session.cancelled = turn.cancelled
        try:
            return {"stopReason": await engine.play(turn, _steps_for(text))}
        finally:
            session.cancelled = None

    def _cancel(self, params: Any) -> None:
        session = self._sessions.get(_session_id(params))
        if session is not None and session.cancelled is not None:
            session.cancelled.set()

    def _session(self, params: Any) -> _Session:
        session = self._sessions.get(_session_id(params))
        if session is None:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "unknown sessionId"})
        return session


def _session_id(params: Any) -> str:
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    return session_id if isinstance(session_id, str) else ""


def _prompt_text(prompt: Any) -> str:
    blocks = prompt if isinstance(prompt, list) else []
    return "".join(block.get("text", "") for block in blocks if isinstance(block, dict) and block.get("type") == "text")


def _steps_for(text: str) -> list[engine.Step]:
    match = _SCENARIO_PROMPT.match(text)
    if match is None:
        return engine.load_scenario("reply")
    try:
        return engine.load_scenario(match[1])
    except engine.ScenarioError:
        known = ", ".join(engine.scenario_names())
        return [{"say": f"There is no scenario called {match[1]!r}. Known scenarios: {known}."}]
