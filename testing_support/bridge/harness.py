"""Run the real Claude ACP bridge as the agent of a real kandev-agentctl, offline.

``bridge_session`` sets up what ``docs/decisions/bridge-ab.md#running-the-real-bridge-offline``
describes: a fresh empty HOME, the CLI pointed at a ``FakeMessagesApi`` on
127.0.0.1 with a dummy key, the privacy switches, a loopback proxy answering
403 as the safety net for anything else, and nothing inherited from the
test's own environment. Every process of the run carries a unique marker in
its environment, so whatever outlives agentctl (the bridge, the Claude CLI it
spawns) is found and killed by pid, and reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox

from . import Bridge
from .fake_messages_api import DenyingProxy, FakeMessagesApi

MARKER_VAR = "KANDEV_BRIDGE_TEST_RUN"
#: One request to agentctl (initialize spawns the bridge, session/new the CLI).
REQUEST_TIMEOUT = 60.0
#: Waiting for the agent to reach the next step of the conversation.
STEP_TIMEOUT = 60.0
#: How long processes of the run may take to go away after agentctl stopped.
EXIT_TIMEOUT = 10.0

PRIVACY_SWITCHES = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_BUG_COMMAND": "1",
    "DISABLE_COST_WARNINGS": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}

#: User settings in the fresh HOME. ``defaultMode: default`` keeps 0.101.0 out
#: of its built-in ``auto`` mode (whose permission classifier the fake would
#: have to play) without a ``session/set_mode``, which agentctl has no action
#: for; 0.65.0 starts in ``default`` anyway.
USER_SETTINGS = {"permissions": {"defaultMode": "default"}}


@dataclass
class BridgeRun:
    """Everything a test of one run looks at."""

    agentctl: AgentctlProcess
    client: AgentStreamClient
    inbox: Inbox
    api: FakeMessagesApi
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
        lines = ["fake Messages API:", *(f"  {line}" for line in self.api.summary())]
        lines += [f"proxy attempts: {self.proxy.attempts}", f"notifications: {self.inbox.actions()}"]
        return "\n".join(lines)


def clean_env(
    bridge: Bridge, *, home: Path, tmp: Path, api: FakeMessagesApi, proxy: DenyingProxy, marker: str
) -> dict[str, str]:
    """The whole environment of agentctl and, through it, the bridge and the CLI."""
    return {
        "PATH": os.pathsep.join([str(Path(bridge.node).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-api03-fake-kandev-bridge-tests-0000000000",
        **PRIVACY_SWITCHES,
        "HTTP_PROXY": proxy.url,
        "HTTPS_PROXY": proxy.url,
        "http_proxy": proxy.url,
        "https_proxy": proxy.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        MARKER_VAR: marker,
    }


@contextlib.asynccontextmanager
async def bridge_session(bridge: Bridge, tmp_path: Path, api: FakeMessagesApi) -> AsyncIterator[BridgeRun]:
    """agentctl running ``bridge`` against ``api``, a connected client; all of it gone afterwards."""
    home, tmp, workdir = tmp_path / "home", tmp_path / "tmp", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    tmp.mkdir()
    workdir.mkdir()
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = clean_env(bridge, home=home, tmp=tmp, api=api, proxy=proxy, marker=marker)
        agentctl = await launch(bridge.argv, env=env, ready_timeout=30.0)
        run = None
        try:
            inbox = Inbox()
            client = agentctl.client(on_notification=inbox)
            await client.connect()
            try:
                run = BridgeRun(agentctl, client, inbox, api, proxy, workdir, marker, leftovers=[])
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


async def open_session(
    run: BridgeRun, *, elicitation: bool, mcp_servers: list[dict[str, Any]] | None = None, url: bool = False
) -> str:
    """``agent.initialize`` with the flags as given, then one session in the run's project folder.

    ``mcp_servers`` (ACP ``McpServer`` objects) are given to the session; ``url`` is
    ``features.acpUrlElicitation``. Also checks that the bridge was offered form
    elicitation exactly when the flag is on, and URL mode beside it when that one is.
    """
    flags = {"features.acpElicitation": elicitation}
    if url:
        flags["features.acpUrlElicitation"] = True
    initialized = await run.request("agent.initialize", {"agent_id": "claude-acp", "runtime_flags": flags})
    expected: dict[str, Any] = {"_meta": {"terminal_output": True}}
    if elicitation:
        expected["elicitation"] = {"form": {}, "url": {}} if url else {"form": {}}
    assert initialized["client_capabilities"] == expected
    assert initialized["protocol_version"] == 1
    session = await run.request("agent.session.new", {"cwd": str(run.workdir), "mcp_servers": mcp_servers or []})
    return str(session["session_id"])
