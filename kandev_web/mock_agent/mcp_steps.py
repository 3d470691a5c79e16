"""The ``call_mcp_tool`` step: call a tool on an MCP server the client gave the session.

``{"call_mcp_tool": {"server": "kandev", "tool": "ask_user_question_kandev",
"arguments": {...}, "as": "tool_result"}}`` stores ``{"content": <the tool's
structured result or text>, "is_error": bool, "progress": <keepalives seen>}``.
The server may be an HTTP one from ``session/new``'s ``mcpServers`` or a stdio
one (``command``, ``args``, ``env``), which the agent starts as a real agent
would: agentctl hands out Kandev's server that way to an agent that does not
advertise ``mcpCapabilities.http`` (``kandev-mock-agent --no-mcp-http``).
``{"list_mcp_tools": {"server": "kandev", "as": "tools"}}`` stores the names of
the server's tools, comma-separated. A cancelled turn stops waiting for the tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kandev_web.mock_agent.engine import Turn, TurnCancelled, step


def _server(turn: Turn, name: str) -> dict[str, Any]:
    for server in turn.variables.get("mcp_servers") or []:
        if isinstance(server, dict) and server.get("name") == name and (_is_http(server) or "command" in server):
            return server
    raise LookupError(f"the client gave this session no HTTP or stdio MCP server named {name!r}")


def _is_http(server: dict[str, Any]) -> bool:
    return server.get("type") == "http"


@contextlib.asynccontextmanager
async def _session(server: dict[str, Any]) -> AsyncIterator[Any]:
    """An initialized MCP client session with ``server``, over its transport."""
    # Imported here: the MCP client takes a second to load, and most scenarios never call a tool.
    from mcp.client.session import ClientSession

    async with contextlib.AsyncExitStack() as stack:
        if _is_http(server):
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {h["name"]: h["value"] for h in server.get("headers", []) if isinstance(h, dict)}
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None))
            )
            read, write = await stack.enter_async_context(streamable_http_client(server["url"], http_client=http))
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = {e["name"]: e["value"] for e in server.get("env", []) if isinstance(e, dict)}
            parameters = StdioServerParameters(command=server["command"], args=server.get("args") or [], env=env)
            read, write = await stack.enter_async_context(stdio_client(parameters))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


async def _call(server: dict[str, Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with _session(server) as session:
        result = await session.call_tool(tool, arguments, progress_callback=on_progress)
    text = "".join(getattr(block, "text", "") for block in result.content)
    content: Any = result.structured_content
    if content is None:
        try:
            content = json.loads(text)
        except ValueError:
            content = text
    return {"content": content, "is_error": bool(result.is_error), "progress": len(progress)}


async def _list(server: dict[str, Any]) -> str:
    async with _session(server) as session:
        return ", ".join(tool.name for tool in (await session.list_tools()).tools)


@step("list_mcp_tools")
async def _list_mcp_tools(turn: Turn, spec: dict[str, Any]) -> None:
    spec = turn.render(spec)
    await _until_cancelled(turn, spec, "tools", _list, failure=lambda text: f"(no tools: {text})")


@step("call_mcp_tool")
async def _call_mcp_tool(turn: Turn, spec: dict[str, Any]) -> None:
    spec = turn.render(spec)
    await _until_cancelled(
        turn,
        spec,
        "tool_result",
        lambda server: _call(server, spec["tool"], spec.get("arguments") or {}),
        failure=lambda text: {"content": text, "is_error": True, "progress": 0},
    )


async def _until_cancelled(
    turn: Turn,
    spec: dict[str, Any],
    default_as: str,
    work: Callable[[dict[str, Any]], Awaitable[Any]],
    *,
    failure: Callable[[str], Any],
) -> None:
    """Run ``work`` on the named server and store its outcome; a failure is stored as the agent would see it."""
    name = spec.get("as", default_as)
    try:
        server = _server(turn, spec.get("server", "kandev"))
    except LookupError as missing:
        turn.variables[name] = failure(str(missing))
        return
    call = asyncio.ensure_future(work(server))
    cancelled = asyncio.ensure_future(turn.cancelled.wait())
    try:
        await asyncio.wait({call, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancelled.cancel()
    if not call.done():
        call.cancel()
        raise TurnCancelled
    try:
        outcome = call.result()
    except Exception as error:  # the call failed: the agent sees why, as a model would
        outcome = failure(f"{type(error).__name__}: {error}")
    turn.variables[name] = outcome
