"""The ``call_mcp_tool`` step: call a tool on an MCP server the client gave the session.

``{"call_mcp_tool": {"server": "kandev", "tool": "ask_user_question_kandev",
"arguments": {...}, "as": "tool_result"}}`` stores ``{"content": <the tool's
structured result or text>, "is_error": bool, "progress": <keepalives seen>}``.
Only HTTP servers from ``session/new``'s ``mcpServers`` are supported, which is
what Kandev hands out. A cancelled turn stops waiting for the tool.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kandev_web.mock_agent.engine import Turn, TurnCancelled, step


def _server(turn: Turn, name: str) -> dict[str, Any]:
    for server in turn.variables.get("mcp_servers") or []:
        if isinstance(server, dict) and server.get("name") == name and server.get("type") == "http":
            return server
    raise LookupError(f"the client gave this session no HTTP MCP server named {name!r}")


async def _call(server: dict[str, Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # Imported here: the MCP client takes a second to load, and most scenarios never call a tool.
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {h["name"]: h["value"] for h in server.get("headers", []) if isinstance(h, dict)}
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http:
        async with streamable_http_client(server["url"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments, progress_callback=on_progress)
    text = "".join(getattr(block, "text", "") for block in result.content)
    content: Any = result.structured_content
    if content is None:
        try:
            content = json.loads(text)
        except ValueError:
            content = text
    return {"content": content, "is_error": bool(result.is_error), "progress": len(progress)}


@step("call_mcp_tool")
async def _call_mcp_tool(turn: Turn, spec: dict[str, Any]) -> None:
    spec = turn.render(spec)
    try:
        server = _server(turn, spec.get("server", "kandev"))
    except LookupError as missing:
        turn.variables[spec.get("as", "tool_result")] = {"content": str(missing), "is_error": True, "progress": 0}
        return
    call = asyncio.ensure_future(_call(server, spec["tool"], spec.get("arguments") or {}))
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
    except Exception as error:  # the tool call failed: the agent sees why, as a model would
        outcome = {"content": f"{type(error).__name__}: {error}", "is_error": True, "progress": 0}
    turn.variables[spec.get("as", "tool_result")] = outcome
