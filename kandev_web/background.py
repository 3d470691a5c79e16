"""Work that runs on the web server's loop, off every request: woken after a commit, polled besides.

A web process runs each such worker on the loop that serves pages (started
with the agent runner, ``asgi.bind_to_the_server_loop``). It does one pass
in a worker thread when something commits (:meth:`Worker.wake`, from any
thread, usually through ``transaction.on_commit``) and every
``poll_seconds`` besides, for rows another process committed or a pass that
could not finish. Neither a request nor the agent stream ever waits for it.
"""

import asyncio
import contextlib
import logging
import threading

from django.db import connections

logger = logging.getLogger(__name__)


class Worker:
    """Subclasses say what a pass does (:meth:`run_once`) and how long to wait between passes."""

    #: The loop task's name, and what a failed pass is logged as.
    description = "background work"

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._lock = threading.Lock()

    def poll_seconds(self) -> float:
        raise NotImplementedError

    def run_once(self) -> int:
        """Do what is due now; how many items it tried."""
        raise NotImplementedError

    # -- on the server loop --------------------------------------------------------------------

    def ensure_started(self) -> None:
        """Start on the running loop; the first call wins."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            self._loop.create_task(self._run(self._wake), name=f"kandev {self.description}")

    def wake(self) -> None:
        """Something committed: do a pass now rather than at the next poll. Safe from any thread."""
        loop, event = self._loop, self._wake
        if loop is not None and event is not None and not loop.is_closed():
            loop.call_soon_threadsafe(event.set)

    async def _run(self, wake: asyncio.Event) -> None:
        while True:
            try:
                await asyncio.to_thread(self._pass_in_a_thread)
            except Exception:
                logger.exception("a %s pass failed", self.description)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=self.poll_seconds())
            wake.clear()

    def _pass_in_a_thread(self) -> None:
        try:
            self.run_once()
        finally:
            connections.close_all()  # a worker thread must not keep a (pooled) connection between passes
