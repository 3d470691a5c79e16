"""Committed events reach the channel layer in the order they were committed, from any thread."""

import asyncio

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
