"""More live sockets on a task page, without windows: what the server pays for them, not the browser.

    python benchmarks/socket_clients.py URL COUNT    (KANDEV_BENCH_COOKIE, KANDEV_BENCH_ORIGIN in the environment)

Opens ``COUNT`` WebSocket connections to ``URL`` (a task page's ``/ws/tasks/<id>/``)
as a logged-in operator's page does: its session cookie and an Origin the
server allows. Each reads every frame it is sent, as a page's socket does,
and renders nothing. Prints ``connected COUNT`` once all have had their
first frame (the catch-up), then reads until killed. A process of its own,
so its reading is not the server's work.
"""

import asyncio
import os
import sys

from websockets.asyncio.client import connect


async def follow(url: str, ready: asyncio.Queue) -> None:
    cookie, origin = os.environ["KANDEV_BENCH_COOKIE"], os.environ["KANDEV_BENCH_ORIGIN"]
    async with connect(url, additional_headers={"Cookie": cookie}, origin=origin, compression=None) as socket:
        await socket.recv()
        ready.put_nowait(None)
        async for _frame in socket:
            pass


async def main(url: str, count: int) -> None:
    ready: asyncio.Queue = asyncio.Queue()
    followers = [asyncio.create_task(follow(url, ready)) for _ in range(count)]
    for _ in range(count):
        await ready.get()
    sys.stdout.write(f"connected {count}\n")
    sys.stdout.flush()
    await asyncio.gather(*followers)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
