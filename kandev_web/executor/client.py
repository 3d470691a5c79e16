"""The web side of an executor host: launch agentctl there, learn when it ends.

One ``ExecutorClient`` per executor URL keeps a connection up, so that an
``agentctl.exited`` reaches the web process that owns the execution; after a
reconnection, ``executor.list`` tells it what ended while it was away.
``RemoteAgentctl`` looks like a local ``AgentctlProcess`` to the runner: it has
the stream's URL, pid and token, and can be waited on and stopped.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from websockets.exceptions import InvalidStatus, WebSocketException
from websockets.sync.client import connect

from kandev_web import checkouts, git
from kandev_web.agentctl import envelope
from kandev_web.agentctl.envelope import BadFrame, ErrorCode, FrameType, Payload
from kandev_web.agentctl.stream_client import (
    MAX_INCOMING_BYTES,
    AgentStreamClient,
    AgentStreamNotConnected,
    Backoff,
    NotFound,
    StreamError,
    error_from_payload,
)


@dataclass(frozen=True)
class ExecutorAddress:
    """Where an executor host's ``kandev-executor`` listens; ``token`` is a credential."""

    url: str
    token: str = field(repr=False)


@dataclass
class RemoteAgentctl:
    """An agentctl an executor host started for us."""

    executor: ExecutorClient
    launch_id: str
    url: str
    pid: int
    token: str = field(repr=False)
    cwd: str = ""
    _ended: asyncio.Future[int | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    async def wait(self) -> int | None:
        """agentctl's exit code once it has ended; None if the executor no longer knows it."""
        return await asyncio.shield(self._ended)

    async def stop(self, timeout: float = 10.0) -> int | None:
        if not self._ended.done():
            try:
                await self.executor.request("executor.stop", {"launch_id": self.launch_id})
            except NotFound:
                self.ended(None)
        async with asyncio.timeout(timeout):
            return await self.wait()

    def ended(self, exit_code: int | None) -> None:
        if not self._ended.done():
            self._ended.set_result(exit_code)


def request_once(address: ExecutorAddress, action: str, payload: Payload, *, timeout: float = 60.0) -> Payload:
    """One request on a connection of its own, from a thread without an event loop.

    For work a request or a database thread waits on anyway (a task's git
    checkout on that host), where borrowing the server loop's kept-up
    connection would only add a hop. Notifications on the way are skipped.
    """
    request_id = str(uuid.uuid4())
    try:
        with connect(
            address.url,
            additional_headers={"Authorization": f"Bearer {address.token}"},
            max_size=MAX_INCOMING_BYTES,
            open_timeout=timeout,
            close_timeout=1,
        ) as connection:
            connection.send(envelope.request(action, payload, id=request_id))
            while True:
                frame = envelope.decode(connection.recv(timeout))
                if frame.id != request_id:
                    continue
                if frame.type is FrameType.ERROR:
                    raise error_from_payload(frame.payload)
                return frame.payload
    except InvalidStatus as error:
        if error.response.status_code == HTTPStatus.UNAUTHORIZED:
            raise StreamError("the executor host refused the token", code=ErrorCode.UNAUTHORIZED) from None
        raise AgentStreamNotConnected(f"the executor host answered HTTP {error.response.status_code}") from None
    except (OSError, TimeoutError, WebSocketException, BadFrame) as error:
        raise AgentStreamNotConnected(f"cannot reach the executor host at {address.url}: {error}") from None


class RemoteCheckouts(checkouts.Checkouts):
    """Task checkouts on an executor host: each step is one ``executor.checkout`` request there."""

    def __init__(self, address: ExecutorAddress, *, timeout: float = 120.0) -> None:
        self.address = address
        self.timeout = timeout

    def perform(self, operation: str, args: dict[str, Any]) -> Any:
        try:
            answer = request_once(
                self.address, "executor.checkout", {"op": operation, "args": args}, timeout=self.timeout
            )
        except StreamError as error:
            if error.code != ErrorCode.GIT_ERROR:
                raise git.GitError(git.Failure.UNREACHABLE, error.message) from None
            failure = error.details.get("failure")
            known = {kind.value: kind for kind in git.Failure}
            raise git.GitError(known.get(failure, git.Failure.OTHER), str(error.details.get("detail", ""))) from None
        return answer.get("result")


class ExecutorClient:
    """A connection to one executor host's ``kandev-executor``, kept up until ``close()``."""

    def __init__(self, address: ExecutorAddress) -> None:
        self._stream = AgentStreamClient(
            address.url,
            address.token,
            on_notification=self._notified,
            on_reconnect=lambda stream: self._reconcile(),
            backoff=Backoff(initial=0.2, maximum=5.0),
        )
        self._agentctls: dict[str, RemoteAgentctl] = {}
        self._connecting = asyncio.Lock()
        self._connected = False

    async def request(self, action: str, payload: Payload, *, timeout: float = 30.0) -> Payload:
        async with self._connecting:
            if not self._connected:
                await self._stream.connect()
                self._connected = True
        return await self._stream.request(action, payload, timeout=timeout)

    async def launch(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        token: str,
        workdir: str,
        workdir_name: str,
    ) -> RemoteAgentctl:
        """Start agentctl for this agent command on the executor host."""
        started = await self.request(
            "executor.launch",
            {"argv": list(argv), "env": dict(env), "token": token, "workdir": workdir, "workdir_name": workdir_name},
        )
        agentctl = RemoteAgentctl(
            self, started["launch_id"], started["url"], started["pid"], token, cwd=started.get("cwd", "")
        )
        self._agentctls[agentctl.launch_id] = agentctl
        return agentctl

    async def attach(self, launch_id: str, url: str, pid: int, token: str) -> RemoteAgentctl:
        """Follow an agentctl another web process launched (an adopted execution)."""
        agentctl = self._agentctls.get(launch_id) or RemoteAgentctl(self, launch_id, url, pid, token)
        self._agentctls[launch_id] = agentctl
        await self._reconcile()
        return agentctl

    async def close(self) -> None:
        await self._stream.close()

    async def _notified(self, action: str, payload: Payload) -> None:
        if action == "agentctl.exited":
            self._ended(str(payload.get("launch_id")), payload.get("exit_code"))

    async def _reconcile(self) -> None:
        """Learn which of our agentctls ended while nobody was listening."""
        listing = await self.request("executor.list", {})
        known = {entry["launch_id"]: entry for entry in listing.get("agentctls", [])}
        for launch_id in list(self._agentctls):
            entry = known.get(launch_id)
            if entry is None or not entry.get("running"):
                self._ended(launch_id, entry.get("exit_code") if entry else None)

    def _ended(self, launch_id: str, exit_code: int | None) -> None:
        agentctl = self._agentctls.pop(launch_id, None)
        if agentctl is not None:
            agentctl.ended(exit_code)
