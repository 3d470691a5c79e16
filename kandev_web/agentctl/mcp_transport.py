"""How each MCP server in ``agent.session.new`` reaches the agent: as given, or through stdio.

ACP lets an agent say which MCP transports it speaks (``mcpCapabilities``
in its ``initialize`` answer); stdio is the one every agent must. Kandev's
own server is served over streamable HTTP, so for an agent that does not say
``http: true`` each HTTP server becomes a stdio one: ``kandev-mcp-stdio``
(``kandev_web.mcp_stdio``), started by the agent, proxying to the same URL with
the same headers. Which one an agent got is what ``agent.session.new`` reports.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

URL_VAR = "KANDEV_MCP_URL"
HEADERS_VAR = "KANDEV_MCP_HEADERS"


def speaks_http(agent_capabilities: Any) -> bool:
    """Whether the agent's ``agentCapabilities.mcpCapabilities.http`` is true."""
    if not isinstance(agent_capabilities, Mapping):
        return False
    mcp = agent_capabilities.get("mcpCapabilities")
    return isinstance(mcp, Mapping) and mcp.get("http") is True


def stdio_command() -> list[str]:
    """The installed ``kandev-mcp-stdio`` beside this interpreter, else the module: agentctl's host is the agent's."""
    script = Path(sys.executable).parent / "kandev-mcp-stdio"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "kandev_web.mcp_stdio"]


def servers_for_agent(servers: Sequence[Any], *, http: bool, command: Sequence[str]) -> list[Any]:
    """``servers`` as this agent can use them: HTTP ones through ``command`` unless it speaks HTTP."""
    if http:
        return list(servers)
    return [_through_stdio(server, command) if _is_http(server) else server for server in servers]


def transports(servers: Sequence[Any]) -> dict[str, str]:
    """Each named server's transport, as sent: ``{"kandev": "stdio"}``."""
    return {
        server["name"]: str(server.get("type") or "stdio")
        for server in servers
        if isinstance(server, Mapping) and isinstance(server.get("name"), str)
    }


def _is_http(server: Any) -> bool:
    return isinstance(server, Mapping) and server.get("type") == "http" and isinstance(server.get("url"), str)


def _through_stdio(server: Mapping[str, Any], command: Sequence[str]) -> dict[str, Any]:
    headers = [h for h in server.get("headers") or [] if isinstance(h, Mapping)]
    return {
        "name": server.get("name"),
        "command": command[0],
        "args": list(command[1:]),
        "env": [
            {"name": URL_VAR, "value": server["url"]},
            {"name": HEADERS_VAR, "value": json.dumps(headers)},
        ],
    }
