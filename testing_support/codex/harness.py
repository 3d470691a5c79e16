"""Run the real Codex ACP adapter as the agent of a real kandev-agentctl, offline.

``codex_session`` sets up what docs/testing.md#the-codex-suite describes: a
fresh empty HOME and ``CODEX_HOME`` holding the offline ``config.toml``, Codex
signed in through the ACP ``gateway`` method to a ``FakeResponsesApi`` on
127.0.0.1, a loopback proxy answering 403 as the safety net for anything
else, and nothing inherited from the test's own environment. Every process of
the run carries the bridge suite's marker in its environment, so whatever
outlives agentctl (the adapter, the Codex app-server it spawns) is found and
killed by pid, and reported.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kandev_web.agentctl.auth import GATEWAY_HEADERS_VAR
from kandev_web.agentctl.scrub import SECRET_NAMES_VAR
from testing_support.agent_runs import MARKER_VAR, AgentRun, agent_session
from testing_support.fake_model_server import DenyingProxy, proxy_env

from . import OFFLINE_CONFIG, Codex
from .fake_responses_api import FakeResponsesApi

#: Everything a test of one run looks at (``testing_support.agent_runs``).
type CodexRun = AgentRun[FakeResponsesApi]

#: A header the gateway sign-in hands Codex, to see it reach the model server.
GATEWAY_HEADERS = {"X-Kandev-Gateway": "kandev-gateway-test-header"}
PROVIDER_NAME = "kandev-fake"


def offline_environment(codex: Codex, root: Path, *, proxy: DenyingProxy, marker: str) -> dict[str, str]:
    """The whole environment Codex needs offline, rooted in ``root`` (a fresh folder): also a profile's ``env``.

    A fresh HOME whose ``.codex/config.toml`` (``CODEX_HOME``) turns off every
    outside service, the ChatGPT browser sign-in hidden, ``proxy`` as the
    safety net for anything else, and ``MARKER_VAR=marker``.
    """
    home, tmp = root / "home", root / "tmp"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(OFFLINE_CONFIG)
    tmp.mkdir()
    return {
        "PATH": os.pathsep.join([str(Path(codex.node).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        # The adapter hides its ChatGPT browser sign-in.
        "NO_BROWSER": "1",
        **proxy_env(proxy),
        MARKER_VAR: marker,
    }


@contextlib.asynccontextmanager
async def codex_session(codex: Codex, tmp_path: Path, api: FakeResponsesApi) -> AsyncIterator[CodexRun]:
    """agentctl running the adapter against ``api``, a connected client; all of it gone afterwards."""
    workdir = tmp_path / "project"
    workdir.mkdir(parents=True)
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = offline_environment(codex, tmp_path, proxy=proxy, marker=marker)
        env[GATEWAY_HEADERS_VAR] = json.dumps(GATEWAY_HEADERS)
        env[SECRET_NAMES_VAR] = GATEWAY_HEADERS_VAR
        async with agent_session(codex.argv, env, api=api, proxy=proxy, workdir=workdir, marker=marker) as run:
            yield run


async def initialize(run: CodexRun, *, elicitation: bool = True, auth_gateway: bool = True) -> dict[str, Any]:
    return await run.request(
        "agent.initialize",
        {
            "agent_id": "codex-acp",
            "runtime_flags": {"features.acpElicitation": elicitation},
            "auth_gateway": auth_gateway,
        },
    )


async def open_session(
    run: CodexRun,
    *,
    elicitation: bool = True,
    plan: bool = True,
    mode: str | None = None,
    mcp_servers: list[dict[str, Any]] | None = None,
) -> str:
    """``agent.initialize`` asking for the gateway sign-in, then a session signed in to the fake.

    In Plan mode (``collaboration_mode``) unless ``plan`` is false; ``mode`` is
    the adapter's approval preset (its default, ``agent``, has a model review
    each action; ``workspace-write`` asks the client, as ``session/request_permission``).
    """
    await initialize(run, elicitation=elicitation)
    payload: dict[str, Any] = {
        "cwd": str(run.workdir),
        "mcp_servers": mcp_servers or [],
        "auth_method": "gateway",
        "gateway": {"base_url": run.api.base_url, "provider_name": PROVIDER_NAME},
    }
    options = {"collaboration_mode": "plan"} if plan else {}
    if mode is not None:
        options["mode"] = mode
    if options:
        payload["config_options"] = options
    session = await run.request("agent.session.new", payload)
    return str(session["session_id"])
