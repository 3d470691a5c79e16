"""The connections a web process keeps to agentctls whose stream another process owns.

An operator's answer (or cancel, or permission reply) reaches whichever web
process serves their page; when another process owns the execution's stream,
this one sends the request over a connection of its own. Opening that
connection for every request costs a WebSocket handshake and an
authentication, and over SSH a direct-tcpip tunnel as well: most of the time
an answer takes on several machines. So one connection per execution is kept
and reused, and requests share it (each carries its own id, so several may be
in flight at once).

A kept connection ends:

- after :data:`IDLE_SECONDS` without a request: an operator answering a
  question usually sends its next one within seconds, and a connection held
  longer costs agentctl a socket (and sshd a channel) for nothing;
- when agentctl closes it: the execution ended (its agent exited, the task was
  deleted, it was shut down), so there is nothing more to send it;
- when a request on it finds it broken; the request is sent again on a fresh
  one only if it was never written (see :meth:`KeptConnections.request`);
- when this process adopts the execution (:meth:`KeptConnections.drop`): from
  then on its owning stream carries the requests.

Notifications arriving on a kept connection are ignored: the owning process
applies them, exactly once.
"""

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from kandev_web.agentctl.envelope import Payload
from kandev_web.agentctl.stream_client import AgentStreamClient, AgentStreamNotConnected, Backoff, NotSent

logger = logging.getLogger(__name__)

#: How long a kept connection may wait for its next request before it is closed.
IDLE_SECONDS = 60.0

#: Where a connection to one agentctl goes: its URL as it is, or a tunnel to it
#: (over SSH) that lives as long as the connection, entered before it opens.
Route = Callable[[], AbstractAsyncContextManager[str]]


@dataclass(eq=False)
class _Kept:
    client: AgentStreamClient
    #: The client and the tunnel it runs through, closed together.
    resources: contextlib.AsyncExitStack
    in_flight: int = 0
    #: Closes it after the idle time; cancelled while a request is in flight.
    idle: asyncio.Task[None] | None = None
    #: Drops it when agentctl closes it.
    watcher: asyncio.Task[None] | None = None

    def stop_tasks(self) -> None:
        for task in (self.idle, self.watcher):
            if task is not None and task is not asyncio.current_task():
                task.cancel()


class KeptConnections:
    """This process's kept connections for requests, one per execution, on the server's loop."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._kept: dict[int, _Kept] = {}
        #: One opening at a time per execution: two requests at once share what it
        #: opens. Weak: a lock lives while a request holds or waits for it.
        self._opening: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()
        #: Failed connections still closing (see ``_discard``).
        self._closing: set[asyncio.Task[None]] = set()

    def holds(self, execution_id: int) -> bool:
        """Whether a connection to this execution's agentctl is kept now."""
        return execution_id in self._kept

    async def request(
        self, execution_id: int, route: Route, token: str, action: str, payload: Payload, timeout: float
    ) -> Payload:
        """Send one request over the execution's kept connection, opening it first when there is none.

        A connection that fails is dropped. The request is then sent once more,
        on a fresh connection, only when it was never written (``NotSent``):
        nothing reached agentctl, so nothing can happen twice. A request that
        was written and lost its answer is not sent again, whatever its
        action: agentctl may have acted on it. An answer or a permission reply
        would be refused as NOT_FOUND the second time (agentctl settles a
        pending once, AC-61), telling the operator their delivered answer
        failed; a prompt would start a second turn. The caller sees the
        failure, as it did when every request had a connection of its own.
        """
        try:
            return await self._send(execution_id, route, token, action, payload, timeout)
        except NotSent:
            logger.info("a kept connection to agentctl had closed; sending on a new one")
            return await self._send(execution_id, route, token, action, payload, timeout)

    async def open(self, execution_id: int, route: Route, token: str) -> None:
        """Open the execution's connection ahead of its first request; closed after the idle time if none comes."""
        kept = await self._connection(execution_id, route, token)
        if kept.in_flight == 0 and kept.idle is None:
            kept.idle = asyncio.get_running_loop().create_task(
                self._drop_when_idle(execution_id, kept), name="kept agentctl connection idle"
            )

    async def drop(self, execution_id: int) -> None:
        """Close the execution's kept connection, if any (requests in flight on it fail)."""
        kept = self._kept.pop(execution_id, None)
        if kept is None:
            return
        kept.stop_tasks()
        await kept.resources.aclose()

    async def close(self) -> None:
        for execution_id in list(self._kept):
            await self.drop(execution_id)
        await asyncio.gather(*self._closing)

    def _discard(self, execution_id: int, kept: _Kept) -> None:
        """Forget a connection that failed at once, and close it meanwhile.

        Closing waits for agentctl's side of the close handshake, up to its
        timeout (seconds, when the route is what failed): the request sent
        again must not wait for it.
        """
        if self._kept.get(execution_id) is not kept:
            return
        del self._kept[execution_id]
        kept.stop_tasks()
        closing = asyncio.get_running_loop().create_task(kept.resources.aclose(), name="closing agentctl connection")
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def _send(
        self, execution_id: int, route: Route, token: str, action: str, payload: Payload, timeout: float
    ) -> Payload:
        kept = await self._connection(execution_id, route, token)
        kept.in_flight += 1
        if kept.idle is not None:
            kept.idle.cancel()
            kept.idle = None
        try:
            return await kept.client.request(action, payload, timeout=timeout)
        except AgentStreamNotConnected:
            self._discard(execution_id, kept)
            raise
        finally:
            kept.in_flight -= 1
            if kept.in_flight == 0 and self._kept.get(execution_id) is kept:
                kept.idle = asyncio.get_running_loop().create_task(
                    self._drop_when_idle(execution_id, kept), name="kept agentctl connection idle"
                )

    async def _connection(self, execution_id: int, route: Route, token: str) -> _Kept:
        lock = self._opening.get(execution_id)
        if lock is None:
            lock = self._opening[execution_id] = asyncio.Lock()
        async with lock:
            kept = self._kept.get(execution_id)
            if kept is not None and kept.client.connected:
                return kept
            await self.drop(execution_id)
            resources = contextlib.AsyncExitStack()
            try:
                url = await resources.enter_async_context(route())
                # No reconnecting: a connection that ends is dropped, and the next request opens its own.
                client = AgentStreamClient(url, token, backoff=Backoff(attempts=0))
                await client.connect()
                resources.push_async_callback(client.close)
            except BaseException:
                await resources.aclose()
                raise
            kept = self._kept[execution_id] = _Kept(client, resources)
            kept.watcher = asyncio.get_running_loop().create_task(
                self._drop_when_closed(execution_id, kept), name="kept agentctl connection"
            )
            return kept

    async def _drop_when_closed(self, execution_id: int, kept: _Kept) -> None:
        await kept.client.wait_closed()
        if self._kept.get(execution_id) is kept:
            await self.drop(execution_id)

    async def _drop_when_idle(self, execution_id: int, kept: _Kept) -> None:
        await asyncio.sleep(self.idle_seconds)
        if self._kept.get(execution_id) is kept and kept.in_flight == 0:
            await self.drop(execution_id)
