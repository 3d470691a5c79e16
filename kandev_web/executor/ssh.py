"""Executor hosts reached over SSH: agentctl started there, its stream tunnelled back.

The host needs only sshd and the project installed. The web process opens an
SSH connection to the host (its key checked against the one recorded for it),
more when sshd's session limit is reached, starts ``kandev-agentctl`` there
bound to the host's own loopback, reads its ready line, and reaches its stream
through a direct-tcpip channel of that same connection, forwarded from a
loopback port on the web machine. No agentctl port is ever open on the
network, and no service of ours listens there.

The token and the profile's secrets travel on agentctl's stdin
(``--environment-from-stdin``), never in argv, which every user of that host
can read. agentctl's end is the SSH process's end: its exit status, or the
signal that killed it.

It imports nothing from Django; ``SshFailure`` says what went wrong so that
the web side can say it in the operator's language.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import asyncssh

from kandev_web import checkouts, git
from kandev_web.agentctl.cli import TOKEN_VAR
from kandev_web.agentctl.stream_client import AgentStreamNotConnected
from kandev_web.executor.address import SshAddress

logger = logging.getLogger(__name__)

#: Seconds to reach the host and authenticate before the launch fails.
CONNECT_TIMEOUT = 10.0
#: Seconds agentctl has to print its ready line on the host.
READY_TIMEOUT = 20.0
#: Key types a known_hosts line (or ``ssh-keyscan`` output) may name.
_KEY_TYPE_PREFIXES = ("ssh-", "ecdsa-", "sk-", "rsa-")
#: Why a host refuses a session channel on a connection at its limit (sshd's ``MaxSessions``):
#: OpenSSH 9.2 says "connect failed" (its default reason; checked against a real sshd), older
#: releases "administratively prohibited", other servers may say "resource shortage".
_NO_ROOM_FOR_A_SESSION = frozenset(
    {asyncssh.OPEN_CONNECT_FAILED, asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, asyncssh.OPEN_RESOURCE_SHORTAGE}
)


class SshFailure(enum.StrEnum):
    NO_HOST_KEY = "no-host-key"
    HOST_KEY_MISMATCH = "host-key-mismatch"
    UNREACHABLE = "unreachable"
    REFUSED_LOGIN = "refused-login"
    NOT_STARTED = "not-started"


class SshError(AgentStreamNotConnected):
    """The host could not be used; ``failure`` says why, ``detail`` in SSH's own (English) words."""

    def __init__(self, failure: SshFailure, detail: str = "") -> None:
        super().__init__(f"{failure}: {detail}" if detail else str(failure))
        self.failure = failure
        self.detail = detail


def trusted_host_key(line: str) -> asyncssh.SSHKey:
    """The public key in a known_hosts line, ``ssh-keyscan`` output or a bare ``type base64`` key.

    The host name in the line is not matched: the key is recorded on this
    executor, so it is this executor's key whatever address reaches it.
    """
    for entry in line.splitlines():
        words = entry.split()
        if not words or words[0].startswith("#"):
            continue
        for index, word in enumerate(words[:-1]):
            if word.startswith(_KEY_TYPE_PREFIXES):
                try:
                    return asyncssh.import_public_key(f"{word} {words[index + 1]}")
                except (asyncssh.KeyImportError, ValueError):
                    break
    raise SshError(SshFailure.NO_HOST_KEY)


def _local_url(remote_url: str, listener: asyncssh.SSHListener) -> str:
    return urlunsplit(urlsplit(remote_url)._replace(netloc=f"127.0.0.1:{listener.get_port()}"))


def _signal_code(name: str) -> int | None:
    """An exit signal's name as ``subprocess`` reports it: minus its number."""
    try:
        return -signal.Signals[f"SIG{name}"]
    except KeyError:
        return None


