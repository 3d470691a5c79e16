"""What each agent-stream action does, and the state they share.

One controller per agentctl process: at most one agent, spawned lazily by
``agent.initialize``; the ACP sessions created or resumed through it; at most
one open turn per session. Requests come in from any connected client;
notifications go out through ``emit`` to all of them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kandev_web.agentctl import auth, mcp_transport
from kandev_web.agentctl.acp_client import AcpClient, AgentStartError, ExitStatus
from kandev_web.agentctl.capabilities import (
    BOOLEAN_CONFIG_OPTIONS_FLAG,
    ELICITATION_FLAG,
    URL_ELICITATION_FLAG,
    boolean_config_options_enabled,
    client_capabilities,
    elicitation_enabled,
    resume_method,
    url_elicitation_enabled,
)
from kandev_web.agentctl.durations import Timeouts
from kandev_web.agentctl.elicitations import ElicitationHandler
from kandev_web.agentctl.envelope import ActionError, Emit, ErrorCode, Frame, Payload
from kandev_web.agentctl.jsonrpc import JsonRpcError, PeerClosed
from kandev_web.agentctl.permissions import PermissionBroker
from kandev_web.agentctl.scrub import Scrubber

logger = logging.getLogger(__name__)

Handler = Callable[[Payload], Awaitable[Payload]]

#: Actions that make sense before ``agent.initialize``.
_WITHOUT_AGENT = frozenset({"agent.initialize", "agent.shutdown"})


@dataclass(frozen=True)
class _SessionSetup:
    """What ``agent.session.new`` and ``agent.session.resume`` share, checked and as the agent gets it."""

    cwd: str
    mcp_servers: list[Any]  # as the agent can use them (mcp_transport.servers_for_agent)
    auth_method: auth.AuthMethod | None
    #: The model gateway the ``gateway`` sign-in names: ``(base_url, provider_name)``.
    gateway: tuple[str, str] | None = None
    #: ACP session config options set right after the session is created or taken up.
    config_options: tuple[tuple[str, str], ...] = ()


#: How long a mode or option id may be in ``agent.session.set_mode`` / ``set_config_option``.
_SETTING_ID_CHARS = 200


class Controller:
    """Answers agent-stream requests for one agent execution."""

    def __init__(
        self,
        *,
        agent_argv: Sequence[str],
        agent_env: Mapping[str, str],
        timeouts: Timeouts,
        emit: Emit,
        request_shutdown: Callable[[], None],
        scrubber: Scrubber | None = None,
    ) -> None:
        self._agent_argv = list(agent_argv)
        self._scrubber = scrubber or Scrubber(())
        self._agent_env = dict(agent_env)
        self._timeouts = timeouts
        self._emit = emit
        self._request_shutdown = request_shutdown

        self._initialize_called = False
        self._ready = False  # agent.initialize has succeeded
        self._agent: AcpClient | None = None
        self._exited = False
        self._watching: asyncio.Task[None] | None = None
        self._permissions = PermissionBroker(emit)
        self._elicitations: ElicitationHandler | None = None
        self._sessions: set[str] = set()
        self._turns: dict[str, str] = {}  # session id -> open turn id
        self._turn_tasks: set[asyncio.Task[None]] = set()
        # What the agent's initialize answer said, for sign-in and MCP transports.
        self._agent_name = "The agent"
        self._auth_methods: list[auth.AuthMethod] = []
        self._authenticated: auth.AuthMethod | None = None
        self._mcp_http = False
        self._agent_capabilities: Any = None

        self._handlers: dict[str, Handler] = {
            "agent.initialize": self._initialize,
            "agent.session.new": self._new_session,
            "agent.session.resume": self._resume_session,
            "agent.session.set_mode": self._set_mode,
            "agent.session.set_config_option": self._set_config_option,
            "agent.prompt": self._prompt,
            "agent.cancel": self._cancel,
            "agent.permissions.respond": self._respond_permission,
            "agent.permissions.list": self._list_permissions,
            "agent.elicitations.respond": self._respond_elicitation,
            "agent.elicitations.list": self._list_elicitations,
            "agent.shutdown": self._shutdown,
        }

    async def handle(self, frame: Frame) -> Payload:
        """Run one request; raise ``ActionError`` for the requester to hear about."""
        handler = self._handlers.get(frame.action)
        if handler is None:
            raise ActionError(ErrorCode.UNKNOWN_ACTION, f"unknown action {frame.action!r}")
        if frame.action not in _WITHOUT_AGENT and not self._ready:
            raise ActionError(ErrorCode.CONFLICT, "the agent is not initialized; agent.initialize must succeed first")
        return await handler(frame.payload)

    async def cancel_turns(self, timeout: float = 2.0) -> None:
        """Cancel every open turn as ``agent.cancel`` does, and give the agent ``timeout`` seconds to end them."""
        if self._agent is None or self._exited or not self._turns:
            return
        try:
            for session_id in list(self._turns):
                self._cancel_session(self._agent, session_id)
        except PeerClosed:
            return  # it has exited: _watch ends its turns
        await self._agent.drain()
        if self._turn_tasks:
            await asyncio.wait(set(self._turn_tasks), timeout=timeout)

    async def close(self) -> None:
        """Shut down: answer what the agent still waits for, then stop it."""
        self._permissions.cancel_all()
        if self._elicitations is not None:
            self._elicitations.cancel_all("agentctl_shutdown")
        if self._agent is not None:
            await self._agent.stop()
        if self._watching is not None:
            await self._watching  # reports agent.exited and any open turn
        for task in self._turn_tasks:
            task.cancel()

    # Actions --------------------------------------------------------------

    async def _initialize(self, payload: Payload) -> Payload:
        agent_id = payload.get("agent_id")
        flags = payload.get("runtime_flags", {})
        auth_gateway = payload.get("auth_gateway", False)
        problems = []
        if not isinstance(auth_gateway, bool):
            problems.append("auth_gateway must be true or false")
        if not isinstance(agent_id, str) or not agent_id:
            problems.append("agent_id must be a non-empty string")
        if not isinstance(flags, dict):
            problems.append("runtime_flags must be an object")
        else:
            problems.extend(
                f"runtime_flags[{flag!r}] must be true or false"
                for flag in (ELICITATION_FLAG, URL_ELICITATION_FLAG, BOOLEAN_CONFIG_OPTIONS_FLAG)
                if not isinstance(flags.get(flag, False), bool)
            )
        http_loopback = payload.get("url_http_loopback", False)
        if not isinstance(http_loopback, bool):
            problems.append("url_http_loopback must be true or false")
        if problems:
            raise ActionError.invalid(problems)
        if self._initialize_called:
            raise ActionError(ErrorCode.CONFLICT, "agent.initialize was already called")
        self._initialize_called = True

        enabled = elicitation_enabled(flags)
        url_enabled = url_elicitation_enabled(flags)
        capabilities = client_capabilities(
            agent_id,
            elicitation=enabled,
            url=url_enabled,
            auth_gateway=auth_gateway is True,
            boolean_config_options=boolean_config_options_enabled(flags),
        )
        self._elicitations = ElicitationHandler(
            self._emit,
            enabled=enabled,
            answer_timeout=self._timeouts.answer,
            sessions=self._sessions,
            url_enabled=url_enabled,
            allow_http_loopback=http_loopback is True,
        )
        try:
            self._agent = await AcpClient.spawn(
                self._agent_argv,
                self._agent_env,
                on_update=self._forward_update,
                permissions=self._permissions,
                elicitations=self._elicitations,
                scrubber=self._scrubber,
            )
        except AgentStartError as error:
            raise ActionError(ErrorCode.INTERNAL_ERROR, str(error)) from None
        self._watching = asyncio.create_task(self._watch(self._agent), name="agent exit")
        result = await self._call(self._agent.initialize(capabilities), "initialize")
        self._ready = True
        agent_info = result.get("agentInfo") or {}
        if isinstance(agent_info, dict):
            name = agent_info.get("title") or agent_info.get("name")
            self._agent_name = name if isinstance(name, str) and name.strip() else self._agent_name
        self._auth_methods = auth.parse_methods(result.get("authMethods"))
        self._agent_capabilities = result.get("agentCapabilities")
        self._mcp_http = mcp_transport.speaks_http(self._agent_capabilities)
        return {
            "protocol_version": result.get("protocolVersion"),
            "agent_info": agent_info,
            "agent_capabilities": result.get("agentCapabilities") or {},
            "client_capabilities": capabilities,
            "auth_methods": [method.summary() for method in self._auth_methods],
        }

    async def _new_session(self, payload: Payload) -> Payload:
        setup = self._session_setup(payload, [])
        agent = self._live_agent()
        result = await self._signed_in(
            agent, setup, lambda: agent.new_session(setup.cwd, setup.mcp_servers), "session/new"
        )
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            raise ActionError(ErrorCode.INTERNAL_ERROR, "the agent's session/new answer has no sessionId")
        config_options = await self._apply_config_options(agent, session_id, setup)
        self._sessions.add(session_id)
        answer = {"session_id": session_id, "mcp_transports": mcp_transport.transports(setup.mcp_servers)}
        return answer | _offers(result, config_options)

    async def _resume_session(self, payload: Payload) -> Payload:
        """Take up a session an earlier agent process began, say one whose agentctl was killed."""
        session_id = payload.get("session_id")
        problems = [] if isinstance(session_id, str) and session_id else ["session_id must be a non-empty string"]
        setup = self._session_setup(payload, problems)
        assert isinstance(session_id, str)  # _session_setup raised otherwise
        method = resume_method(self._agent_capabilities)
        if method is None:
            raise ActionError(ErrorCode.CONFLICT, "the agent cannot resume a session")
        if session_id in self._sessions:
            raise ActionError(ErrorCode.CONFLICT, "that session is already open in this agentctl")
        agent = self._live_agent()
        take_up = agent.resume_session if method == "resume" else agent.load_session
        result = await self._signed_in(
            agent, setup, lambda: take_up(session_id, setup.cwd, setup.mcp_servers), f"session/{method}"
        )
        config_options = await self._apply_config_options(agent, session_id, setup)
        self._sessions.add(session_id)
        answer = {
            "session_id": session_id,
            "mcp_transports": mcp_transport.transports(setup.mcp_servers),
            "method": method,
        }
        return answer | _offers(result, config_options)

    def _session_setup(self, payload: Payload, problems: list[str]) -> _SessionSetup:
        """``cwd``, ``mcp_servers``, ``auth_method``, ``gateway`` and ``config_options`` checked.

        Raises every problem, ``problems`` first.
        """
        cwd = payload.get("cwd")
        mcp_servers = payload.get("mcp_servers", [])
        method_id = payload.get("auth_method")
        gateway = _gateway(payload.get("gateway"), problems)
        config_options = _config_options(payload.get("config_options", {}), problems)
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            problems.append("cwd must be an absolute path")
        if not isinstance(mcp_servers, list) or not all(isinstance(server, dict) for server in mcp_servers):
            problems.append("mcp_servers must be a list of ACP McpServer objects")
        chosen = None
        if method_id is not None:
            chosen = auth.find(self._auth_methods, method_id) if isinstance(method_id, str) else None
            if chosen is None:
                offered = ", ".join(method.id for method in self._auth_methods) or "none"
                problems.append(f"auth_method must be one of the agent's auth methods (it offers: {offered})")
        if problems or not isinstance(cwd, str):  # the isinstance is for the type checker
            raise ActionError.invalid(problems)
        servers = mcp_transport.servers_for_agent(
            mcp_servers, http=self._mcp_http, command=mcp_transport.stdio_command()
        )
        return _SessionSetup(
            cwd=cwd, mcp_servers=servers, auth_method=chosen, gateway=gateway, config_options=config_options
        )

    async def _apply_config_options(self, agent: AcpClient, session_id: str, setup: _SessionSetup) -> Any:
        """``session/set_config_option`` for each option the profile sets at session start, in order.

        Returns the agent's ``configOptions`` as the last answer gave them
        (each answer holds them all, as they are now); None when none was set.
        """
        latest = None
        for config_id, value in setup.config_options:
            answer = await self._call(
                agent.set_config_option(session_id, config_id, value), f"session/set_config_option {config_id}"
            )
            latest = answer.get("configOptions")
        return latest

    async def _signed_in(
        self,
        agent: AcpClient,
        setup: _SessionSetup,
        request: Callable[[], Awaitable[Any]],
        method: str,
    ) -> dict[str, Any]:
        """The agent's answer to a session request, signing in first or after its refusal as needed."""
        chosen = setup.auth_method
        # A method someone must sign in with is not attempted up front: a
        # sign-in they did on the host is the agent's to find.
        if chosen is not None and self._authenticated is None and not chosen.needs_person():
            await self._authenticate(agent, chosen, setup.gateway)
        try:
            return await self._call(request(), method)
        except ActionError as error:
            if not _says_auth_required(error):
                raise
            await self._authenticate_after_refusal(agent, chosen, error, setup.gateway)
            return await self._call(request(), method)

    async def _prompt(self, payload: Payload) -> Payload:
        session_id = self._known_session(payload)
        prompt = payload.get("prompt")
        if not isinstance(prompt, list) or not prompt or not all(isinstance(block, dict) for block in prompt):
            raise ActionError.invalid(["prompt must be a non-empty list of ACP content blocks"])
        if session_id in self._turns:
            raise ActionError(ErrorCode.CONFLICT, "a turn is already open in this session")
        agent = self._live_agent()
        try:
            answer = agent.send_prompt(session_id, prompt)
        except PeerClosed:
            raise ActionError(ErrorCode.CONFLICT, "the agent has exited") from None
        turn_id = str(uuid.uuid4())
        self._turns[session_id] = turn_id
        # No await between writing the prompt and answering with the turn id,
        # so the response always precedes the turn's turn.completed.
        task = asyncio.create_task(self._finish_turn(agent, session_id, turn_id, answer), name="turn")
        self._turn_tasks.add(task)
        task.add_done_callback(self._turn_tasks.discard)
        return {"turn_id": turn_id}

    async def _set_mode(self, payload: Payload) -> Payload:
        """ACP ``session/set_mode``: the agent works in another of the modes its session offers."""
        session_id = self._known_session(payload)
        mode_id = payload.get("mode_id")
        if not _setting_id(mode_id):
            raise ActionError.invalid([f"mode_id must be a non-empty string of at most {_SETTING_ID_CHARS} characters"])
        assert isinstance(mode_id, str)  # _setting_id said so
        await self._call(self._live_agent().set_mode(session_id, mode_id), "session/set_mode", null_ok=True)
        return {"success": True}

    async def _set_config_option(self, payload: Payload) -> Payload:
        """ACP ``session/set_config_option`` with a boolean or a select's value; the options as they now are."""
        session_id = self._known_session(payload)
        config_id = payload.get("config_id")
        value = payload.get("value")
        problems = []
        if not _setting_id(config_id):
            problems.append(f"config_id must be a non-empty string of at most {_SETTING_ID_CHARS} characters")
        if not (isinstance(value, bool) or _setting_id(value)):
            problems.append("value must be true, false or a non-empty string (a select's value id)")
        if problems or not isinstance(config_id, str) or not isinstance(value, (bool, str)):
            raise ActionError.invalid(problems)
        answer = await self._call(
            self._live_agent().set_config_option(session_id, config_id, value), f"session/set_config_option {config_id}"
        )
        return {"config_options": answer.get("configOptions")}

    async def _cancel(self, payload: Payload) -> Payload:
        session_id = self._known_session(payload)
        agent = self._live_agent()
        try:
            self._cancel_session(agent, session_id)
        except PeerClosed:
            raise ActionError(ErrorCode.CONFLICT, "the agent has exited") from None
        await agent.drain()
        return {"success": True}

    async def _respond_permission(self, payload: Payload) -> Payload:
        pending_id = payload.get("pending_id")
        option_id = payload.get("option_id")
        cancelled = payload.get("cancelled", False)
        problems = []
        if not isinstance(pending_id, str):
            problems.append("pending_id must be a string")
        # Exactly one of the two answers: a chosen option, or cancelled.
        if not ((cancelled is True and option_id is None) or (cancelled is False and isinstance(option_id, str))):
            problems.append('give either "option_id" (a string) or "cancelled": true')
        if problems or not isinstance(pending_id, str):  # the isinstance is for the type checker
            raise ActionError.invalid(problems)
        self._permissions.respond(pending_id, option_id)
        return {"success": True}

    async def _list_permissions(self, payload: Payload) -> Payload:
        return {"pending": self._permissions.list()}

    async def _respond_elicitation(self, payload: Payload) -> Payload:
        return await self._require_elicitations().respond(payload)

    async def _list_elicitations(self, payload: Payload) -> Payload:
        return {"pending": self._require_elicitations().list()}

    async def _shutdown(self, payload: Payload) -> Payload:
        self._request_shutdown()
        return {"success": True}

    # Signing in -----------------------------------------------------------

    async def _authenticate(
        self, agent: AcpClient, method: auth.AuthMethod, gateway: tuple[str, str] | None = None
    ) -> None:
        """ACP ``authenticate`` with ``method``, or ``AUTH_REQUIRED`` saying what a person must do."""
        if method.needs_person():
            raise self._auth_error(
                auth.person_sentence(self._agent_name, method, host=socket.gethostname(), agent_argv=self._agent_argv),
                method,
            )
        missing = method.missing_variables(self._agent_env)
        if missing:
            raise self._auth_error(auth.missing_variables_sentence(self._agent_name, method, missing), method)
        meta = None
        if method.gateway:
            if gateway is None:
                raise self._auth_error(auth.gateway_missing_sentence(self._agent_name, method), method)
            headers = auth.gateway_headers(self._agent_env)
            if headers is None:
                raise self._auth_error(auth.gateway_headers_sentence(self._agent_name, method), method)
            meta = auth.gateway_meta(*gateway, headers)
        try:
            await agent.authenticate(method.id, meta)
        except JsonRpcError as error:
            raise self._auth_error(
                auth.refused_sentence(self._agent_name, method, error.message), method, error.to_object()
            ) from None
        except PeerClosed:
            raise ActionError(ErrorCode.INTERNAL_ERROR, "the agent exited before answering authenticate") from None
        self._authenticated = method
        logger.info("signed in to the agent with the auth method %r", method.id)

    async def _authenticate_after_refusal(
        self,
        agent: AcpClient,
        chosen: auth.AuthMethod | None,
        refusal: ActionError,
        gateway: tuple[str, str] | None = None,
    ) -> None:
        """A session request was refused "Authentication required": sign in once if that can be done unattended."""
        agent_error = refusal.details.get("error")
        if self._authenticated is not None:
            raise self._auth_error(
                auth.refused_sentence(self._agent_name, self._authenticated, _error_message(agent_error)),
                self._authenticated,
                agent_error,
            )
        method = chosen or auth.automatic_method(self._auth_methods, self._agent_env)
        if method is None:
            sentence = auth.unchosen_sentence(
                self._agent_name, self._auth_methods, host=socket.gethostname(), agent_argv=self._agent_argv
            )
            # All of them need a person: the sentence names the first.
            methods = self._auth_methods
            named = methods[0] if methods and all(m.needs_person() for m in methods) else None
            raise self._auth_error(sentence, named, agent_error)
        await self._authenticate(agent, method, gateway)

    def _auth_error(self, sentence: str, method: auth.AuthMethod | None, agent_error: object = None) -> ActionError:
        details: Payload = {
            "auth_method": method.summary() if method else None,
            "host": socket.gethostname(),
        }
        if isinstance(agent_error, dict):
            details["error"] = agent_error
        return ActionError(ErrorCode.AUTH_REQUIRED, sentence, details)

    # The agent's side -----------------------------------------------------

    def _forward_update(self, session_id: str, update: Any) -> None:
        self._emit("session.update", {"session_id": session_id, "update": update})

    async def _finish_turn(self, agent: AcpClient, session_id: str, turn_id: str, answer: asyncio.Future[Any]) -> None:
        await agent.drain()
        try:
            result = await answer
        except PeerClosed:
            return  # _watch reports the turn, after agent.exited
        except JsonRpcError as error:
            self._complete_turn(session_id, turn_id, "error", error=error.to_object())
            return
        stop_reason = result.get("stopReason") if isinstance(result, dict) else None
        if isinstance(stop_reason, str):
            self._complete_turn(session_id, turn_id, stop_reason)
        else:
            self._complete_turn(
                session_id, turn_id, "error", error={"message": "the agent's session/prompt answer has no stopReason"}
            )

    def _complete_turn(self, session_id: str, turn_id: str, stop_reason: str, *, error: Payload | None = None) -> None:
        if self._turns.get(session_id) != turn_id:
            return
        del self._turns[session_id]
        payload: Payload = {"session_id": session_id, "turn_id": turn_id, "stop_reason": stop_reason}
        if error is not None:
            payload["error"] = error
        self._emit("turn.completed", payload)

    async def _watch(self, agent: AcpClient) -> None:
        status = await agent.wait()
        self._exited = True
        self._permissions.cancel_all()
        if self._elicitations is not None:
            self._elicitations.cancel_all("agent_exited")
        self._emit(
            "agent.exited", {"exit_code": status.exit_code, "signal": status.signal, "stderr_tail": agent.stderr_tail}
        )
        for session_id, turn_id in list(self._turns.items()):
            self._complete_turn(session_id, turn_id, "error", error=_exit_error(status))

    # Helpers --------------------------------------------------------------

    def _cancel_session(self, agent: AcpClient, session_id: str) -> None:
        """ACP ``session/cancel``, then settle the session's pendings; ``PeerClosed`` when the agent is gone."""
        # Cancel first: an agent reading "cancelled" on its permission request
        # then already knows why.
        agent.cancel(session_id)
        self._permissions.cancel_session(session_id)
        self._require_elicitations().cancel_session(session_id)

    def _live_agent(self) -> AcpClient:
        if self._agent is None or self._exited:
            raise ActionError(ErrorCode.CONFLICT, "the agent has exited")
        return self._agent

    def _require_elicitations(self) -> ElicitationHandler:
        # handle() lets these actions through only once agent.initialize succeeded.
        assert self._elicitations is not None
        return self._elicitations

    def _known_session(self, payload: Payload) -> str:
        session_id = payload.get("session_id")
        if not isinstance(session_id, str):
            raise ActionError.invalid(["session_id must be a string"])
        if session_id not in self._sessions:
            raise ActionError(ErrorCode.NOT_FOUND, "no session of this agent has that session_id")
        return session_id

    async def _call(self, call: Awaitable[Any], method: str, *, null_ok: bool = False) -> dict[str, Any]:
        """Await one ACP request, turning the agent's failures into action errors.

        ``null_ok``: an answer of ``null`` stands for ``{}`` (ACP's empty answers, which some agents send as null).
        """
        try:
            result = await call
        except JsonRpcError as error:
            raise ActionError(
                ErrorCode.INTERNAL_ERROR, f"the agent refused {method}: {error.message}", {"error": error.to_object()}
            ) from None
        except PeerClosed:
            raise ActionError(ErrorCode.INTERNAL_ERROR, f"the agent exited before answering {method}") from None
        if result is None and null_ok:
            return {}
        if not isinstance(result, dict):
            raise ActionError(ErrorCode.INTERNAL_ERROR, f"the agent's {method} answer is not an object")
        return result


