"""What the executor service does: start agentctl processes and report their ends.

The agent stream (``docs/agent-stream.md``) has one agentctl per agent
execution, started by whoever runs the agent. On one machine that is the web
process; with separate executor hosts it is this service, asked over the same
envelope the agent stream uses. The web app still talks to each agentctl
directly, by the URL and token it gets back here, so nothing about the agent
stream changes.

Actions (payload → response; in full in
``docs/agent-stream.md#the-executor-host-executorstream``):

- ``executor.launch`` ``{"argv": [...], "env": {...}, "token": "...",
  "workdir": "/abs/path" or "", "workdir_name": "task-12"}`` →
  ``{"launch_id", "url", "pid", "cwd"}``. ``token`` becomes that agentctl's
  ``KANDEV_AGENTCTL_TOKEN``; ``env`` is added to this service's own
  environment (minus its token), because PATH, HOME and the agent's
  credentials belong to the machine the agent runs on.
- ``executor.stop`` ``{"launch_id"}`` → ``{"success": true}``: SIGTERM, which
  agentctl treats as ``agent.shutdown``.
- ``executor.list`` ``{}`` → ``{"agentctls": [{"launch_id", "pid", "url",
  "running", "exit_code"}]}``, recently ended ones included, so a client that
  was disconnected when one ended still learns of it.

- ``executor.checkout`` ``{"op": "make", "args": {...}}`` → ``{"result": ...}``:
  one step of a task's git checkout on this host (``kandev_web/checkouts.py``
  lists them), for repositories that live here. A git failure is
  ``GIT_ERROR`` with ``details`` ``{"failure", "detail"}``.

Notification: ``agentctl.exited`` ``{"launch_id", "exit_code"}`` to every
connected client when an agentctl ends, however it ends.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from kandev_web import checkouts, git
from kandev_web.agentctl.envelope import ActionError, ErrorCode, Frame, Payload
from kandev_web.agentctl.launcher import AgentctlProcess, LaunchError, launch

logger = logging.getLogger(__name__)

#: Ended agentctls remembered for ``executor.list``; older ones are forgotten.
REMEMBERED_EXITS = 1000

_WORKDIR_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

Emit = Callable[[str, Payload], None]


@dataclass
class Launched:
    launch_id: str
    url: str
    pid: int
    process: AgentctlProcess | None
    exit_code: int | None = None

    @property
    def running(self) -> bool:
        return self.process is not None

    def describe(self) -> Payload:
        return {
            "launch_id": self.launch_id,
            "pid": self.pid,
            "url": self.url,
            "running": self.running,
            "exit_code": self.exit_code,
        }


def advertised_url(url: str, host: str | None) -> str:
    """agentctl's ready URL with the host other machines should use instead of the bound one."""
    if not host:
        return url
    parts = urlsplit(url)
    netloc = f"[{host}]" if ":" in host else host
    return urlunsplit(parts._replace(netloc=f"{netloc}:{parts.port}"))


def _launch_request(payload: Payload) -> tuple[list[str], dict[str, str], str, str, str]:
    """Validate ``executor.launch``'s payload; every problem is reported at once."""
    argv, env, token = payload.get("argv"), payload.get("env", {}), payload.get("token")
    workdir, workdir_name = payload.get("workdir", ""), payload.get("workdir_name", "")
    problems = []
    if not (isinstance(argv, list) and argv and all(isinstance(arg, str) for arg in argv)):
        problems.append("argv must be a non-empty list of strings")
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        problems.append("env must be an object of strings")
    if not (isinstance(token, str) and token):
        problems.append("token must be a non-empty string")
    if not isinstance(workdir, str) or (workdir and not Path(workdir).is_absolute()):
        problems.append("workdir must be an absolute path or empty")
    if not (isinstance(workdir_name, str) and _WORKDIR_NAME.match(workdir_name)):
        problems.append("workdir_name must be a plain name such as task-12")
    if problems:
        raise ActionError.invalid(problems)
    return argv, env, token, workdir, workdir_name  # type: ignore[return-value]


