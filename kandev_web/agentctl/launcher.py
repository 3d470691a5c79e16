"""Start ``kandev-agentctl`` as a child process and learn where it listens.

The web app starts one agentctl per agent execution; tests start many. Both
need the same few steps: a fresh token in the environment, an ephemeral
loopback port, and the ready line read off stdout.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kandev_web.agentctl.cli import TOKEN_VAR
from kandev_web.agentctl.stream_client import AgentStreamClient


class LaunchError(Exception):
    """agentctl did not come up."""


def agentctl_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).parent / "kandev-agentctl"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "kandev_web.agentctl.cli"]


@dataclass
class AgentctlProcess:
    """A running agentctl: its stream URL, its token and the process itself."""

    process: asyncio.subprocess.Process
    url: str
    pid: int
    token: str = field(repr=False)

    def client(self, **options: Any) -> AgentStreamClient:
        """A stream client for this agentctl (not yet connected)."""
        return AgentStreamClient(self.url, self.token, **options)

    async def wait(self) -> int:
        """agentctl's exit code, once it has exited."""
        return await self.process.wait()

    async def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, which agentctl treats as ``agent.shutdown``; SIGKILL if it hangs."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                self.process.kill()
        return await self.process.wait()


async def launch(
    agent_argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    host: str = "127.0.0.1",
    token: str | None = None,
    ready_timeout: float = 10.0,
) -> AgentctlProcess:
    """Start agentctl for this agent command and wait for its ready line.

    ``env`` (default: this process's environment) is what agentctl and, through
    it, the agent receive, plus the token. agentctl's stderr is inherited.
    """
    token = token or secrets.token_urlsafe(32)
    process = await asyncio.create_subprocess_exec(
        *agentctl_command(),
        "--host",
        host,
        "--port",
        "0",
        "--",
        *agent_argv,
        stdout=asyncio.subprocess.PIPE,
        env={**(os.environ if env is None else env), TOKEN_VAR: token},
    )
    assert process.stdout
    try:
        line = await asyncio.wait_for(process.stdout.readline(), ready_timeout)
        ready = json.loads(line) if line else None
        if not (isinstance(ready, dict) and ready.get("event") == "ready"):
            raise LaunchError(f"agentctl exited or printed no ready line (exit code {process.returncode})")
    except (TimeoutError, ValueError, LaunchError) as error:
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise LaunchError(f"agentctl did not become ready: {error}") from error
    return AgentctlProcess(process=process, url=ready["url"], pid=ready["pid"], token=token)
