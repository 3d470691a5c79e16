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

import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from testing_support.agent_runs import EXIT_TIMEOUT, MARKER_VAR, AgentRun, agent_session, marked_processes, reap
from testing_support.fake_model_server import proxy_env

from . import Bridge
from .fake_messages_api import DenyingProxy, FakeMessagesApi

__all__ = [
    "EXIT_TIMEOUT",
    "MARKER_VAR",
    "BridgeRun",
    "bridge_session",
    "clean_env",
    "marked_processes",
    "open_session",
    "reap",
]

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


#: Everything a test of one run looks at (``testing_support.agent_runs``).
type BridgeRun = AgentRun[FakeMessagesApi]


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
        **proxy_env(proxy),
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
        async with agent_session(bridge.argv, env, api=api, proxy=proxy, workdir=workdir, marker=marker) as run:
            yield run


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
