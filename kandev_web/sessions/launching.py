"""Starting an execution's agentctl: here, or on the profile's executor host over SSH.

What the runner hands agentctl when it starts one (the plan, the
environment, the working directory), apart from what it does with the
stream once agentctl listens (``runner``).
"""

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from kandev_web.agentctl.cli import EXECUTION_VAR, LOG_FORMAT_VAR
from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.scrub import SECRET_NAMES_VAR
from kandev_web.agents.models import secret_box
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshAgentctl, SshExecutor

#: What an agent inherits from the web process; everything else (database URL,
#: secret key, ...) stays here. A profile's own ``env`` is added on top.
INHERITED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SHELL", "VIRTUAL_ENV")
#: ``KANDEV_AGENTCTL_*`` are agentctl's own settings (its log level, its exit grace).
INHERITED_PREFIXES = ("KANDEV_ELICITATION_", "KANDEV_ACP_", "KANDEV_AGENTCTL_")


@dataclass(frozen=True)
class LaunchPlan:
    task_id: int
    session_id: int
    execution_id: int
    agent_id: str
    argv: list[str]
    #: The profile's own variables; the machine the agent runs on adds its own.
    env: dict[str, str]
    #: The profile's working directory; empty means one per task.
    workdir: str
    runtime_flags: dict[str, bool]
    mcp_servers: list[dict]
    #: The ACP auth method the profile chose; empty leaves it to agentctl.
    auth_method: str = ""
    #: The model gateway the agent signs in to (Codex's ``gateway`` method); empty: none.
    gateway_base_url: str = ""
    #: ACP session config options set at session start (``{option: value}``).
    config_options: dict[str, str] = field(default_factory=dict)
    #: None runs agentctl here, on this web machine.
    executor: SshAddress | None = None
    #: The profile's secrets, still sealed (``{name: token}``): opened only
    #: as agentctl is started (:func:`launch_environment`).
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)


#: The ``provider_name`` of the gateway sign-in: what the agent calls the model server.
GATEWAY_PROVIDER_NAME = "kandev"


def auth_gateway_fields(plan: LaunchPlan) -> dict:
    """What ``agent.initialize``'s payload gains for a profile with a gateway: nothing for any other (AC-02's bytes)."""
    return {"auth_gateway": True} if plan.gateway_base_url else {}


def session_payload(plan: LaunchPlan, cwd: str) -> dict:
    """What ``agent.session.new`` and ``agent.session.resume`` share: where, the MCP servers, how to sign in.

    A profile with a gateway and no auth method chosen signs in with the gateway method.
    """
    payload: dict = {"cwd": cwd, "mcp_servers": plan.mcp_servers}
    auth_method = plan.auth_method or ("gateway" if plan.gateway_base_url else "")
    if auth_method:
        payload["auth_method"] = auth_method
    if plan.gateway_base_url:
        payload["gateway"] = {"base_url": plan.gateway_base_url, "provider_name": GATEWAY_PROVIDER_NAME}
    if plan.config_options:
        payload["config_options"] = dict(plan.config_options)
    return payload


def agent_environment(profile_env: dict[str, str], *, remote: bool = False) -> dict[str, str]:
    """What the agent gets from here; on an executor host, PATH, HOME and the like are that host's."""
    env = {
        k: v for k, v in os.environ.items() if k.startswith(INHERITED_PREFIXES) or (k in INHERITED_ENV and not remote)
    }
    env.update({str(k): str(v) for k, v in profile_env.items()})
    return env


def launch_environment(env: dict[str, str], sealed: dict[str, str]) -> dict[str, str]:
    """``env`` with the profile's secrets opened into it, for agentctl and its agent alone.

    agentctl is told their names (never their values twice) so that it masks
    the values wherever the agent repeats them (``agentctl/scrub.py``).
    Raises ``SecretUnreadable`` when one does not open with the configured keys.
    """
    opened = secret_box().open_all(sealed)
    return {**env, **opened, SECRET_NAMES_VAR: ",".join(sorted(opened))}


def working_dir(task_id: int, configured: str) -> str:
    path = Path(configured) if configured else settings.VAR_DIR / "workdirs" / f"task-{task_id}"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


async def start_agentctl(
    plan: LaunchPlan, executor: Callable[[SshAddress], SshExecutor]
) -> tuple[AgentctlProcess | SshAgentctl, str]:
    """Start agentctl where the profile says, and return it with the agent's working directory.

    ``executor`` gives this process's connection to an executor host, shared by its executions there.
    """
    env = launch_environment(plan.env, plan.secret_env)
    # agentctl's log lines name this execution, in the format of this process's own.
    env |= {EXECUTION_VAR: str(plan.execution_id), LOG_FORMAT_VAR: settings.KANDEV_LOG_FORMAT}
    if plan.executor is None:
        cwd = working_dir(plan.task_id, plan.workdir)
        return await launch(plan.argv, env=env, host=settings.KANDEV_AGENTCTL_HOST), cwd
    remote = await executor(plan.executor).launch(
        plan.argv,
        env=env,
        token=secrets.token_urlsafe(32),
        workdir=plan.workdir,
        workdir_name=f"task-{plan.task_id}",
    )
    return remote, remote.cwd
