"""Check a profile: ACP ``initialize`` through agentctl on the profile's host, without opening a session.

The check starts agentctl the way a session does (here, or through the
profile's executor, with the environment a session's agent would get), asks
``agent.initialize`` and stops it again. What it found — the answer, or why
there is none — is stored on the profile (``last_check``) as JSON that
``check_report`` turns into sentences, and whose auth methods the profile's
form offers.

It is all awaited on the server's event loop, with nothing blocking it, and
bounded as a whole by ``KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS``: an agent that
never answers costs one timeout, after which agentctl (and with it the agent)
is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import shlex
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web.agentctl.launcher import AgentctlProcess, LaunchError, launch
from kandev_web.agentctl.stream_client import AgentStreamClient, Backoff, StreamError
from kandev_web.agents.check_report import Outcome
from kandev_web.agents.models import AgentProfile
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshAgentctl, SshError, SshExecutor
from kandev_web.repositories.hosts import executor_client
from kandev_web.secret_box import SecretUnreadable

from .launching import agent_environment, launch_environment
from .ssh_reasons import ssh_reason

logger = logging.getLogger(__name__)

#: After agentctl says the agent exited, how long to wait for its ``agent.exited`` (exit code, stderr tail).
EXIT_REPORT_SECONDS = 3.0
#: How long stopping agentctl after a check may take before it is killed.
STOP_SECONDS = 10.0


@dataclass(frozen=True)
class CheckSpec:
    """What a check needs of a profile, read from the database before anything is awaited."""

    argv: list[str]
    env: dict[str, str] = field(repr=False)  # a profile's secrets: never logged
    agent_id: str
    #: Where it runs, for the sentences: "this machine" or the executor's name.
    host: str
    executor: SshAddress | None = None
    workdir: str = ""
    #: The profile's secrets, still sealed: opened only as agentctl starts (``launching.launch_environment``).
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)
    #: A profile with a model gateway asks for the gateway sign-in, so the check lists it.
    auth_gateway: bool = False


def spec_for(profile: AgentProfile) -> CheckSpec:
    executor = profile.executor
    return CheckSpec(
        argv=[str(arg) for arg in profile.command],
        env=agent_environment(profile.env, remote=executor is not None),
        agent_id=profile.agent_id,
        host=executor.name if executor else _("this machine"),
        executor=executor.address if executor else None,
        workdir=profile.working_dir,
        secret_env=dict(profile.secret_env),
        auth_gateway=bool(profile.gateway_base_url),
    )


async def run_check(spec: CheckSpec, timeout: float | None = None) -> dict:
    """The outcome of one check, as stored JSON; never raises for anything the agent or agentctl does."""
    timeout = settings.KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS if timeout is None else timeout
    found: dict = {"host": spec.host, "command": shlex.join(spec.argv)}
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[dict] = loop.create_future()

    def notified(action: str, payload: dict) -> None:
        if action == "agent.exited" and not exited.done():
            exited.set_result(payload)

    executor: SshExecutor | None = None
    process: AgentctlProcess | SshAgentctl | None = None
    started = loop.time()
    try:
        async with asyncio.timeout(timeout):
            try:
                env = launch_environment(spec.env, spec.secret_env)
            except SecretUnreadable as error:
                return found | {"outcome": Outcome.UNREACHABLE, "message": str(error)}
            try:
                if spec.executor is None:
                    process = await launch(spec.argv, env=env, host="127.0.0.1", ready_timeout=timeout)
                else:
                    executor = executor_client(spec.executor)
                    process = await executor.launch(
                        spec.argv,
                        env=env,
                        token=secrets.token_urlsafe(32),
                        workdir=spec.workdir,
                        workdir_name=f"check-{uuid.uuid4().hex[:12]}",
                    )
            except SshError as error:
                return found | {"outcome": Outcome.UNREACHABLE, "message": ssh_reason(spec.executor, error)}
            except (LaunchError, StreamError) as error:
                return found | {"outcome": Outcome.UNREACHABLE, "message": str(error)}
            async with AgentStreamClient(
                process.url, process.token, on_notification=notified, backoff=Backoff(attempts=0)
            ) as client:
                try:
                    initialize: dict = {"agent_id": spec.agent_id, "runtime_flags": {}}
                    if spec.auth_gateway:
                        initialize["auth_gateway"] = True
                    answer = await client.request("agent.initialize", initialize, timeout=timeout)
                except StreamError as error:
                    return found | await _failure(error, exited)
        return found | {"outcome": Outcome.OK, "answer": answer, "seconds": round(loop.time() - started, 2)}
    except TimeoutError:
        return found | {"outcome": Outcome.TIMED_OUT, "seconds": timeout}
    finally:
        if process is not None:
            with contextlib.suppress(StreamError, TimeoutError, ProcessLookupError):
                await process.stop(timeout=STOP_SECONDS)
        if executor is not None:
            await executor.close()


async def _failure(error: StreamError, exited: asyncio.Future[dict]) -> dict:
    """Why agentctl's ``agent.initialize`` failed, from its message and the agent's ``agent.exited``."""
    message = error.message
    if message.startswith("could not start"):
        return {"outcome": Outcome.CANNOT_START, "reason": message.rpartition(": ")[2]}
    agent_error = (error.details or {}).get("error")
    if isinstance(agent_error, dict):
        return {"outcome": Outcome.REFUSED, "message": str(agent_error.get("message") or message)}
    if "exited" in message:
        with contextlib.suppress(TimeoutError):
            report = await asyncio.wait_for(asyncio.shield(exited), EXIT_REPORT_SECONDS)
            return {
                "outcome": Outcome.EXITED,
                "exit_code": report.get("exit_code"),
                "signal": report.get("signal"),
                "stderr_tail": report.get("stderr_tail") or "",
            }
        return {"outcome": Outcome.EXITED, "exit_code": None, "signal": None, "stderr_tail": ""}
    return {"outcome": Outcome.REFUSED, "message": message}


def record(profile_id: int, outcome: dict) -> AgentProfile | None:
    """Store a check's outcome on its profile (gone meanwhile: None)."""
    updated = AgentProfile.objects.filter(pk=profile_id).update(last_check=outcome, checked_at=timezone.now())
    if not updated:
        return None
    logger.info("checked agent profile %s: %s", profile_id, outcome.get("outcome"))
    return AgentProfile.objects.select_related("executor").get(pk=profile_id)
