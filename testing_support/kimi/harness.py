"""Run real Kimi Code as the agent of a real kandev-agentctl, offline.

``kimi_environment`` is the whole environment Kimi gets: a fresh empty HOME and
``KIMI_CODE_HOME`` whose ``config.toml`` points the default model at a
``FakeChatCompletions`` on 127.0.0.1 with a dummy key, the switches that stop
its update check and telemetry, a loopback proxy answering 403 as the safety
net for anything else, and a unique marker by which whatever outlives
agentctl is found and killed by pid, and reported. ``kimi_session`` runs it
under agentctl with a connected client (``testing_support.agent_runs``).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from testing_support.agent_runs import MARKER_VAR, AgentRun, agent_session
from testing_support.fake_model_server import DenyingProxy, proxy_env

from . import Kimi
from .fake_chat_completions import MODEL, FakeChatCompletions

#: A dummy key: with one configured, Kimi needs no sign-in to its own service.
API_KEY = "sk-fake-kandev-kimi-tests-0000000000"
#: Everything a test of one run looks at (``testing_support.agent_runs``).
type KimiRun = AgentRun[FakeChatCompletions]

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
        **proxy_env(proxy),
        MARKER_VAR: marker,
    }


@contextlib.asynccontextmanager
async def kimi_session(kimi: Kimi, tmp_path: Path, api: FakeChatCompletions) -> AsyncIterator[KimiRun]:
    """agentctl running ``kimi`` against ``api``, a connected client; all of it gone afterwards."""
    workdir = tmp_path / "project"
    workdir.mkdir()
    marker = uuid.uuid4().hex
    with DenyingProxy() as proxy, api:
        env = kimi_environment(kimi, tmp_path / "kimi", api=api, proxy=proxy, marker=marker)
        async with agent_session(kimi.argv, env, api=api, proxy=proxy, workdir=workdir, marker=marker) as run:
            yield run


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
