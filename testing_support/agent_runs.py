"""A real agent (the Claude bridge, Kimi Code, ...) under a real kandev-agentctl, offline, and nothing left behind.

What every real-agent harness shares: ``agent_session`` launches agentctl with
the agent's argv and a whole environment of the harness's making, connects a
client, yields an :class:`AgentRun`, and afterwards stops agentctl and waits
for every process of the run to end. Each run's processes carry a unique
marker in their environment (``MARKER_VAR``), so whatever outlives agentctl
(the agent, a CLI it spawned) is found and killed by pid, and reported in
``leftovers``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox
from testing_support.fake_model_server import DenyingProxy

#: The variable carrying a run's marker (its name predates the other agents; processes are found by it).
MARKER_VAR = "KANDEV_BRIDGE_TEST_RUN"
#: One request to agentctl (initialize spawns the agent, session/new may start its CLI).
REQUEST_TIMEOUT = 60.0
#: Waiting for the agent to reach the next step of the conversation.
STEP_TIMEOUT = 60.0
#: How long processes of the run may take to go away after agentctl stopped.
EXIT_TIMEOUT = 10.0


class ModelApi(Protocol):
    """A scripted model API the agent talks to: what it saw, one line a request."""

    def summary(self) -> list[str]: ...


@dataclass
class AgentRun[Api: ModelApi]:
    """Everything a test of one run looks at."""

    agentctl: AgentctlProcess
    client: AgentStreamClient
    inbox: Inbox
    api: Api
    proxy: DenyingProxy
    workdir: Path
    marker: str
    #: Processes of the run still alive after agentctl stopped (filled in at the end).
    leftovers: list[str]

    async def request(self, action: str, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.client.request(action, payload, timeout=REQUEST_TIMEOUT)

    async def next(self, action: str, timeout: float = STEP_TIMEOUT) -> dict[str, Any]:
        return await self.inbox.next(action, timeout=timeout)

    async def first_of(self, *actions: str, timeout: float = STEP_TIMEOUT) -> tuple[str, dict[str, Any]]:
        """Whichever of these notifications arrives first (it is consumed; the others are not)."""
        waits = {asyncio.ensure_future(self.inbox.next(action, timeout=timeout)): action for action in actions}
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        task = next(iter(done))
        return waits[task], task.result()

    def explain(self) -> str:
        """What the fake API and the proxy saw, and the notifications: for assertion messages."""
        lines = [f"{type(self.api).__name__}:", *(f"  {line}" for line in self.api.summary())]
        lines += [f"proxy attempts: {self.proxy.attempts}", f"notifications: {self.inbox.actions()}"]
        return "\n".join(lines)


@contextlib.asynccontextmanager
async def agent_session[Api: ModelApi](
    argv: list[str], env: dict[str, str], *, api: Api, proxy: DenyingProxy, workdir: Path, marker: str
) -> AsyncIterator[AgentRun[Api]]:
    """agentctl running ``argv`` with exactly ``env`` (which carries ``marker``), a connected client.

    The caller serves ``api`` and ``proxy``; all of the run's processes are gone afterwards.
    """
    agentctl = await launch(argv, env=env, ready_timeout=30.0)
    run = None
    try:
        inbox = Inbox()
        client = agentctl.client(on_notification=inbox)
        await client.connect()
        try:
            run = AgentRun(agentctl, client, inbox, api, proxy, workdir, marker, leftovers=[])
            yield run
        finally:
            await client.close()
    finally:
        await agentctl.stop(timeout=20.0)
        leftovers = await reap(marker)
        if run is not None:
            run.leftovers.extend(leftovers)


def marked_processes(marker: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment carries the marker."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            continue  # a zombie is gone, only not yet reaped by its parent
        if needle in environ.split(b"\0"):
            found[int(entry)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


async def reap(marker: str) -> list[str]:
    """Wait for the run's processes to end; SIGKILL the stragglers. Returns what had to be killed."""
    deadline = time.monotonic() + EXIT_TIMEOUT
    while (alive := marked_processes(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return [f"pid {pid}: {cmdline}" for pid, cmdline in alive.items()]


def wait_until_gone(marker: str, timeout: float = EXIT_TIMEOUT) -> dict[int, str]:
    """Wait for every process carrying ``marker`` to end; what is still alive after ``timeout``.

    For the browser specs, whose agents the web server starts: blocking, as they are.
    """
    deadline = time.monotonic() + timeout
    while (alive := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)  # polling the process table, not the page
    return alive


def kill_marked(marker: str) -> list[str]:
    """SIGKILL whatever still carries ``marker``; returns what had to be killed."""
    alive = marked_processes(marker)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return [f"pid {pid}: {cmdline}" for pid, cmdline in alive.items()]
