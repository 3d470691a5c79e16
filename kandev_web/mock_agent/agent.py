"""A scripted ACP agent on stdio: what the demo, the tests and the e2e specs run.

``/e2e:<scenario>`` as the prompt plays ``scenarios/<scenario>.json``; any
other prompt plays ``scenarios/reply.json``, a plausible streamed answer.

Given a :class:`~kandev_web.mock_agent.store.SessionStore`, it keeps each
conversation there and takes sessions up again as an agent that outlived its
process does: it advertises ``sessionCapabilities.resume`` (unless told not
to) and ``loadSession``, and answers ``session/resume`` and ``session/load``
(which replays the conversation first) for a stored session.

With ``session_settings`` (``--session-settings``), like the agents Zed
drives, each session offers modes (``ask``, ``code``,
``plan``; ``session/set_mode``, answered with ``current_mode_update``), slash
commands (``available_commands_update`` right after the session begins; a
prompt that starts with one is answered by name) and, to a client that
advertises ``session.configOptions.boolean``, an on/off option ``verbose``
(``session/set_config_option``, answered with ``config_option_update``). The
``session-settings`` scenario says which mode and options the session is in.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from kandev_web.agentctl.jsonrpc import (
    INVALID_PARAMS,
    JsonRpcError,
    JsonRpcId,
    JsonRpcPeer,
    PeerClosed,
    RequestHandler,
)
from kandev_web.mock_agent import engine, mcp_steps  # noqa: F401  (mcp_steps registers its step)
from kandev_web.mock_agent.store import Conversation, Entry, SessionStore

_SCENARIO_PROMPT = re.compile(r"\s*/e2e:(\S+)")

AGENT_INFO = {"name": "kandev-mock-agent", "title": "Kandev mock agent", "version": "1"}

#: ACP's "Resource not found", what an agent answers for a session it does not have.
RESOURCE_NOT_FOUND = -32002

_MESSAGE_KINDS = {"user": "user_message_chunk", "agent": "agent_message_chunk"}

#: The modes every session offers (ACP ``SessionMode``), and the one it begins in.
MODES = [
    {"id": "ask", "name": "Ask", "description": "Answer questions without changing files"},
    {"id": "code", "name": "Code", "description": "Write and change code"},
    {"id": "plan", "name": "Plan", "description": "Plan the work before changing anything"},
]
FIRST_MODE = "code"
#: The slash commands every session offers (ACP ``AvailableCommand``).
COMMANDS: list[dict[str, Any]] = [
    {"name": "review", "description": "Review the changes so far"},
    {"name": "test", "description": "Run the tests", "input": {"hint": "which tests"}},
    {"name": "summarize", "description": "Summarize the conversation"},
]
_COMMAND_PROMPT = re.compile(r"\s*/([A-Za-z0-9_-]+)(?:\s+(.*))?", re.DOTALL)
#: The boolean option offered to a client that can show one: its id, and the rest of its ACP ``SessionConfigOption``.
VERBOSE = "verbose"
_VERBOSE_OPTION = {"name": "Verbose answers", "description": "Explain every step", "type": "boolean"}


@dataclass
class _Session:
    id: str
    mcp_servers: list[Any]
    conversation: Conversation
    cancelled: asyncio.Event | None = None  # set while a turn is open
    said: list[str] = field(default_factory=list)  # the open turn's message chunks
    mode: str = FIRST_MODE
    #: Its boolean options' values, by id; empty for a client that cannot show them.
    options: dict[str, bool] = field(default_factory=dict)


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
        session_settings: bool = False,
    ) -> None:
        self._sessions: dict[str, _Session] = {}
        self._mcp_http = mcp_http
        self._store = store
        self._resume = resume and store is not None
        self._session_settings = session_settings
        self._boolean_options = False  # whether the client advertised session.configOptions.boolean
        requests: dict[str, RequestHandler] = {
            "initialize": self._initialize,
            "session/new": self._new_session,
            "session/prompt": self._prompt,
        }
        if session_settings:
            requests["session/set_mode"] = self._set_mode
            requests["session/set_config_option"] = self._set_config_option
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
        client = params.get("clientCapabilities") if isinstance(params, dict) else None
        session_capabilities = client.get("session") if isinstance(client, dict) else None
        config = session_capabilities.get("configOptions") if isinstance(session_capabilities, dict) else None
        self._boolean_options = isinstance(config, dict) and isinstance(config.get("boolean"), dict)
        return {"protocolVersion": 1, "agentCapabilities": capabilities, "agentInfo": AGENT_INFO, "authMethods": []}

    async def _new_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        cwd, mcp_servers = _setup(params)
        session = _Session(id=f"mock-{uuid.uuid4().hex[:12]}", mcp_servers=mcp_servers, conversation=Conversation(cwd))
        self._sessions[session.id] = session
        await self._save(session)
        return {"sessionId": session.id, **self._settings(session)}

    def _settings(self, session: _Session) -> dict[str, Any]:
        """What a session's setup answer says of its modes and options; its commands follow as an update."""
        if not self._session_settings:
            return {}
        if self._boolean_options and not session.options:
            session.options[VERBOSE] = False
        # Sent once the answer is written: the answer is written in the same step that returns it.
        asyncio.get_running_loop().call_soon(self._send_commands, session.id)
        answer: dict[str, Any] = {"modes": {"currentModeId": session.mode, "availableModes": MODES}}
        if session.options:
            answer["configOptions"] = _config_options(session)
        return answer

    def _send_commands(self, session_id: str) -> None:
        update = {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS}
        with contextlib.suppress(PeerClosed):
            self.peer.notify("session/update", {"sessionId": session_id, "update": update})

    async def _set_mode(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        session = self._session(params)
        mode_id = params.get("modeId")
        if mode_id not in {mode["id"] for mode in MODES}:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": f"no mode {mode_id!r}"})
        session.mode = mode_id
        update = {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
        self.peer.notify("session/update", {"sessionId": session.id, "update": update})
        return {}

    async def _set_config_option(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        session = self._session(params)
        config_id, value = params.get("configId"), params.get("value")
        if config_id not in session.options:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": f"no option {config_id!r}"})
        if params.get("type") != "boolean" or not isinstance(value, bool):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": f"{config_id} takes type boolean"})
        session.options[config_id] = value
        options = _config_options(session)
        update = {"sessionUpdate": "config_option_update", "configOptions": options}
        self.peer.notify("session/update", {"sessionId": session.id, "update": update})
        return {"configOptions": options}

    async def _resume_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        session = await self._take_up(params)
        return self._settings(session)

    async def _load_session(self, params: Any, request_id: JsonRpcId) -> dict[str, Any] | None:
        session = await self._take_up(params)
        # As ACP says: the whole conversation, then the answer (null).
        for entry in session.conversation.history:
            update = {"sessionUpdate": _MESSAGE_KINDS[entry.role], "content": {"type": "text", "text": entry.text}}
            self.peer.notify("session/update", {"sessionId": session.id, "update": update})
        await self.peer.drain()
        return self._settings(session) or None

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
                "mode": session.mode,
                "options": ", ".join(f"{key} {'on' if on else 'off'}" for key, on in session.options.items()) or "none",
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


def _config_options(session: _Session) -> list[dict[str, Any]]:
    return [{"id": key, **_VERBOSE_OPTION, "currentValue": on} for key, on in session.options.items()]


def _steps_for(text: str) -> list[engine.Step]:
    match = _SCENARIO_PROMPT.match(text)
    command = _COMMAND_PROMPT.fullmatch(text)
    if match is None and command is not None and any(each["name"] == command[1] for each in COMMANDS):
        return [{"say": f"Running the /{command[1]} command."}]
    if match is None:
        return engine.load_scenario("reply")
    try:
        return engine.load_scenario(match[1])
    except engine.ScenarioError:
        known = ", ".join(engine.scenario_names())
        return [{"say": f"There is no scenario called {match[1]!r}. Known scenarios: {known}."}]
