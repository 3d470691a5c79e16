"""Daphne with timing probes (and, on request, candidate fixes) patched in from outside.

    python -m benchmarks.trace_server -b 127.0.0.1 -p PORT kandev_web.asgi:application

Used by ``latency --trace`` / ``--patch``; the app's files are not touched.

``KANDEV_BENCH_TRACE=<file>``: append one JSON line per probe, ``[t, thread,
name, detail]`` with ``t = time.time()``: agentctl notifications reaching the
runner (``apply>``/``apply<``), the overlay's render (``overlay>``/
``overlay<``), each after-commit ``group_send`` (``send>``, ``send<``), each
consumer handler (``consumer>``/``consumer<``), each frame a consumer writes
to a browser (``ws``), and the answer's way in (``receive>``, ``receive<``,
``forward>``, ``forward<``).

``KANDEV_BENCH_TRACEMALLOC=<folder>``: on each ``SIGUSR1``, a snapshot of
the Python allocations, after a full garbage collection, in
``<folder>/snapshot-<n>.pickle`` (used by ``benchmarks.leak``). Tracing (25
frames) starts at the first signal: from start-up it would slow Daphne's
start past the harness's patience, and only what is allocated after the first
snapshot and still alive at a later one matters.

``KANDEV_BENCH_PATCH=<name,...>``: candidate fixes, to measure before
proposing them:

- ``persistent-db``: ``CONN_MAX_AGE = 600``, so consumers and the runner reuse
  their SQLite connection instead of opening one (and running the WAL pragma)
  for every ``database_sync_to_async`` call and request;
- ``sqlite-synchronous-normal``: ``PRAGMA synchronous=NORMAL`` with WAL;
- ``loop-safe-layer``: the in-memory channel layer puts a message on a
  channel's queue from the event loop that queue belongs to
  (``run_coroutine_threadsafe``), instead of from whichever loop called
  ``group_send``. Without it, a ``group_send`` made on the agent runner's loop
  (every notification agentctl sends) completes a future of Daphne's loop from
  another thread, which does not wake that loop: the consumer runs only when
  Daphne's loop wakes up for something else.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import signal
import sys
import threading
import time
import tracemalloc
from pathlib import Path

_lock = threading.Lock()
_trace = None


def probe(name: str, detail=None) -> None:
    if _trace is None:
        return
    line = json.dumps([time.time(), threading.current_thread().name, name, detail], default=str)
    with _lock:
        _trace.write(line + "\n")


def _wrap_async(owner, attribute: str, label: str, detail=lambda *a, **k: None) -> None:
    original = getattr(owner, attribute)

    @functools.wraps(original)
    async def wrapper(*args, **kwargs):
        probe(f"{label}>", detail(*args, **kwargs))
        try:
            return await original(*args, **kwargs)
        finally:
            probe(f"{label}<", detail(*args, **kwargs))

    setattr(owner, attribute, wrapper)


def _wrap_sync(owner, attribute: str, label: str) -> None:
    """Probe a function of a module or class (``owner``)."""
    original = getattr(owner, attribute)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        probe(f"{label}>")
        try:
            return original(*args, **kwargs)
        finally:
            probe(f"{label}<")

    setattr(owner, attribute, wrapper)


def install_probes() -> None:
    from kandev_web import live, live_consumer
    from kandev_web.clarifications import elicitations, overlay
    from kandev_web.pages.task.consumers import TaskConsumer
    from kandev_web.sessions import runner

    _wrap_async(runner.Runner, "_apply", "apply", lambda self, ref, action, payload: action)
    _wrap_sync(overlay, "render", "overlay")
    _wrap_sync(elicitations, "_create_record", "record")
    # What the runner's elicitation.requested signal runs (``clarifications.apps``), looked up at each call.
    _wrap_sync(elicitations, "record_requested", "handler")

    def send_after_commit(group, event):
        from django.db import transaction

        def send():
            # Queued on the committing thread; one task on the server's loop sends it.
            probe("send>", [group, event.get("type")])
            live.outbox.put(group, event)
            probe("send<", [group, event.get("type")])

        transaction.on_commit(send)

    live.send_after_commit = send_after_commit
    handlers = ("clarification_asked", "task_changed", "board_changed", "message_changed", "clarification_settled")
    for name in (*handlers, "notify"):
        if hasattr(TaskConsumer, name):
            _wrap_async(TaskConsumer, name, "consumer", lambda self, event, _n=name: _n)

    original_send = live_consumer.LiveConsumer.send

    async def send(self, text_data=None, bytes_data=None, close=False):
        overlay = text_data is not None and 'data-testid="clarification-overlay"' in text_data
        probe("ws", {"bytes": len(text_data or ""), "overlay": overlay})
        return await original_send(self, text_data=text_data, bytes_data=bytes_data, close=close)

    live_consumer.LiveConsumer.send = send
    from daphne.ws_protocol import WebSocketProtocol

    _wrap_sync(WebSocketProtocol, "onMessage", "frame-in")
    _wrap_async(TaskConsumer, "receive", "receive", lambda self, text_data=None, bytes_data=None: "frame")
    _wrap_async(elicitations, "forward", "forward", lambda record, **answer: record.pending_id)


def patch_persistent_db() -> None:
    """Keep database connections open between requests and consumer calls (``CONN_MAX_AGE``)."""
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = 600


def patch_sqlite_synchronous_normal() -> None:
    """WAL with ``synchronous=NORMAL``: commits no longer fsync (only checkpoints do)."""
    from django.conf import settings

    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    options["init_command"] = options.get("init_command", "") + "PRAGMA synchronous=NORMAL;"


PATCHES = {
    "persistent-db": patch_persistent_db,
    "sqlite-synchronous-normal": patch_sqlite_synchronous_normal,
}


def trace_allocations(folder: Path) -> None:
    """On every SIGUSR1, write a snapshot of the allocations traced since the first one."""
    taken = []

    def snapshot(signum, frame):
        if not tracemalloc.is_tracing():
            tracemalloc.start(25)
        gc.collect()
        taken.append(folder / f"snapshot-{len(taken) + 1}.pickle")
        tracemalloc.take_snapshot().dump(taken[-1])

    signal.signal(signal.SIGUSR1, snapshot)


def main() -> None:
    global _trace
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev_web.settings")
    if os.environ.get("KANDEV_BENCH_TRACEMALLOC"):
        trace_allocations(Path(os.environ["KANDEV_BENCH_TRACEMALLOC"]))
    # Settings patches before the app (and its first database connection) exists.
    for name in filter(None, os.environ.get("KANDEV_BENCH_PATCH", "").split(",")):
        PATCHES[name]()
        print(f"trace_server: patched {name}", file=sys.stderr)
    import kandev_web.asgi  # noqa: F401  (sets Django up, so the app's modules can be patched)

    path = os.environ.get("KANDEV_BENCH_TRACE")
    if path:
        _trace = open(path, "a", buffering=1)  # noqa: SIM115
        install_probes()
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", *sys.argv[1:]]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