@dataclass
class SshAgentctl:
    """An agentctl on an SSH executor host; the runner treats it like a local ``AgentctlProcess``.

    ``url`` is where this web process reaches it (the tunnel's local end);
    ``remote_url`` is where it listens on its host, what other processes are
    told (each tunnels to it through a connection of its own).
    """

    executor: SshExecutor
    launch_id: str
    remote_url: str
    url: str
    pid: int
    token: str = field(repr=False)
    cwd: str = ""
    _ended: asyncio.Future[int | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    async def wait(self) -> int | None:
        """agentctl's exit code (minus the signal's number when one killed it); None if unknown."""
        return await asyncio.shield(self._ended)

    async def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM there, which agentctl treats as ``agent.shutdown``; SIGKILL if it hangs."""
        if not self._ended.done():
            await self.executor.signal(self.pid, "TERM")
            try:
                async with asyncio.timeout(timeout):
                    return await self.wait()
            except TimeoutError:
                await self.executor.signal(self.pid, "KILL")
        async with asyncio.timeout(timeout):
            return await self.wait()

    def ended(self, exit_code: int | None) -> None:
        if not self._ended.done():
            self._ended.set_result(exit_code)


class SshExecutor:
    """This web process's SSH connections to one executor host: opened when needed, kept until ``close()``.

    Every agentctl running there holds one session channel (its exec) for as
    long as it runs, and each command (a kill, a checkout step, a pid follow)
    one while it runs; sshd caps sessions per connection (``MaxSessions``, 10
    by default). So a session goes to the first connection that takes it, and
    when all of them refuse, to a new one (same host key check, same login).
    A stop never waits for the agent's own connection: it takes any room.

    An agentctl's tunnel goes through the connection that holds its session,
    so it lives as long as that agentctl can. Tunnels are direct-tcpip
    channels, which ``MaxSessions`` does not count. A connection whose sessions
    have all ended is kept, not closed: there are never more connections than
    the busiest moment needed, an idle one costs one sshd process there, and
    the next session skips a handshake (and a tunnel may still use it).
    """

    def __init__(self, address: SshAddress, *, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.address = address
        self.connect_timeout = connect_timeout
        #: Oldest first; the first with room takes the next session.
        self._connections: list[asyncssh.SSHClientConnection] = []
        self._connecting = asyncio.Lock()
        #: Remote agentctl port → the connection and this machine's forwarded listener for it.
        self._tunnels: dict[int, tuple[asyncssh.SSHClientConnection, asyncssh.SSHListener]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def _session(
        self, command: str, *, input: str | None = None
    ) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[str]]:
        """``command`` started on the first connection with room for a session, or on a new one.

        Raises ``ChannelOpenError`` when even a new connection refuses it (that
        is not a full connection: nothing else would take it either).
        """
        async with self._connecting:
            self._connections = [connection for connection in self._connections if not connection.is_closed()]
            for connection in self._connections:
                try:
                    return connection, await connection.create_process(command, input=input)
                except asyncssh.ChannelOpenError as error:
                    if error.code not in _NO_ROOM_FOR_A_SESSION:
                        raise
            connection = await self._connect()
            try:
                process = await connection.create_process(command, input=input)
            except BaseException:
                connection.close()
                raise
            self._connections.append(connection)
            return connection, process

    async def _any_connection(self) -> asyncssh.SSHClientConnection:
        """A live connection, for a tunnel that belongs to no agentctl this process follows."""
        async with self._connecting:
            self._connections = [connection for connection in self._connections if not connection.is_closed()]
            if not self._connections:
                self._connections.append(await self._connect())
            return self._connections[0]

    async def _connect(self) -> asyncssh.SSHClientConnection:
        address = self.address
        host_key = trusted_host_key(address.host_key)
        if address.private_key:
            try:
                keys: list[asyncssh.SSHKey | str] = [asyncssh.import_private_key(address.private_key)]
            except (asyncssh.KeyImportError, ValueError) as error:
                raise SshError(SshFailure.REFUSED_LOGIN, f"the private key does not load: {error}") from None
        else:
            keys = [address.key_file] if address.key_file else []
        try:
            return await asyncssh.connect(
                address.host,
                address.port,
                username=address.user,
                known_hosts=([host_key], [], []),
                client_keys=keys,
                # Only the key given here: no agent, no ~/.ssh/config, no passwords to prompt for.
                agent_path=None,
                config=(),
                password_auth=False,
                kbdint_auth=False,
                gss_auth=False,
                connect_timeout=self.connect_timeout,
                keepalive_interval=15,
            )
        except asyncssh.HostKeyNotVerifiable as error:
            raise SshError(SshFailure.HOST_KEY_MISMATCH, error.reason) from None
        except asyncssh.PermissionDenied as error:
            raise SshError(SshFailure.REFUSED_LOGIN, error.reason) from None
        except asyncssh.Error as error:
            raise SshError(SshFailure.UNREACHABLE, error.reason) from None
        except (OSError, TimeoutError) as error:
            raise SshError(SshFailure.UNREACHABLE, str(error) or "no answer in time") from None

    async def launch(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        token: str,
        workdir: str,
        workdir_name: str,
    ) -> SshAgentctl:
        """Start agentctl for this agent command on the host, and tunnel to its stream."""
        command = shlex.join(
            [self.address.agentctl, "--host", "127.0.0.1", "--port", "0", "--environment-from-stdin", "--", *argv]
        )
        spec = {"env": {**env, TOKEN_VAR: token}, "workdir": workdir or f"{self.address.workdir_root}/{workdir_name}"}
        try:
            connection, process = await self._session(command, input=json.dumps(spec) + "\n")
            line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT)
        except (asyncssh.Error, OSError) as error:
            raise SshError(SshFailure.NOT_STARTED, str(error)) from None
        except TimeoutError:
            process.terminate()
            raise SshError(SshFailure.NOT_STARTED, "agentctl printed no ready line in time") from None
        try:
            ready = json.loads(line)
            remote_url, pid = ready["url"], int(ready["pid"])
        except (ValueError, KeyError, TypeError):
            completed = await process.wait()
            raise SshError(
                SshFailure.NOT_STARTED, f"{self.address.agentctl} exited with status {completed.exit_status}"
            ) from None
        agentctl = SshAgentctl(
            self,
            f"ssh-{pid}",
            remote_url,
            await self.tunnel(remote_url, connection),
            pid,
            token,
            cwd=str(ready.get("cwd", "")),
        )
        self._spawn(self._relay_stderr(process))
        self._spawn(self._wait(process, agentctl))
        return agentctl

    async def attach(self, launch_id: str, url: str, pid: int, token: str) -> SshAgentctl:
        """Follow an agentctl another web process started there (an adopted execution).

        Its exit status went to that process's channel; here its end is learnt
        by waiting on its pid there (so the code is unknown).
        """
        try:
            connection, follower = await self._session(f"tail --pid={int(pid)} -f /dev/null")
        except (asyncssh.Error, OSError) as error:
            raise SshError(SshFailure.UNREACHABLE, str(error)) from None
        try:
            agentctl = SshAgentctl(self, launch_id, url, await self.tunnel(url, connection), pid, token)
        except BaseException:
            follower.close()
            raise
        self._spawn(self._wait(follower, agentctl, known_code=False))
        return agentctl

    async def tunnel(self, remote_url: str, connection: asyncssh.SSHClientConnection | None = None) -> str:
        """A URL on this machine that reaches ``remote_url`` (on the host's loopback) through ``connection``.

        Kept while that agentctl runs: for the streams this process follows,
        through the connection holding the agentctl's session; with no
        ``connection``, through any live one.
        """
        port = urlsplit(remote_url).port or 0
        kept = self._tunnels.get(port)
        if kept is None or kept[0].is_closed():
            connection = connection or await self._any_connection()
            kept = self._tunnels[port] = (connection, await self._forward(remote_url, connection))
        return _local_url(remote_url, kept[1])

    @contextlib.asynccontextmanager
    async def transient_tunnel(self, remote_url: str) -> AsyncIterator[str]:
        """Like ``tunnel``, closed when the block ends: under the connection kept to an agentctl owned elsewhere."""
        listener = await self._forward(remote_url, await self._any_connection())
        try:
            yield _local_url(remote_url, listener)
        finally:
            listener.close()

    async def _forward(self, remote_url: str, connection: asyncssh.SSHClientConnection) -> asyncssh.SSHListener:
        parts = urlsplit(remote_url)
        if parts.port is None:
            raise SshError(SshFailure.NOT_STARTED, f"no port in {remote_url}")
        try:
            return await connection.forward_local_port("127.0.0.1", 0, parts.hostname or "127.0.0.1", parts.port)
        except (asyncssh.Error, OSError) as error:
            raise SshError(SshFailure.UNREACHABLE, str(error)) from None

    async def checkout(self, operation: str, args: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Run one checkout step there (``kandev-checkout``); its answer, ``{"result"}`` or ``{"error"}``."""
        command = shlex.join([self.address.checkout_command, "--root", self.address.worktree_root])
        request = json.dumps({"op": operation, "args": args})
        try:
            done = await asyncio.wait_for(self._run(command, input=request), timeout)
            return cast("dict[str, Any]", json.loads(str(done.stdout or "").strip().splitlines()[-1]))
        except (asyncssh.Error, OSError) as error:
            raise SshError(SshFailure.UNREACHABLE, str(error)) from None
        except TimeoutError:
            raise SshError(SshFailure.UNREACHABLE, "no answer in time") from None
        except (ValueError, IndexError):
            raise SshError(SshFailure.NOT_STARTED, f"{self.address.checkout_command} gave no answer") from None

    async def signal(self, pid: int, name: str) -> None:
        with contextlib.suppress(SshError, asyncssh.Error, OSError):
            await self._run(f"kill -{name} {int(pid)}")

    async def _run(self, command: str, *, input: str | None = None) -> asyncssh.SSHCompletedProcess:
        _, process = await self._session(command, input=input)
        return await process.wait(check=False)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for connection in self._connections:
            connection.close()
        for connection in self._connections:
            with contextlib.suppress(Exception):
                await connection.wait_closed()
        self._connections.clear()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait(
        self, process: asyncssh.SSHClientProcess[str], agentctl: SshAgentctl, *, known_code: bool = True
    ) -> None:
        completed = await process.wait(check=False)
        tunnel = self._tunnels.pop(urlsplit(agentctl.remote_url).port or 0, None)
        if tunnel is not None:
            tunnel[1].close()
        code = None
        if known_code:
            if completed.exit_signal:
                code = _signal_code(completed.exit_signal[0])
            elif completed.exit_status is not None and completed.exit_status >= 0:
                code = completed.exit_status
        agentctl.ended(code)

    async def _relay_stderr(self, process: asyncssh.SSHClientProcess[str]) -> None:
        """agentctl's log lines (already scrubbed of secrets there) join this process's stderr."""
        with contextlib.suppress(asyncssh.Error, OSError):
            async for line in process.stderr:
                sys.stderr.write(line)


class SshCheckouts(checkouts.Checkouts):
    """Task checkouts on an SSH executor host: each step one ``kandev-checkout`` run there, on a connection of its own.

    Called from request and database threads, which have no event loop and
    wait for the answer anyway.
    """

    def __init__(self, address: SshAddress, *, timeout: float = 120.0) -> None:
        self.address = address
        self.timeout = timeout

    def perform(self, operation: str, args: dict[str, Any]) -> Any:
        try:
            answer = asyncio.run(self._perform(operation, args))
        except SshError as error:
            raise git.GitError(git.Failure.UNREACHABLE, f"{self.address.url}: {error}") from None
        if "error" in answer:
            known = {kind.value: kind for kind in git.Failure}
            failure = answer["error"].get("failure")
            raise git.GitError(known.get(failure, git.Failure.OTHER), str(answer["error"].get("detail", "")))
        return answer.get("result")

    async def _perform(self, operation: str, args: dict[str, Any]) -> dict[str, Any]:
        host = SshExecutor(self.address)
        try:
            return await host.checkout(operation, args, timeout=self.timeout)
        finally:
            await host.close()
