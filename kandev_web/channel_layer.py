"""The in-memory channel layer, made safe to send to from another event loop.

This process applies what agentctl reports on its runner thread, which runs an
event loop of its own. Channels' ``InMemoryChannelLayer`` puts a message
straight into an ``asyncio.Queue`` that belongs to Daphne's loop, and a put
from another loop does not wake the consumer waiting on it: the live update
would wait until something else woke Daphne's loop, up to a second later. A
send from a foreign loop is therefore handed to the queue's own loop. (The
Redis layer, for several processes, has no such problem.)
"""

import asyncio

from channels.layers import InMemoryChannelLayer


class ThreadSafeInMemoryChannelLayer(InMemoryChannelLayer):
    async def send(self, channel, message):
        queue = self.channels.get(channel)
        owner = getattr(queue, "_loop", None)
        if owner is not None and owner.is_running() and owner is not asyncio.get_running_loop():
            future = asyncio.run_coroutine_threadsafe(super().send(channel, message), owner)
            await asyncio.wrap_future(future)
            return
        await super().send(channel, message)
