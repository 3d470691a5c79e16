"""``kandev-mcp-stdio``: Kandev's MCP server for an agent that speaks MCP only over stdio.

agentctl hands Kandev's MCP server to an agent over HTTP when the agent's
``mcpCapabilities.http`` says it can; otherwise it hands it this program as a
stdio MCP server (``kandev_web.agentctl.mcp_transport``). The agent starts it
and speaks MCP on its stdin and stdout; every message is passed on, unchanged,
to the web app's streamable-HTTP endpoint, and every answer, progress
notification and keepalive comes back the same way. The SDK does both ends;
this module only joins them.

Where to go comes from the environment the agent gives it: ``KANDEV_MCP_URL``
and ``KANDEV_MCP_HEADERS`` (a JSON list of ACP ``{"name", "value"}`` headers;
Kandev's carries the session's bearer token). Nothing it carries is logged.
No Django here: it runs on whatever host runs the agent.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterable
from contextlib import aclosing
from typing import Any, Protocol

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

URL_VAR = "KANDEV_MCP_URL"
HEADERS_VAR = "KANDEV_MCP_HEADERS"

#: A tool call waits for a person: no read timeout, as for the agents that speak HTTP.
_TIMEOUT = httpx2.Timeout(30, read=None)


class ConfigError(Exception):
    """The environment does not say where the MCP endpoint is."""


def headers_from(value: str) -> dict[str, str]:
    """``KANDEV_MCP_HEADERS`` as a mapping; a value that is not a list of headers is an error."""
    try:
        raw: Any = json.loads(value) if value else []
    except ValueError:
        raise ConfigError(f"{HEADERS_VAR} is not JSON") from None
    if not isinstance(raw, list) or not all(
        isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str) for h in raw
    ):
        raise ConfigError(f'{HEADERS_VAR} must be a JSON list of {{"name", "value"}} strings')
    return {header["name"]: header["value"] for header in raw}


class _Sink(Protocol):
    """What the SDK's write streams, the web app's and stdout's, have in common (its own protocol is private)."""

    async def send(self, item: SessionMessage, /) -> None: ...

    async def aclose(self) -> None: ...


async def _pump(source: AsyncIterable[SessionMessage | Exception], sink: _Sink, side: str) -> None:
    async with aclosing(sink):
        async for message in source:
            if isinstance(message, Exception):
                # A line that is not JSON-RPC, or a transport hiccup the SDK
                # could not pin on a request: nobody can be answered for it.
                print(f"kandev-mcp-stdio: dropped an unreadable message from the {side}", file=sys.stderr)
                continue
            await sink.send(message)


async def serve(url: str, headers: dict[str, str]) -> None:
    """Proxy this process's stdio to ``url`` until the agent closes stdin."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=_TIMEOUT) as http,
        streamable_http_client(url, http_client=http) as (from_web, to_web),
        stdio_server() as (from_agent, to_agent),
        anyio.create_task_group() as group,
    ):
        group.start_soon(_pump, from_web, to_agent, "web app")
        await _pump(from_agent, to_web, "agent")
        group.cancel_scope.cancel()


def main() -> int:
    url = os.environ.get(URL_VAR, "")
    try:
        if not url:
            raise ConfigError(f"{URL_VAR} is not set")
        headers = headers_from(os.environ.get(HEADERS_VAR, ""))
    except ConfigError as error:
        print(f"kandev-mcp-stdio: {error}", file=sys.stderr)
        return 2
    anyio.run(serve, url, headers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
