"""Drives the floor from a benchmark: its own Daphne, a page in the benchmark's chromium, a trigger socket.

One cycle: calibrate the page clock (``stack.clock_offset``, as every latency
cycle does), take ``time.time()`` and send the next sequence number on the
trigger socket, wait for the element in the page, and map the time the page's
MutationObserver saw it (``performance.timeOrigin + performance.now()``) onto
the same clock. The trigger socket is in the group too; it reads its own copy
of the fragment so nothing piles up, and that copy is not timed (its arrival
in this process says more about this process's threads than about the server).

Given a Redis URL (the several-machines profile), the floor runs two servers on
that Redis: the page's socket on one, the trigger's on the other, so the
floor's ``group_send`` crosses Redis between processes as the product's
question does.
"""

from __future__ import annotations

import os
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from .. import support
from ..stack import clock_offset

APPLICATION = "benchmarks.floor.asgi:application"


@dataclass
class FloorCycle:
    trigger_to_dom: float  # ms
    clock_uncertainty: float  # ms: half the calibration round trip


class FrameworkFloor:
    """The floor's server and page, for as long as the ``with`` block lasts."""

    def __init__(self, directory: Path, browser, *, redis_url: str | None = None) -> None:
        self.directory = directory
        self.browser = browser
        self.redis_url = redis_url
        self.seq = 0
        self._exit = ExitStack()

    def __enter__(self) -> FrameworkFloor:
        try:
            self._start()
        except BaseException:
            self._exit.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._exit.close()

    def _start(self) -> None:
        from websockets.sync.client import connect

        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.floor.settings", "PYTHONPATH": str(support.ROOT)}
        if self.redis_url:
            env.update(
                {
                    "KANDEV_BENCH_FLOOR_REDIS_URL": self.redis_url,
                    "KANDEV_BENCH_FLOOR_PREFIX": f"floor-{uuid.uuid4().hex[:8]}",
                }
            )
        logs = [self.directory / "floor-server.log"]
        if self.redis_url:
            logs.append(self.directory / "floor-server-b.log")
        servers = self._exit.enter_context(support.running_servers(env, logs, application=APPLICATION))
        # The page's server, and the trigger's: the same one, or the other one on the same Redis.
        server, trigger_server = servers[0], servers[-1]
        context = self.browser.new_context()
        self._exit.callback(context.close)
        self.page = context.new_page()
        self.page.set_default_timeout(20_000)
        self.page.goto(f"{server.url}/")
        self.page.wait_for_selector("[data-testid=floor-live][data-live=connected]", state="attached")
        ws_url = trigger_server.url.replace("http://", "ws://", 1) + "/ws/floor/"
        self.trigger = self._exit.enter_context(connect(ws_url, compression=None, proxy=None))

    def cycle(self, *, timeout: float = 20.0) -> FloorCycle:
        offset, uncertainty = clock_offset(self.page)
        self.seq += 1
        t_trigger = time.time() * 1000
        self.trigger.send(str(self.seq))
        self.trigger.recv(timeout=timeout)
        self.page.wait_for_selector(
            f"[data-testid=floor-mark][data-seq='{self.seq}']", state="attached", timeout=timeout * 1000
        )
        # Read the mark and empty the list, so every cycle swaps into the same small DOM.
        seen = self.page.evaluate(
            "(seq) => { const t = window.__floor[seq]; delete window.__floor[seq];"
            " document.getElementById('floor-marks').replaceChildren(); return t; }",
            str(self.seq),
        )
        return FloorCycle(trigger_to_dom=seen - offset - t_trigger, clock_uncertainty=uncertainty)
