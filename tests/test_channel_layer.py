"""A send from another thread's event loop wakes the receiver at once."""

import asyncio
import threading

from kandev_web.channel_layer import ThreadSafeInMemoryChannelLayer


def test_a_send_from_another_loop_wakes_the_receiver_promptly():
    layer = ThreadSafeInMemoryChannelLayer()

    async def scenario():
        channel = await layer.new_channel()
        await layer.group_add("g", channel)
        receiving = asyncio.ensure_future(layer.receive(channel))
        await asyncio.sleep(0)  # the receiver now waits on this loop's queue
        sender = threading.Thread(target=lambda: asyncio.run(layer.group_send("g", {"type": "hello"})))
        sender.start()
        # Nothing else wakes this loop: without the hand-over this wait times out.
        message = await asyncio.wait_for(receiving, timeout=0.5)
        sender.join()
        return message

    assert asyncio.run(scenario()) == {"type": "hello"}
