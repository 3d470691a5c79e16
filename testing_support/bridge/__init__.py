"""The real Claude ACP bridge, installed from npm by scripts/test, and everything to run it offline.

scripts/test installs ``@agentclientprotocol/claude-agent-acp`` at each
version below into ``var/bridge/<version>/`` and exports the package folder as
``KANDEV_BRIDGE_<version with underscores>`` (``KANDEV_BRIDGE_0_65_0``). When
the variable is unset (pytest run by hand) the same folder is used if it is
there. A bridge that is not installed is a failure, never a skip: these tests
are the evidence that agentctl works with the real peer.

- :mod:`.harness`: the bridge as the agent of a real kandev-agentctl, offline;
- :mod:`.fake_messages_api`: the Anthropic Messages API it talks to, scripted;
- :mod:`.ask_script`: the conversation in which the model asks with AskUserQuestion;
- :mod:`.forms`: an MCP server's typed form, forwarded by the bridge (``forms_mcp_server.py``);
- :mod:`.profiles`: the bridge as the agent profile of a running web server (the browser specs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE_VERSIONS = ("0.65.0", "0.101.0")
PACKAGE = "@agentclientprotocol/claude-agent-acp"
HELPER = Path(__file__).with_name("bridge_elicitation.mjs")
NODE_CALL_TIMEOUT = 30.0


def env_var(version: str) -> str:
    return "KANDEV_BRIDGE_" + version.replace(".", "_")


@dataclass(frozen=True)
class Bridge:
    """One installed bridge version and the node that runs it."""

    version: str
    package: Path  # the folder holding the bridge's package.json
    node: str

    @property
    def argv(self) -> list[str]:
        """The agent command: the bridge speaking ACP on stdio."""
        return [self.node, str(self.package / "dist" / "index.js")]

    def call(self, calls: Any) -> Any:
        """Run bridge_elicitation.mjs on one call or a list of them (see that file)."""
        done = subprocess.run(
            [self.node, str(HELPER), str(self.package)],
            input=json.dumps(calls),
            capture_output=True,
            text=True,
            timeout=NODE_CALL_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"bridge_elicitation.mjs failed on {self.version} (exit {done.returncode}):\n{done.stderr}")
        return json.loads(done.stdout)


def find_bridge(version: str) -> Bridge:
    """The installed bridge at ``version``, or fail saying how to install it."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the real-bridge tests need Node.js (scripts/test expects Node 20+)")
    configured = os.environ.get(env_var(version))
    package = Path(configured) if configured else ROOT / "var" / "bridge" / version / "node_modules" / PACKAGE
    how = f"scripts/test installs it (npm install --prefix var/bridge/{version} {PACKAGE}@{version})"
    manifest = package / "package.json"
    if not manifest.is_file():
        pytest.fail(f"{PACKAGE}@{version} is not installed at {package}: {how}")
    installed = json.loads(manifest.read_text()).get("version")
    if installed != version:
        pytest.fail(f"{package} holds {PACKAGE}@{installed}, not {version}: {how}")
    for shipped in ("index.js", "elicitation.js"):
        if not (package / "dist" / shipped).is_file():
            pytest.fail(f"{package}/dist/{shipped} is missing; reinstall: {how}")
    return Bridge(version=version, package=package.resolve(), node=node)
