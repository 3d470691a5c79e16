"""The real Codex ACP adapter, installed from npm by scripts/test, and everything to run it offline.

scripts/test installs ``@agentclientprotocol/codex-acp`` at :data:`CODEX_VERSION`
(with the Codex binary, from the npm optional dependency
``@openai/codex-linux-x64``) into ``var/codex/<version>/`` and exports its
entry point as ``KANDEV_CODEX_ACP``. When the variable is unset (pytest run by
hand) the same file is used if it is there. An adapter that is not installed
is a failure, never a skip: these tests are the evidence that agentctl works
with the real peer.

- :mod:`.harness`: the adapter as the agent of a real kandev-agentctl, offline;
- :mod:`.fake_responses_api`: the OpenAI Responses API Codex talks to, scripted.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODEX_VERSION = "2.6.0"
PACKAGE = "@agentclientprotocol/codex-acp"
ENV_VAR = "KANDEV_CODEX_ACP"

#: Codex's ``config.toml`` that keeps it from reaching any service of its own
#: (docs/operating.md#codex): no plugins or apps, no analytics,
#: feedback or OpenTelemetry export, no update check.
OFFLINE_CONFIG = """\
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
apps = false
"""


@dataclass(frozen=True)
class Codex:
    """The installed adapter and the node that runs it."""

    entry: Path  # dist/index.js
    node: str

    @property
    def argv(self) -> list[str]:
        """The agent command: the adapter speaking ACP on stdio."""
        return [self.node, str(self.entry)]


def find_codex() -> Codex:
    """The installed adapter, or fail saying how to install it."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the real-Codex tests need Node.js (scripts/test expects Node 20+)")
    prefix = ROOT / "var" / "codex" / CODEX_VERSION
    configured = os.environ.get(ENV_VAR)
    entry = Path(configured) if configured else prefix / "node_modules" / PACKAGE / "dist" / "index.js"
    how = f"scripts/test installs it (npm install --prefix var/codex/{CODEX_VERSION} {PACKAGE}@{CODEX_VERSION})"
    manifest = entry.parent.parent / "package.json"
    if not entry.is_file() or not manifest.is_file():
        pytest.fail(f"{PACKAGE}@{CODEX_VERSION} is not installed at {entry}: {how}")
    installed = json.loads(manifest.read_text()).get("version")
    if installed != CODEX_VERSION:
        pytest.fail(f"{entry} is {PACKAGE}@{installed}, not {CODEX_VERSION}: {how}")
    return Codex(entry=entry.resolve(), node=node)
