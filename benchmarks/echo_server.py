"""A bare WebSocket echo server on 127.0.0.1 (the latency baseline's far end).

Prints its port on the first line of stdout, then echoes every frame until
killed. Uses the ``websockets`` asyncio server, the same library agentctl serves
its agent stream with, and nothing of kandev-web.
"""

import asyncio
import sys

from websockets.asyncio.server import serve


async def echo(connection) -> None:
    async for message in connection:
        await connection.send(message)


async def main() -> None:
    async with serve(echo, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        sys.stdout.write(f"{port}\n")
        sys.stdout.flush()
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main())
