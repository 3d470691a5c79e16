"""Streamed text is written a batch at a time, in the order it was said, and none of it twice."""

import asyncio
import itertools

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.sessions.text_batches import Batch, TextBatches

KINDS = st.sampled_from(["agent_message_chunk", "agent_thought_chunk"])
#: Chunks of two executions interleaved, as twenty agents' streams are: (execution, kind, text).
CHUNKS = st.lists(st.tuples(st.sampled_from([1, 2]), KINDS, st.text(max_size=40)), max_size=60)


def play(chunks, *, flush_every=None, flush_all_every=None, max_chars=64):
    """Feed ``chunks`` with increasing seqs per execution; each write, as a list of (execution, batch)."""
    writes: list[list[tuple[int, Batch]]] = []

    async def write(batches):
        await asyncio.sleep(0)  # a database hop: other work may run meanwhile
        writes.append(batches)

    async def main():
        # A delay no test waits for: only the size bound and the flushes write.
        batches = TextBatches(write, delay=3600, max_chars=max_chars)
        seqs = dict.fromkeys((1, 2), 0)
        for n, (execution, kind, text) in enumerate(chunks, start=1):
            seqs[execution] += 1
            await batches.add(execution, kind, seqs[execution], text)
            if flush_every and n % flush_every == 0:
                await batches.flush(execution)  # another notification of its stream
            if flush_all_every and n % flush_all_every == 0:
                await batches.flush_all()  # the timer
        await batches.flush_all()

    asyncio.run(main())
    return writes


def of(writes, execution):
    return [batch for write in writes for id_, batch in write if id_ == execution]


@given(CHUNKS, st.integers(min_value=1, max_value=5), st.integers(min_value=1, max_value=7))
def test_each_execution_s_text_is_written_once_in_order_each_batch_of_one_kind(chunks, every, all_every):
    writes = play(chunks, flush_every=every, flush_all_every=all_every)
    for execution in (1, 2):
        said = [(kind, text) for id_, kind, text in chunks if id_ == execution]
        batches = of(writes, execution)
        assert [(b.kind, text) for b in batches for _, text in b.chunks] == said
        assert [seq for b in batches for seq, _ in b.chunks] == list(range(1, len(said) + 1))
        assert all(len({b.kind}) == 1 and b.chunks for b in batches)


@given(CHUNKS)
def test_consecutive_chunks_of_one_kind_share_a_batch_until_the_size_bound(chunks):
    writes = play(chunks)
    for execution in (1, 2):
        for before, after in itertools.pairwise(of(writes, execution)):
            assert before.kind != after.kind or before.chars >= 64


@given(CHUNKS)
def test_one_write_holds_at_most_one_batch_of_an_execution(chunks):
    for write in play(chunks, flush_all_every=3):
        ids = [id_ for id_, _ in write]
        assert len(ids) == len(set(ids))


def test_the_timer_writes_every_execution_s_batch_in_one_go():
    async def main():
        written = asyncio.Queue()

        async def write(batches):
            await written.put([(id_, b.kind, b.text_after(0), b.last_seq) for id_, b in batches])

        batches = TextBatches(write, delay=0.01)
        await batches.add(1, "agent_message_chunk", 1, "Hel")
        await batches.add(2, "agent_thought_chunk", 7, "hmm")
        await batches.add(1, "agent_message_chunk", 2, "lo")
        return await asyncio.wait_for(written.get(), 10)

    assert asyncio.run(main()) == [(1, "agent_message_chunk", "Hello", 2), (2, "agent_thought_chunk", "hmm", 7)]


@given(st.lists(st.text(max_size=10), min_size=1, max_size=20), st.integers(min_value=0, max_value=25))
def test_after_a_takeover_only_the_chunks_not_applied_yet_are_written(texts, applied):
    batch = Batch("agent_message_chunk")
    for seq, text in enumerate(texts, start=1):
        batch.add(seq, text)
    assert batch.text_after(applied) == "".join(texts[applied:])
    assert batch.last_seq == len(texts)
