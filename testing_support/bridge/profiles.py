"""The real bridge (or another agent of a spec's own) as an agent profile of a running web server.

- :func:`create_profile` writes an ``AgentProfile`` into a running server's
  database (through ``manage.py shell``), so a spec can choose it in the task
  view's start form.
- :func:`orm` runs a snippet of ORM code there and returns what it printed as JSON;
  :func:`create_repository` registers a repository with it.
- :func:`claude_bridge_environment` is :mod:`.harness`'s offline setup for the
  real Claude ACP bridge (fake Messages API, denying proxy, fresh HOME with the
  harness's settings, privacy switches, a marker in every process's
  environment), as the ``env`` of a profile instead of agentctl's environment.
- :func:`wait_until_gone` / :func:`kill_marked` (from ``testing_support.agent_runs``) find the processes of such a
  run by that marker, so none outlives the spec.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testing_support.agent_runs import MARKER_VAR, kill_marked, wait_until_gone

from . import Bridge
from .fake_messages_api import DenyingProxy, FakeMessagesApi
from .harness import USER_SETTINGS, clean_env

__all__ = [
    "MARKER_VAR",
    "claude_bridge_environment",
    "create_profile",
    "create_repository",
    "kill_marked",
    "orm",
    "wait_until_gone",
]


def orm(server, code: str) -> Any:
    """Run ``code`` in ``manage.py shell`` against ``server``'s database; its last printed line, as JSON."""
    output = server.manage("shell", "-v", "0", "-c", code)
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        raise AssertionError(f"the shell printed nothing for:\n{code}")
    return json.loads(lines[-1])


def create_repository(
    server, *, workspace_id: int, path: Path, name: str = "shop", default_branch: str = "main"
) -> int:
    """Register the git repository at ``path`` in ``workspace_id`` (as its admins would); returns its primary key."""
    return orm(
        server,
        "import json\nfrom kandev_web.repositories.models import Repository\n"
        f"r = Repository.objects.create(workspace_id={workspace_id}, name={name!r}, path={str(path)!r},"
        f" default_branch={default_branch!r})\nprint(json.dumps(r.pk))",
    )


def create_profile(
    server,
    *,
    workspace_id: int,
    name: str,
    agent_id: str,
    command: list[str],
    env: dict[str, str],
    working_dir: str = "",
    mcp_servers: list[dict] | None = None,
) -> int:
    """A new agent profile in ``workspace_id``; returns its primary key."""
    spec = {
        "workspace_id": workspace_id,
        "name": name,
        "agent_id": agent_id,
        "command": [str(arg) for arg in command],
        "env": {str(key): str(value) for key, value in env.items()},
        "working_dir": working_dir,
        "mcp_servers": mcp_servers or [],
    }
    code = (
        "import json\n"
        "from kandev_web.agents.models import AgentProfile\n"
        f"spec = json.loads({json.dumps(spec)!r})\n"
        "print(json.dumps(AgentProfile.objects.create(**spec).pk))\n"
    )
    return int(orm(server, code))


def claude_bridge_environment(
    bridge: Bridge, root: Path, *, api: FakeMessagesApi, proxy: DenyingProxy, marker: str
) -> dict[str, str]:
    """The whole environment the bridge needs, rooted in ``root`` (a fresh folder).

    The same as ``harness.py`` gives agentctl: a fresh HOME whose
    ``.claude/settings.json`` keeps 0.101.0 in permission mode ``default``, the
    CLI pointed at ``api`` with a dummy key, the privacy switches, ``proxy`` as
    the safety net for anything else, and ``MARKER_VAR=marker``. As a profile's
    ``env`` it replaces what the agent would inherit from the web process.
    """
    home, tmp = root / "home", root / "tmp"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    tmp.mkdir()
    return clean_env(bridge, home=home, tmp=tmp, api=api, proxy=proxy, marker=marker)
