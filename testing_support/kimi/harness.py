"""Run real Kimi Code as the agent of a real kandev-agentctl, offline.

``kimi_environment`` is the whole environment Kimi gets: a fresh empty HOME and
``KIMI_CODE_HOME`` whose ``config.toml`` points the default model at a
``FakeChatCompletions`` on 127.0.0.1 with a dummy key, the switches that stop
its update check and telemetry, a loopback proxy answering 403 as the safety
net for anything else, and a unique marker (the Claude bridge harness's) by
which whatever outlives agentctl is found and killed by pid, and reported.
``kimi_session`` runs it under agentctl with a connected client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox
from testing_support.bridge.harness import MARKER_VAR, reap
from testing_support.fake_model_server import DenyingProxy

from . import Kimi
from .fake_chat_completions import MODEL, FakeChatCompletions

#: One request to agentctl (initialize spawns Kimi: about a second cold, more on a loaded machine).
REQUEST_TIMEOUT = 60.0
#: Waiting for the agent to reach the next step of the conversation.
STEP_TIMEOUT = 60.0
#: A dummy key: with one configured, Kimi needs no sign-in to its own service.
API_KEY = "sk-fake-kandev-kimi-tests-0000000000"

PRIVACY_SWITCHES = {
    "KIMI_CODE_NO_AUTO_UPDATE": "1",
    "KIMI_CLI_NO_AUTO_UPDATE": "1",
    "KIMI_DISABLE_TELEMETRY": "1",
}


def config_toml(api: FakeChatCompletions) -> str:
    """``$KIMI_CODE_HOME/config.toml``: one OpenAI-compatible provider, ``api``, and its one model as the default."""
    return (
        f'default_model = "{MODEL}"\n\n'
        "[providers.fake]\n"
        'type = "openai"\n'
        f'base_url = "{api.url}/v1"\n'
        f'api_key = "{API_KEY}"\n\n'
        f'[models.{MODEL}]\nprovider = "fake"\nmodel = "{MODEL}"\nmax_context_size = 128000\n'
    )


def kimi_environment(
    kimi: Kimi, root: Path, *, api: FakeChatCompletions, proxy: DenyingProxy, marker: str
) -> dict[str, str]:
    """The whole environment of agentctl and, through it, Kimi, rooted in ``root`` (a fresh folder)."""
    home, tmp = root / "home", root / "tmp"
    kimi_home = home / ".kimi-code"
    kimi_home.mkdir(parents=True)
    (kimi_home / "config.toml").write_text(config_toml(api))
    tmp.mkdir()
    return {
        "PATH": os.pathsep.join([str(kimi.node.parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "KIMI_CODE_HOME": str(kimi_home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        **PRIVACY_SWITCHES,
        "HTTP_PROXY": proxy.url,
        "HTTPS_PROXY": proxy.url,
        "http_proxy": proxy.url,
        "https_proxy": proxy.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        MARKER_VAR: marker,
    }


@dataclass
class KimiRun:
    """Everything a test of one run looks at."""

    agentctl: AgentctlProcess
    client: AgentStreamClient
    inbox: Inbox
    api: FakeChatCompletions
    proxy: DenyingProxy
    workdir: Path
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
        lines = ["fake Chat Completions:", *(f"  {line}" for line in self.api.summary())]
        lines += [f"proxy attempts: {self.proxy.attempts}", f"notifications: {self.inbox.actions()}"]
        return "\n".join(lines)


@contextlib.asynccontextmanager
async def kimi_session(kimi: Kimi, tmp_path: Path, api: FakeChatCompletions) -> AsyncIterator[KimiRun]:
    """agentctl running ``kimi`` against ``api``, a connected client; all of it gone afterwards."""
    workdir = tmp_path / "project"
    workdir.mkdir()
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = kimi_environment(kimi, tmp_path / "kimi", api=api, proxy=proxy, marker=marker)
        agentctl = await launch(kimi.argv, env=env, ready_timeout=30.0)
        run = None
        try:
            inbox = Inbox()
            client = agentctl.client(on_notification=inbox)
            await client.connect()
            try:
                run = KimiRun(agentctl, client, inbox, api, proxy, workdir, leftovers=[])
                yield run
            finally:
                await client.close()
        finally:
            await agentctl.stop(timeout=20.0)
            leftovers = await reap(marker)
            if run is not None:
                run.leftovers.extend(leftovers)


async def open_session(run: KimiRun, *, elicitation: bool) -> str:
    """``agent.initialize`` with the flag as given, then one session in the run's project folder."""
    initialized = await run.request(
        "agent.initialize", {"agent_id": "kimi", "runtime_flags": {"features.acpElicitation": elicitation}}
    )
    expected: dict[str, Any] = {"_meta": {"terminal_output": True}}
    if elicitation:
        expected["elicitation"] = {"form": {}}
    assert initialized["client_capabilities"] == expected
    session = await run.request("agent.session.new", {"cwd": str(run.workdir), "mcp_servers": []})
    return str(session["session_id"])