def _gateway(value: Any, problems: list[str]) -> tuple[str, str] | None:
    """``gateway: {"base_url", "provider_name"?}`` of a session request, or None when absent."""
    if value is None:
        return None
    base_url = value.get("base_url") if isinstance(value, dict) else None
    provider = value.get("provider_name", "kandev") if isinstance(value, dict) else None
    if not (isinstance(base_url, str) and base_url.startswith(("http://", "https://"))):
        problems.append("gateway.base_url must be an http or https URL")
        return None
    if not (isinstance(provider, str) and provider):
        problems.append("gateway.provider_name must be a non-empty string")
        return None
    return base_url, provider


def _config_options(value: Any, problems: list[str]) -> tuple[tuple[str, str], ...]:
    """``config_options: {config id: value}`` (strings), in the order given."""
    if not (isinstance(value, dict) and all(isinstance(k, str) and k and isinstance(v, str) for k, v in value.items())):
        problems.append("config_options must be an object of non-empty option ids to string values")
        return ()
    return tuple(value.items())


def _offers(result: dict[str, Any], config_options: Any) -> Payload:
    """What a session's setup answer tells the web app of its modes and options, when the agent said anything.

    ``config_options`` are those the last ``session/set_config_option`` at
    session start answered with, newer than the setup answer's own.
    """
    offers: Payload = {}
    if result.get("modes") is not None:
        offers["modes"] = result["modes"]
    latest = config_options if config_options is not None else result.get("configOptions")
    if latest is not None:
        offers["config_options"] = latest
    return offers


def _setting_id(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _SETTING_ID_CHARS


def _says_auth_required(error: ActionError) -> bool:
    agent_error = error.details.get("error")
    return isinstance(agent_error, dict) and agent_error.get("code") == auth.AUTH_REQUIRED_CODE


def _error_message(agent_error: object) -> str:
    message = agent_error.get("message") if isinstance(agent_error, dict) else None
    return message if isinstance(message, str) else "authentication required"


def _exit_error(status: ExitStatus) -> Payload:
    return {
        "code": "agent_exited",
        "message": f"the agent exited ({status}) before the turn ended",
        "exit_code": status.exit_code,
        "signal": status.signal,
    }