class ExecutorService:
    """The agentctl processes this executor host started, running and recently ended."""

    def __init__(
        self,
        *,
        emit: Emit,
        base_env: Mapping[str, str],
        agentctl_host: str,
        advertise_host: str | None,
        workdir_root: Path,
        worktree_root: Path | None = None,
    ) -> None:
        self._emit = emit
        self._base_env = dict(base_env)
        self._agentctl_host = agentctl_host
        self._advertise_host = advertise_host
        self._workdir_root = workdir_root
        self._checkouts = checkouts.LocalCheckouts(worktree_root or workdir_root.parent / "worktrees")
        self._launched: OrderedDict[str, Launched] = OrderedDict()
        self._watching: set[asyncio.Task[None]] = set()
        self._handlers = {
            "executor.launch": self._launch,
            "executor.stop": self._stop,
            "executor.list": self._list,
            "executor.checkout": self._checkout,
        }

    async def handle(self, frame: Frame) -> Payload:
        handler = self._handlers.get(frame.action)
        if handler is None:
            raise ActionError(ErrorCode.UNKNOWN_ACTION, f"unknown action {frame.action!r}")
        return await handler(frame.payload)

    async def close(self) -> None:
        """Stop every agentctl still running; their ends are reported as usual."""
        await asyncio.gather(
            *(launched.process.stop() for launched in self._launched.values() if launched.process is not None)
        )
        await asyncio.gather(*self._watching, return_exceptions=True)

    # Actions --------------------------------------------------------------

    async def _launch(self, payload: Payload) -> Payload:
        argv, env, token, workdir, workdir_name = _launch_request(payload)
        cwd = Path(workdir) if workdir else self._workdir_root / workdir_name
        try:
            cwd.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ActionError(
                ErrorCode.INTERNAL_ERROR, f"cannot create the working directory: {error.strerror}"
            ) from None
        try:
            process = await launch(argv, env={**self._base_env, **env}, host=self._agentctl_host, token=token)
        except LaunchError as error:
            raise ActionError(ErrorCode.INTERNAL_ERROR, str(error)) from None
        launched = Launched(
            launch_id=str(uuid.uuid4()),
            url=advertised_url(process.url, self._advertise_host),
            pid=process.pid,
            process=process,
        )
        self._remember(launched)
        watching = asyncio.create_task(self._watch(launched, process), name="agentctl watch")
        self._watching.add(watching)
        watching.add_done_callback(self._watching.discard)
        logger.info("started agentctl %s (pid %d)", launched.launch_id, launched.pid)
        return {"launch_id": launched.launch_id, "url": launched.url, "pid": launched.pid, "cwd": str(cwd)}

    async def _stop(self, payload: Payload) -> Payload:
        launched = self._launched.get(str(payload.get("launch_id")))
        if launched is None:
            raise ActionError(ErrorCode.NOT_FOUND, "no agentctl with that launch_id")
        if launched.process is not None:
            await launched.process.stop()
        return {"success": True}

    async def _list(self, payload: Payload) -> Payload:
        return {"agentctls": [launched.describe() for launched in self._launched.values()]}

    async def _checkout(self, payload: Payload) -> Payload:
        operation, args = payload.get("op"), payload.get("args", {})
        if found := checkouts.problems(operation, args):
            raise ActionError.invalid(found)
        try:
            # git blocks for as long as it takes: never on the loop that serves every client.
            result = await asyncio.to_thread(self._checkouts.perform, operation, args)  # type: ignore[arg-type]
        except git.GitError as error:
            raise ActionError(
                ErrorCode.GIT_ERROR, error.detail, {"failure": error.failure.value, "detail": error.detail}
            ) from None
        return {"result": result}

    # Bookkeeping ----------------------------------------------------------

    def _remember(self, launched: Launched) -> None:
        self._launched[launched.launch_id] = launched
        ended = [key for key, value in self._launched.items() if not value.running]
        for key in ended[: max(0, len(ended) - REMEMBERED_EXITS)]:
            del self._launched[key]

    async def _watch(self, launched: Launched, process: AgentctlProcess) -> None:
        launched.exit_code = await process.wait()
        launched.process = None
        logger.info("agentctl %s ended (exit code %s)", launched.launch_id, launched.exit_code)
        self._emit("agentctl.exited", {"launch_id": launched.launch_id, "exit_code": launched.exit_code})
