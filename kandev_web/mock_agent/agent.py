"""A scripted ACP agent on stdio: what the demo, the tests and the e2e specs run.

``/e2e:<scenario>`` as the prompt plays ``scenarios/<scenario>.json``; any
other prompt plays ``scenarios/reply.json``, a plausible streamed answer.

Given a :class:`~kandev_web.mock_agent.store.SessionStore`, it keeps each
conversation there and takes sessions up again as an agent that outlived its
process does: it advertises ``sessionCapabilities.resume`` (unless told not
to) and ``loadSession``, and answers ``session/resume`` and ``session/load``
(which replays the conversation first) for a stored session.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from kandev_web.agentctl.jsonrpc import INVALID_PARAMS, JsonRpcError, JsonRpcId, JsonRpcPeer, RequestHandler
from kandev_web.mock_agent import engine, mcp_steps  # noqa: F401  (mcp_steps registers its step)
from kandev_web.mock_agent.store import Conversation, Entry, SessionStore

_SCENARIO_PROMPT = re.compile(r"\s*/e2e:(\S+)")

AGENT_INFO = {"name": "kandev-mock-agent", "title": "Kandev mock agent", "version": "1"}

#: ACP's "Resource not found", what an agent answers for a session it does not have.
RESOURCE_NOT_FOUND = -32002

_MESSAGE_KINDS = {"user": "user_message_chunk", "agent": "agent_message_chunk"}


@dataclass
class _Session:
    id: str
    mcp_servers: list[Any]
    conversation: Conversation
    cancelled: asyncio.Event | None = None  # set while a turn is open
    said: list[str] = field(default_factory=list)  # the open turn's message chunks


class MockAgent:
    """Answers ``initialize``, ``session/new``, ``session/prompt`` and ``session/cancel``.

    With a ``store``, also ``session/resume`` (advertised only with
    ``resume``) and ``session/load``.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        mcp_http: bool = True,
        store: SessionStore | None = None,
        resume: bool = True,
    ) -> None:
        self._sessions: dict[str, _Session] = {}
        self._mcp_http = mcp_http
        self._store = store
        self._resume = resume and store is not None
        requests: dict[str, RequestHandler] = {
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/prompt": self._prompt,
        }
        if store is not None:
            requests["session/load"] = self._load_session
        if self._resume:
            requests["session/resume"] = self._resume_session
        self.peer = JsonRpcPeer(
            reader, writer, requests=requests, notifications={"session/cancel": self._cancel}, label="client"
        )

    async def run(self) -> None:
        """Serve until the client closes stdin."""
        await self.peer.run()

    async def _initialize(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        capabilities: dict[str, Any] = {
            "loadSession": self._store is not None,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            # Like the Claude bridge; without it Kandev's MCP server comes over stdio.
            "mcpCapabilities": {"http": self._mcp_http, "sse": False},
        }
        if self._resume:
            capabilities["sessionCapabilities"] = {"resume": {}}
        return {"protocolVersion": 1, "agentCapabilities": capabilities, "agentInfo": AGENT_INFO, "authMethods": []}

    async def _new_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        cwd, mcp_servers = _setup(params)
        session = _Session(id=f"mock-{uuid.uuid4().hex[:12]}", mcp_servers=mcp_servers, conversation=Conversation(cwd))
        self._sessions[session.id] = session
        await self._save(session)
        return {"sessionId": session.id}

    async def _resume_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        await self._take_up(params)
        return {}

    async def _load_session(self, params: Any, request_id: JsonRpcId) -> None:
        session = await self._take_up(params)
        # As ACP says: the whole conversation, then the answer (null).
        for entry in session.conversation.history:
            update = {"sessionUpdate": _MESSAGE_KINDS[entry.role], "content": {"type": "text", "text": entry.text}}
            self.peer.notify("session/update", {"sessionId": session.id, "update": update})
        await self.peer.drain()

    async def _take_up(self, params: Any) -> _Session:
        """The stored session ``params`` name, now one of this process's, in its new ``cwd``."""
        assert self._store is not None  # only registered with a store
        cwd, mcp_servers = _setup(params)
        session_id = _session_id(params)
        conversation = await asyncio.to_thread(self._store.load, session_id)
        if conversation is None:
            raise JsonRpcError(RESOURCE_NOT_FOUND, "Session not found", {"sessionId": session_id})
        conversation.cwd = cwd
        session = _Session(id=session_id, mcp_servers=mcp_servers, conversation=conversation)
        self._sessions[session_id] = session
        return session

    async def _prompt(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        session = self._session(params)
        if session.cancelled is not None:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "a prompt is already running"})
        text = _prompt_text(params.get("prompt"))
        said_before = session.conversation.said_by("user")
        session.conversation.history.append(Entry("user", text))
        await self._save(session)
        turn = engine.Turn(
            peer=self.peer,
            session_id=session.id,
            cancelled=asyncio.Event(),
            cwd=session.conversation.cwd,
            variables={
                "session_id": session.id,
                "prompt": text,
                "said_before": ", ".join(f"“{each}”" for each in said_before) or "nothing",
                "args": _SCENARIO_PROMPT.sub("", text, count=1).split() if _SCENARIO_PROMPT.match(text) else [],
                "turn": uuid.uuid4().hex[:8],
                "mcp_servers": session.mcp_servers,
            },
            on_update=lambda update: _keep_message(session, update),
        )
        session.cancelled = turn.cancelled
        try:
            stop_reason = await engine.play(turn, _steps_for(text))
            # Kept before the answer: a client that saw the turn end can resume it whole.
            session.conversation.history.append(Entry("agent", "".join(session.said)))
            await self._save(session)
            return {"stopReason": stop_reason}
        finally:
            session.cancelled = None
            session.said = []

    async def _save(self, session: _Session) -> None:
        if self._store is not None:
            # In a thread: the agent's loop keeps answering the client while the disk works.
            await asyncio.to_thread(self._store.save, session.id, session.conversation)

    def _cancel(self, params: Any) -> None:
        session = self._sessions.get(_session_id(params))
        if session is not None and session.cancelled is not None:
            session.cancelled.set()

    def _session(self, params: Any) -> _Session:
        session = self._sessions.get(_session_id(params))
        if session is None:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "unknown sessionId"})
        return session


def _setup(params: Any) -> tuple[str, list[Any]]:
    """``cwd`` and ``mcpServers``, as ``session/new``, ``session/resume`` and ``session/load`` carry them."""
    cwd = params.get("cwd") if isinstance(params, dict) else None
    if not isinstance(cwd, str):
        raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "cwd must be a string"})
    mcp_servers = params.get("mcpServers")
    return cwd, mcp_servers if isinstance(mcp_servers, list) else []


def _keep_message(session: _Session, update: dict[str, Any]) -> None:
    content = update.get("content")
    if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
        session.said.append(str(content.get("text", "")))


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
