"""``python -m kandev_web.mock_agent`` (or ``kandev-mock-agent``): the mock agent on stdio."""

from __future__ import annotations

import asyncio
import logging
import sys

from kandev_web.agentctl.jsonrpc import LINE_LIMIT
from kandev_web.mock_agent.agent import MockAgent


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kandev-mock-agent %(levelname)s: %(message)s")
    asyncio.run(_serve())
    return 0


async def _serve() -> None:
    reader, writer = await _stdio()
    await MockAgent(reader, writer).run()


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
