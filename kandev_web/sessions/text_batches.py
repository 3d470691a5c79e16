"""An agent's streamed text, written a batch of chunks at a time.

An agent streams its reply a few words per chunk, 25 chunks a second or
more, and twenty agents may stream at once. A transaction per chunk would
make the server's work grow with the number of chunks rather than with the
bytes said; so the owning process collects consecutive chunks of one kind
(the agent's message, or its thoughts) and writes them as one append. A
batch is written after ``delay`` seconds, once it holds ``max_chars``
characters, and before anything else the execution reports is applied, so
everything is recorded in the order agentctl sent it.

A batch not written when the process dies is not lost: agentctl replays
every notification after the last one counted applied, and chunks are
counted applied with the batch that wrote them.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

#: How long chunks wait to be written with the next ones.
DELAY_SECONDS = 0.1
#: A batch holding this many characters is written at once.
MAX_CHARS = 16_384


@dataclass
class Batch:
    """Consecutive chunks of one kind: their text and agentctl's sequence numbers, in order."""

    kind: str
    chunks: list[tuple[int | None, str]] = field(default_factory=list)
    chars: int = 0

    def add(self, seq: int | None, text: str) -> None:
        self.chunks.append((seq, text))
        self.chars += len(text)

    def text_after(self, applied_seq: int) -> str:
        """The text of the chunks not counted applied yet (all of them, but after a takeover)."""
        return "".join(text for seq, text in self.chunks if seq is None or seq > applied_seq)

    @property
    def last_seq(self) -> int | None:
        return next((seq for seq, _ in reversed(self.chunks) if seq is not None), None)


Write = Callable[[int, Batch], Awaitable[None]]


class TextBatches:
    """Each stream's batch in the making, by execution id; ``write(execution_id, batch)`` records one.

    ``add`` and ``flush`` are awaited in the order the stream's notifications
    arrived; a batch written on its timer is written under the same lock, so
    two batches of one stream are never written out of order.
    """

    def __init__(self, write: Write, *, delay: float = DELAY_SECONDS, max_chars: int = MAX_CHARS) -> None:
        self._write = write
        self._delay = delay
        self._max_chars = max_chars
        self._batches: dict[int, Batch] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._flushing: set[asyncio.Task[None]] = set()

    async def add(self, key: int, kind: str, seq: int | None, text: str) -> None:
        """Add a chunk to ``key``'s batch; a batch of another kind is written first."""
        batch = self._batches.get(key)
        if batch is not None and batch.kind != kind:
            await self.flush(key)
            batch = None
        if batch is None:
            batch = self._batches[key] = Batch(kind)
            self._timers[key] = asyncio.get_running_loop().call_later(self._delay, self._flush_later, key)
        batch.add(seq, text)
        if batch.chars >= self._max_chars:
            await self.flush(key)

    async def flush(self, key: int) -> None:
        """Write ``key``'s batch now, if it has one, after any batch of it being written."""
        async with self._locks.setdefault(key, asyncio.Lock()):
            timer = self._timers.pop(key, None)
            if timer is not None:
                timer.cancel()
            batch = self._batches.pop(key, None)
            if batch is not None:
                await self._write(key, batch)

    async def forget(self, key: int) -> None:
        """Write what ``key`` has, and forget it: its stream is over."""
        await self.flush(key)
        self._locks.pop(key, None)

    def _flush_later(self, key: int) -> None:
        task = asyncio.get_running_loop().create_task(self.flush(key), name="agent text batch")
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)
