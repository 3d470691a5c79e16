"""The ACP client side of one agent process, spoken over the agent's stdio.

Owns the process: spawns it, routes what the agent asks of the client, relays
its stderr to agentctl's log, and reports how it ended. It holds no turn or
session state; the controller does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from kandev_web.agentctl.elicitations import ElicitationHandler
from kandev_web.agentctl.jsonrpc import LINE_LIMIT, JsonRpcPeer, is_valid_id
from kandev_web.agentctl.permissions import PermissionBroker
from kandev_web.agentctl.scrub import Scrubber
from kandev_web.agentctl.stderr_tail import StderrTail

logger = logging.getLogger(__name__)

#: Pinned: bridge 0.101.0 answers a version of 2 or more with a draft surface.
PROTOCOL_VERSION = 1

#: How long the agent gets to exit on its own before it is signalled.
EXIT_GRACE_SECONDS = 2.0

#: How long an agent may take to exit once its stdin is closed before it is
#: asked with SIGTERM, quietly: some linger after the session is over (the
#: Codex adapter keeps timers running for ~5 s), and nothing is lost by
#: ending them, since every request has been answered by then.
STDIN_CLOSE_GRACE_SECONDS = 1.0

#: agentctl's log keeps only the start of each stderr line an agent writes.
STDERR_LINE_CHARS = 2000

UpdateSink = Callable[[str, Any], None]


def _client_info() -> dict[str, str]:
    try:
        package_version = version("kandev-web")
    except PackageNotFoundError:
        package_version = "unknown"
    return {"name": "kandev-agentctl", "title": "Kandev", "version": package_version}


class AgentStartError(Exception):
    """The agent command could not be executed at all."""


@dataclass(frozen=True)
class ExitStatus:
    exit_code: int | None
    signal: str | None

    @classmethod
    def from_returncode(cls, returncode: int) -> ExitStatus:
        if returncode >= 0:
            return cls(exit_code=returncode, signal=None)
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return cls(exit_code=None, signal=name)

    def __str__(self) -> str:
        return f"signal {self.signal}" if self.signal else f"exit code {self.exit_code}"


class AcpClient:
    """One running agent and the JSON-RPC conversation with it."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        *,
        on_update: UpdateSink,
        permissions: PermissionBroker,
        elicitations: ElicitationHandler,
        scrubber: Scrubber | None = None,
    ) -> None:
        assert process.stdin
        assert process.stdout
        assert process.stderr
        self._process = process
        self._on_update = on_update
        # Session id -> the answer to its session/load, while the agent replays it.
        self._loading: dict[str, asyncio.Future[Any]] = {}
        self._permissions = permissions
        self._elicitations = elicitations
        self._peer = JsonRpcPeer(
            process.stdout,
            process.stdin,
            requests={
                "session/request_permission": permissions.request,
                "elicitation/create": elicitations.create,
            },
            notifications={
                "session/update": self._forward_update,
                "$/cancel_request": self._withdraw,
                "elicitation/complete": elicitations.complete,
            },
            label="agent",
        )
        self._reading = asyncio.create_task(self._peer.run(), name="agent stdout")
        self._stderr = StderrTail()
        self._relaying = asyncio.create_task(
            _relay_stderr(process.stderr, self._stderr, scrubber or Scrubber(())), name="agent stderr"
        )

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        on_update: UpdateSink,
        permissions: PermissionBroker,
        elicitations: ElicitationHandler,
        scrubber: Scrubber | None = None,
    ) -> AcpClient:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env),
                limit=LINE_LIMIT,
                # Its own process group, so that stopping the agent also stops
                # whatever it started (the Claude bridge runs the Claude CLI).
                start_new_session=True,
            )
        except OSError as error:
            raise AgentStartError(f"could not start {argv[0]!r}: {error.strerror or error}") from error
        logger.info("agent started, pid %d", process.pid)
        return cls(process, on_update=on_update, permissions=permissions, elicitations=elicitations, scrubber=scrubber)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stderr_tail(self) -> str:
        """The last lines it wrote to stderr (``stderr_tail.py``); whole once :meth:`wait` has returned."""
        return self._stderr.text()

    async def initialize(self, capabilities: dict[str, Any]) -> Any:
        return await self._peer.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities, "clientInfo": _client_info()},
        )

    async def authenticate(self, method_id: str, meta: dict[str, Any] | None = None) -> Any:
        """ACP ``authenticate``; ``meta`` is its ``_meta`` (the gateway method's ``{"gateway": ...}``)."""
        params: dict[str, Any] = {"methodId": method_id}
        if meta:
            params["_meta"] = meta
        return await self._peer.request("authenticate", params)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """ACP ``session/set_config_option``: one of the session's options (Codex's ``collaboration_mode``).

        A boolean option's value goes with ``type: "boolean"``, as ACP asks
        (``session.configOptions.boolean``); a select's is its value id alone.
        """
        params: dict[str, Any] = {"sessionId": session_id, "configId": config_id, "value": value}
        if isinstance(value, bool):
            params["type"] = "boolean"
        return await self._peer.request("session/set_config_option", params)

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        """ACP ``session/set_mode``: one of the modes the session offers (``modes.availableModes``)."""
        return await self._peer.request("session/set_mode", {"sessionId": session_id, "modeId": mode_id})

    async def new_session(self, cwd: str, mcp_servers: list[Any]) -> Any:
        return await self._peer.request("session/new", {"cwd": cwd, "mcpServers": mcp_servers})

    async def resume_session(self, session_id: str, cwd: str, mcp_servers: list[Any]) -> Any:
        """ACP ``session/resume``: the agent takes the session up again and replays nothing."""
        return await self._peer.request(
            "session/resume", {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers}
        )

    async def load_session(self, session_id: str, cwd: str, mcp_servers: list[Any]) -> Any:
        """ACP ``session/load``, keeping the history the agent replays to itself.

        The agent replays the whole conversation as ``session/update``s before
        it answers; whoever resumes a session already has it, and would show it
        twice. So this session's updates are not forwarded until the answer's
        line has been read: its future is done from that moment, before this
        coroutine runs again, so an update the agent sends after answering is
        forwarded. ACP's answer is ``null`` (or an object); ``{}`` stands for ``null``.
        """
        _, answer = self._peer.send_request(
            "session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers}
        )
        self._loading[session_id] = answer
        try:
            await self.drain()
            result = await answer
        finally:
            if self._loading.get(session_id) is answer:
                del self._loading[session_id]
        return {} if result is None else result

    def send_prompt(self, session_id: str, prompt: list[Any]) -> asyncio.Future[Any]:
        """Write ``session/prompt`` now; the future holds the agent's answer."""
        _, answer = self._peer.send_request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        return answer

    def cancel(self, session_id: str) -> None:
        self._peer.notify("session/cancel", {"sessionId": session_id})

    async def drain(self) -> None:
        await self._peer.drain()

    async def wait(self) -> ExitStatus:
        """Wait until the agent has exited and everything it wrote has been read."""
        # Its stdout ends first; reading it to the end keeps its last words.
        await asyncio.wait([self._reading])
        try:
            returncode = await asyncio.wait_for(self._process.wait(), EXIT_GRACE_SECONDS)
        except TimeoutError:
            # It closed stdout yet lingers, or a child it left behind holds a pipe.
            self._signal_group(signal.SIGKILL)
            returncode = await self._process.wait()
        await asyncio.wait([self._relaying])
        status = ExitStatus.from_returncode(returncode)
        logger.info("agent exited: %s", status)
        return status

    async def stop(self) -> None:
        """Ask the agent to exit by closing its stdin; insist with signals if it will not."""
        if self._process.returncode is not None:
            return
        await self._peer.settle_handlers(timeout=EXIT_GRACE_SECONDS)
        assert self._process.stdin
        self._process.stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), STDIN_CLOSE_GRACE_SECONDS)
            return
        except TimeoutError:
            # Lingering after the end of its input is common and harmless: no warning.
            logger.info("agent still running after its stdin closed; sending SIGTERM")
            self._signal_group(signal.SIGTERM)
        try:
            await asyncio.wait_for(self._process.wait(), EXIT_GRACE_SECONDS)
            return
        except TimeoutError:
            logger.warning("agent still running after SIGTERM; sending SIGKILL")
            self._signal_group(signal.SIGKILL)
        await self._process.wait()

    def _signal_group(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signum)

    def _forward_update(self, params: Any) -> None:
        if not (isinstance(params, dict) and isinstance(params.get("sessionId"), str) and "update" in params):
            logger.warning("the agent sent a session/update without sessionId or update; skipped")
            return
        loading = self._loading.get(params["sessionId"])
        if loading is not None and not loading.done():
            return  # history replayed by session/load
        self._on_update(params["sessionId"], params["update"])

    def _withdraw(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not is_valid_id(request_id):
            logger.warning("the agent sent $/cancel_request without a usable requestId; skipped")
            return
        if not (self._permissions.cancel_request(request_id) or self._elicitations.cancel_request(request_id)):
            # It may have been answered already: the bridge withdraws a form
            # ~15 ms after session/cancel, by which time agentctl has answered.
            logger.debug("$/cancel_request names no open request")


async def _relay_stderr(stream: asyncio.StreamReader, tail: StderrTail, scrubber: Scrubber) -> None:
    """Copy the agent's stderr into agentctl's log, line by line, keeping its tail for ``agent.exited``.

    Each line is scrubbed of the profile's secrets before anything keeps it,
    so cutting the tail to size can never leave part of one behind.

    Draining it matters as much as showing it: an agent blocked on a full
    stderr pipe stops answering.
    """
    while True:
        try:
            line = await stream.readline()
        except ValueError:
            logger.info("agent stderr: (a line longer than %d bytes, skipped)", LINE_LIMIT)
            continue
        if not line:
            return
        text = scrubber.text(line.decode(errors="replace"))
        tail.add(text)
        logger.info("agent stderr: %s", text.rstrip()[:STDERR_LINE_CHARS])
