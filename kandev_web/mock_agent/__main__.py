"""``python -m kandev_web.mock_agent`` (or ``kandev-mock-agent``): the mock agent on stdio.

``--no-mcp-http`` makes it an agent that cannot speak MCP over HTTP, like
several ACP agents: it then gets Kandev's MCP server as a stdio one.

``KANDEV_MOCK_SESSION_DIR`` (a directory) makes it keep its sessions there and
offer to take them up again in a later process (``store.py``);
``--no-session-resume`` then leaves ``session/resume`` out, so that only
``session/load`` is offered, as by agents older than ``session/resume``.

``--session-settings`` makes its sessions offer modes, slash commands and
(to a client that can show one) an on/off option, as the agents Zed drives do.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from kandev_web.agentctl.jsonrpc import LINE_LIMIT
from kandev_web.mock_agent.agent import MockAgent
from kandev_web.mock_agent.store import SessionStore


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kandev-mock-agent", description="The scripted ACP agent, on stdio.")
    parser.add_argument(
        "--no-mcp-http", action="store_true", help="do not advertise mcpCapabilities.http (MCP over stdio only)"
    )
    parser.add_argument(
        "--no-session-resume",
        action="store_true",
        help="with KANDEV_MOCK_SESSION_DIR, offer session/load only, not session/resume",
    )
    parser.add_argument(
        "--session-settings",
        action="store_true",
        help="offer modes, slash commands and a boolean config option in every session",
    )
    options = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kandev-mock-agent %(levelname)s: %(message)s")
    asyncio.run(
        _serve(
            mcp_http=not options.no_mcp_http,
            resume=not options.no_session_resume,
            session_settings=options.session_settings,
        )
    )
    return 0


async def _serve(*, mcp_http: bool, resume: bool, session_settings: bool) -> None:
    reader, writer = await _stdio()
    store = SessionStore.from_environment()
    agent = MockAgent(reader, writer, mcp_http=mcp_http, store=store, resume=resume, session_settings=session_settings)
    await agent.run()


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and stdout as asyncio streams; stdout then carries nothing but JSON-RPC."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer


if __name__ == "__main__":
    sys.exit(main())
