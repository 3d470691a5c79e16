"""Committed events reach the channel layer in the order they were committed, from any thread."""

import asyncio
import concurrent.futures
import threading
import time

from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer

from kandev_web import live


def test_events_queued_from_other_threads_are_sent_in_order_on_the_bound_loop(monkeypatch):
    layer = InMemoryChannelLayer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
    outbox = live._Outbox()

    async def scenario():
        channel = await layer.new_channel()
        await layer.group_add("g", channel)
        outbox.bind(asyncio.get_running_loop())

        def commit_many(first):
            for n in range(first, first + 50):
                outbox.put("g", {"type": "e", "n": n})

        # Two committing threads, one after the other: each returns without waiting on the loop.
        await asyncio.to_thread(commit_many, 0)
        await asyncio.to_thread(commit_many, 50)
        return [(await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(100)]

    assert asyncio.run(scenario()) == list(range(100))


def test_without_a_running_server_loop_an_event_is_sent_at_once(monkeypatch):
    layer = InMemoryChannelLayer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
    outbox = live._Outbox()
    channel = asyncio.run(layer.new_channel())
    asyncio.run(layer.group_add("g", channel))
    outbox.put("g", {"type": "e", "n": 1})

    async def receive():
        return await asyncio.wait_for(layer.receive(channel), 5)

    assert asyncio.run(receive())["n"] == 1


class DaemonThreads(concurrent.futures.Executor):
    """Each call in a daemon thread: one the old code left waiting forever must not hold pytest open too."""

    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()

        def run():
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:
                future.set_exception(error)

        threading.Thread(target=run, daemon=True).start()
        return future


def test_an_event_committed_after_the_server_loop_stopped_is_sent_and_holds_nothing(monkeypatch):
    """A SIGTERM while the runner's thread applies what an agent reported: the process must still end.

    The thread commits after the server's loop stopped. Waiting on that loop
    (as ``async_to_sync`` does from a thread the loop started) never returned:
    the web process hung on exit until it was killed.
    """
    layer = InMemoryChannelLayer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
    outbox = live._Outbox()
    channel = asyncio.run(layer.new_channel())
    asyncio.run(layer.group_add("g", channel))
    server_loop = asyncio.new_event_loop()
    committed = threading.Event()

    def commit_as_the_server_stops():
        server_loop.call_soon_threadsafe(server_loop.stop)
        while server_loop.is_running():
            time.sleep(0.01)
        outbox.put("g", {"type": "e", "n": 1})
        committed.set()

    async def serve():
        outbox.bind(asyncio.get_running_loop())
        await sync_to_async(commit_as_the_server_stops, thread_sensitive=False, executor=DaemonThreads())()

    served = server_loop.create_task(serve())
    threading.Thread(target=server_loop.run_forever, daemon=True).start()

    assert committed.wait(10), "the commit waited on the stopped server loop"
    server_loop.run_until_complete(served)
    server_loop.close()

    async def receive():
        return await asyncio.wait_for(layer.receive(channel), 5)

    assert asyncio.run(receive())["n"] == 1
