"""Agents' streamed text, written a batch of chunks at a time.

An agent streams its reply a few words per chunk, 25 chunks a second or
more, and twenty agents may stream at once. A transaction per chunk would
make the server's work grow with the number of chunks rather than with the
bytes said; so the owning process collects consecutive chunks of one kind
(the agent's message, or its thoughts) per execution, and writes what every
execution collected together, in one database call, every ``delay``
seconds. An execution's batch is written sooner once it holds ``max_chars``
characters, and before anything else that execution reports is applied, so
everything is recorded in the order agentctl sent it.

A batch not written when the process dies is not lost: agentctl replays
every notification after the last one counted applied, and chunks are
counted applied with the batch that wrote them.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

#: How long chunks wait to be written with the next ones.
DELAY_SECONDS = 0.2
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
    def first_seq(self) -> int | None:
        return next((seq for seq, _ in self.chunks if seq is not None), None)

    @property
    def last_seq(self) -> int | None:
        return next((seq for seq, _ in reversed(self.chunks) if seq is not None), None)


#: Records batches, each with its execution's id, in one go.
Write = Callable[[list[tuple[int, Batch]]], Awaitable[None]]


class TextBatches:
    """Each execution's batch in the making; ``write([(execution_id, batch), ...])`` records them.

    ``add`` and ``flush`` are awaited in the order an execution's
    notifications arrived. Every write happens under one lock, so two batches
    of one execution are never written out of order.
    """

    def __init__(self, write: Write, *, delay: float = DELAY_SECONDS, max_chars: int = MAX_CHARS) -> None:
        self._write = write
        self._delay = delay
        self._max_chars = max_chars
        self._batches: dict[int, Batch] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._flushing: set[asyncio.Task[None]] = set()

    async def add(self, execution_id: int, kind: str, seq: int | None, text: str) -> None:
        """Add a chunk to the execution's batch; a batch of another kind is written first."""
        batch = self._batches.get(execution_id)
        if batch is not None and batch.kind != kind:
            await self.flush(execution_id)
            batch = None
        if batch is None:
            batch = self._batches[execution_id] = Batch(kind)
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self._delay, self._flush_all_later)
        batch.add(seq, text)
        if batch.chars >= self._max_chars:
            await self.flush(execution_id)

    async def flush(self, execution_id: int) -> None:
        """Write the execution's batch now, if it has one, after any write under way."""
        async with self._lock:
            batch = self._batches.pop(execution_id, None)
            if batch is not None:
                await self._write([(execution_id, batch)])

    async def flush_all(self) -> None:
        """Write every execution's batch, in one go."""
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            batches, self._batches = list(self._batches.items()), {}
            if batches:
                await self._write(batches)

    def _flush_all_later(self) -> None:
        self._timer = None
        task = asyncio.get_running_loop().create_task(self.flush_all(), name="agent text batches")
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)
