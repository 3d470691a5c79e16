"""Streamed text is written a batch at a time, in the order it was said, and none of it twice."""

import asyncio
import itertools

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.sessions.text_batches import Batch, TextBatches

KINDS = st.sampled_from(["agent_message_chunk", "agent_thought_chunk"])
CHUNKS = st.lists(st.tuples(KINDS, st.text(max_size=40)), max_size=60)


def play(chunks, *, flush_every=None, max_chars=64):
    """Feed ``chunks`` (kind, text) with increasing seqs; what was written, batch by batch."""
    written: list[tuple[str, Batch]] = []

    async def write(key, batch):
        await asyncio.sleep(0)  # a database hop: other work may run meanwhile
        written.append((key, batch))

    async def main():
        # A delay no test waits for: only the size bound and flush() write.
        batches = TextBatches(write, delay=3600, max_chars=max_chars)
        for seq, (kind, text) in enumerate(chunks, start=1):
            await batches.add(7, kind, seq, text)
            if flush_every and seq % flush_every == 0:
                await batches.flush(7)  # another notification of the stream
        await batches.forget(7)

    asyncio.run(main())
    return [batch for _, batch in written]


@given(CHUNKS)
def test_everything_said_is_written_once_in_order_each_batch_of_one_kind(chunks):
    batches = play(chunks)
    assert [(b.kind, text) for b in batches for _, text in b.chunks] == chunks
    assert [seq for b in batches for seq, _ in b.chunks] == list(range(1, len(chunks) + 1))
    # Consecutive chunks of one kind share a batch unless the size bound split them.
    for before, after in itertools.pairwise(batches):
        assert before.kind != after.kind or before.chars >= 64


@given(CHUNKS, st.integers(min_value=1, max_value=5))
def test_another_notification_writes_the_batch_first(chunks, every):
    batches = play(chunks, flush_every=every)
    assert [text for b in batches for _, text in b.chunks] == [text for _, text in chunks]
    assert all(b.last_seq is not None and len(b.chunks) <= every for b in batches)


def test_a_batch_is_written_on_its_timer_when_nothing_else_comes():
    async def main():
        written = asyncio.Queue()

        async def write(key, batch):
            await written.put((key, batch.kind, batch.text_after(0), batch.last_seq))

        batches = TextBatches(write, delay=0.01)
        await batches.add(7, "agent_message_chunk", 1, "Hel")
        await batches.add(7, "agent_message_chunk", 2, "lo")
        return await asyncio.wait_for(written.get(), 10)

    assert asyncio.run(main()) == (7, "agent_message_chunk", "Hello", 2)


@given(st.lists(st.text(max_size=10), min_size=1, max_size=20), st.integers(min_value=0, max_value=25))
def test_after_a_takeover_only_the_chunks_not_applied_yet_are_written(texts, applied):
    batch = Batch("agent_message_chunk")
    for seq, text in enumerate(texts, start=1):
        batch.add(seq, text)
    assert batch.text_after(applied) == "".join(texts[applied:])
    assert batch.last_seq == len(texts)
