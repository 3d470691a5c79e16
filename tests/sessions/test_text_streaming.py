"""Streamed text costs what arrived: appended in SQL, announced as a delta, rendered whole when it settles."""

from html.parser import HTMLParser

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_web import live
from kandev_web.agentctl.stream_client import StreamEvent
from kandev_web.board.models import TaskState
from kandev_web.pages.task.fragments import render_delta
from kandev_web.pages.task.streaming import Shown
from kandev_web.sessions import events, runner
from kandev_web.sessions.models import Message

#: On SQLite, and again on PostgreSQL (scripts/test).
pytestmark = pytest.mark.postgres

KINDS = {"agent_message_chunk": "message", "agent_thought_chunk": "thinking"}
#: Agent text as it reaches events: the stream client has already made NUL and lone surrogates storable.
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30)
MARKUP = st.sampled_from(["<script>alert(1)</script>", "<b>", "&amp;", '"', "'", "**bold**", "\n", "é", "🦊", "``"])
CHUNK = st.one_of(TEXT, MARKUP, st.lists(st.one_of(TEXT, MARKUP), max_size=4).map("".join))


@pytest.fixture
def new_session(make_task, make_session, board):
    def make():
        task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
        return make_session(task)

    return make


@pytest.fixture
def told(monkeypatch):
    """Every live event announced, as (group, event), in order; sent at once, commit or not."""
    sent = []
    monkeypatch.setattr(live, "send_after_commit", lambda group, event: sent.append((group, event)))
    return sent


def announced(told, type_):
    return [event for _, event in told if event["type"] == type_]


def assert_its_pages_were_sent_it_whole(told, message):
    """Created with its first text, then every delta at the length it had: together, what it holds."""
    deltas = [e for e in announced(told, "message.appended") if e["message_id"] == message.pk]
    streamed = message.content[: len(message.content) - sum(len(d["text"]) for d in deltas)]
    for delta in deltas:
        assert delta["offset"] == len(streamed)
        streamed += delta["text"]
    assert streamed == message.content


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.tuples(st.sampled_from(sorted(KINDS)), CHUNK), min_size=1, max_size=12))
def test_appended_chunks_are_exactly_their_concatenation_and_so_are_their_deltas(new_session, told, chunks):
    session = new_session()
    told.clear()
    for kind, text in chunks:
        events.record_text_chunks(session.pk, kind, text)

    expected = []  # consecutive chunks of one kind are one message
    for kind, text in chunks:
        if not text:
            continue
        if expected and expected[-1][0] == KINDS[kind]:
            expected[-1][1] += text
        else:
            expected.append([KINDS[kind], text])
    messages = list(session.messages.order_by("created_at", "pk"))
    assert [[m.type, m.content] for m in messages] == expected
    for message in messages:
        assert_its_pages_were_sent_it_whole(told, message)


#: What may happen to a session between two batches of one stream: another batch of it, a batch written by
#: another process (which knows nothing of this one's ``after``), a tool call (a message of its own), or the
#: turn's end (it settles the message; the stream's owner forgets ``after`` then, as for anything it applies).
STEPS = st.one_of(
    st.tuples(st.just("batch"), st.sampled_from(sorted(KINDS)), CHUNK),
    st.tuples(st.just("elsewhere"), st.sampled_from(sorted(KINDS)), CHUNK),
    st.tuples(st.sampled_from(["tool call", "turn end"]), st.just(""), st.just("")),
)


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEPS, min_size=1, max_size=12))
def test_a_stream_that_appends_where_it_left_off_writes_what_it_would_have_found(new_session, told, steps):
    session = new_session()
    told.clear()
    after = None
    expected: list[list] = []  # [type, content, streaming] per message, in order
    for index, (step, kind, text) in enumerate(steps):
        if step in ("tool call", "turn end"):
            if step == "tool call":
                update = {"sessionUpdate": "tool_call", "toolCallId": f"t{index}", "title": "ls"}
                events.record_session_update(session.pk, update)
            else:
                events.record_turn_completed(session.pk, {"stop_reason": "end_turn"})
            for message in expected:
                message[2] = False
            if step == "tool call":
                expected.append(["tool_call", "ls", False])
            after = None
            continue
        if step == "batch":
            after = events.record_text_chunks(session.pk, kind, text, after=after)
        else:
            events.record_text_chunks(session.pk, kind, text)
        if text and expected and expected[-1][0] == KINDS[kind]:
            expected[-1][1] += text
            expected[-1][2] = True
        elif text:
            for message in expected:  # a new message settles what streamed before it
                message[2] = False
            expected.append([KINDS[kind], text, True])

    messages = list(session.messages.order_by("created_at", "pk"))
    assert [[m.type, m.content, m.metadata.get("streaming", False)] for m in messages] == expected
    for message in messages:
        assert_its_pages_were_sent_it_whole(told, message)


def test_appending_where_the_stream_left_off_is_one_statement_that_reads_nothing(
    new_session, told, django_assert_num_queries
):
    session = new_session()
    after = events.record_text_chunks(session.pk, "agent_message_chunk", "x" * 100_000)
    with django_assert_num_queries(1) as captured:
        after = events.record_text_chunks(session.pk, "agent_message_chunk", "more", after=after)
    [update] = [q["sql"] for q in captured.captured_queries]
    assert update.lstrip().upper().startswith("UPDATE")
    assert after is not None
    assert after.length == 100_004
    assert session.messages.get().content == "x" * 100_000 + "more"
    assert announced(told, "message.appended")[-1]["offset"] == 100_000


class _Fragment(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], ""

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text += data


@given(text=CHUNK)
def test_a_delta_is_the_agents_text_escaped_into_the_messages_stream_element(text):
    fragment = _Fragment()
    fragment.feed(render_delta(7, text))
    fragment.close()
    assert fragment.tags == [("div", {"hx-swap-oob": "beforeend:#message-7-stream"})]
    assert fragment.text == text


@pytest.mark.parametrize("size", [1_000, 100_000])
def test_an_append_costs_the_same_few_queries_however_long_the_message_is_and_never_reads_it(
    new_session, told, size, django_assert_num_queries
):
    session = new_session()
    events.record_text_chunks(session.pk, "agent_message_chunk", "x" * size)
    # Lock the session, look up the last message of its latest turn, UPDATE it; in the test's savepoint.
    with django_assert_num_queries(2 + 3) as captured:
        events.record_text_chunks(session.pk, "agent_message_chunk", "more")
    reads = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    assert reads, "the last message is looked up"
    for sql in reads:
        assert '"content"' not in sql.replace(f'LENGTH("{Message._meta.db_table}"."content")', ""), sql
    assert session.messages.get().content == "x" * size + "more"
    assert announced(told, "message.appended")[-1]["offset"] == size


def test_an_append_costs_no_more_queries_on_the_hundredth_chunk_than_the_second(new_session, told):
    session = new_session()
    counts = []
    for index in range(100):
        with CaptureQueriesContext(connection) as captured:
            events.record_text_chunks(session.pk, "agent_message_chunk", f"chunk {index} ")
        counts.append(len(captured))
    assert set(counts[1:]) == {counts[1]}


def test_a_streaming_message_is_rendered_whole_at_most_every_few_seconds(new_session, told):
    session = new_session()
    events.record_text_chunks(session.pk, "agent_message_chunk", "First ")
    [message] = session.messages.all()
    assert message.metadata["streaming"] is True
    for index in range(20):
        events.record_text_chunks(session.pk, "agent_message_chunk", f"{index} ")
    assert [e["created"] for e in announced(told, "message.changed")] == [True], "created; no render since"
    assert len(announced(told, "message.appended")) == 20

    # As if the last render were older than the bound (a clock is not waited on).
    rendered_at = message.metadata["rendered_at"] - events.STREAM_RENDER_SECONDS
    Message.objects.filter(pk=message.pk).update(metadata={"streaming": True, "rendered_at": rendered_at})
    events.record_text_chunks(session.pk, "agent_message_chunk", "later ")
    events.record_text_chunks(session.pk, "agent_message_chunk", "and more")
    changed = announced(told, "message.changed")
    assert [(e["message_id"], e["created"]) for e in changed] == [(message.pk, True), (message.pk, False)]
    # The render's event comes before its delta, so a page rendering it whole skips that delta.
    types = [event["type"] for _, event in told]
    assert types[-3:] == ["message.changed", "message.appended", "message.appended"]


def test_a_stream_appending_where_it_left_off_has_its_pages_render_it_whole_every_few_seconds(new_session, told):
    session = new_session()
    after = events.record_text_chunks(session.pk, "agent_message_chunk", "First ")
    after = events.record_text_chunks(session.pk, "agent_message_chunk", "second ", after=after)
    assert [e["type"] for _, e in told] == ["message.changed", "message.appended"], "created; no render since"

    told.clear()
    rendered_before = after.rendered_at - events.STREAM_RENDER_SECONDS  # a clock is not waited on
    after = events.record_text_chunks(
        session.pk, "agent_message_chunk", "third ", after=after._replace(rendered_at=rendered_before)
    )
    after = events.record_text_chunks(session.pk, "agent_message_chunk", "fourth", after=after)
    assert [e["type"] for _, e in told] == ["message.changed", "message.appended", "message.appended"]
    message = session.messages.get()
    assert message.content == "First second third fourth"
    assert message.metadata == {"streaming": True, "rendered_at": after.rendered_at}
    assert after.rendered_at >= rendered_before + events.STREAM_RENDER_SECONDS


def test_a_long_streaming_message_is_rendered_whole_less_often(new_session, told):
    session = new_session()
    events.record_text_chunks(session.pk, "agent_message_chunk", "x" * 100_000)
    [message] = session.messages.all()
    bound = 100_000 / events.STREAM_RENDER_CHARS_PER_SECOND
    assert bound > events.STREAM_RENDER_SECONDS

    def rendered_ago(seconds):
        metadata = {"streaming": True, "rendered_at": message.metadata["rendered_at"] - seconds}
        Message.objects.filter(pk=message.pk).update(metadata=metadata)
        told.clear()
        events.record_text_chunks(session.pk, "agent_message_chunk", "y")
        return [event["type"] for _, event in told]

    assert rendered_ago(events.STREAM_RENDER_SECONDS + 1) == ["message.appended"]
    assert rendered_ago(bound + 1) == ["message.changed", "message.appended"]


@pytest.mark.parametrize(
    "then",
    [
        lambda s: events.record_session_update(s.pk, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls"}),
        lambda s: events.record_session_update(s.pk, {"sessionUpdate": "plan", "entries": [{"content": "Plan"}]}),
        lambda s: events.record_text_chunks(s.pk, "agent_thought_chunk", "Hmm"),
        lambda s: events.record_turn_completed(s.pk, {"stop_reason": "end_turn"}),
    ],
    ids=["tool call", "plan", "thought", "turn end"],
)
def test_a_streamed_message_settles_once_when_anything_else_is_recorded(new_session, told, then):
    session = new_session()
    for text in ["# Title\n\n", "Some ", "**bold** text"]:
        events.record_text_chunks(session.pk, "agent_message_chunk", text)
    [message] = session.messages.all()
    told.clear()

    then(session)
    events.record_session_update(session.pk, {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "pwd"})
    events.record_turn_completed(session.pk, {"stop_reason": "end_turn"})

    renders = [e for e in announced(told, "message.changed") if e["message_id"] == message.pk]
    assert renders == [{"type": "message.changed", "message_id": message.pk, "created": False}]
    message.refresh_from_db()
    assert (message.content, message.metadata) == ("# Title\n\nSome **bold** text", {})


def test_text_after_a_settled_message_streams_into_it_again_and_its_pages_get_its_stream_element(new_session, told):
    session = new_session()
    events.record_text_chunks(session.pk, "agent_message_chunk", "Done.")
    events.record_turn_completed(session.pk, {"stop_reason": "end_turn"})
    [message] = session.messages.all()
    told.clear()

    events.record_text_chunks(session.pk, "agent_message_chunk", " Really.")

    assert [e["type"] for _, e in told] == ["message.changed", "message.appended"]
    message.refresh_from_db()
    assert (message.content, message.metadata["streaming"]) == ("Done. Really.", True)


# What a page shows ------------------------------------------------------------


@given(
    chunks=st.lists(CHUNK.filter(bool), min_size=1, max_size=15),
    renders=st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15)), max_size=5),
)
def test_a_page_shows_every_delta_once_whenever_it_is_sent_the_message_whole(chunks, renders):
    """A whole render reads the row as committed by then: ahead of the deltas this socket has had."""
    page, shown = "", Shown()
    offsets = [sum(map(len, chunks[:index])) for index in range(len(chunks))]
    # (before delta i, the row holds j more chunks than the page was sent): at most as many as were committed.
    renders_before = {}
    for before, ahead in renders:
        renders_before.setdefault(min(before, len(chunks) - 1), []).append(ahead)
    shown.rendered([Message(pk=1, content="", metadata={"streaming": True})])
    for index, (offset, text) in enumerate(zip(offsets, chunks, strict=True)):
        for ahead in renders_before.get(index, []):
            committed = "".join(chunks[: min(index + ahead, len(chunks))])
            message = Message(pk=1, content=committed, metadata={"streaming": True})
            shown.rendered([message])
            page = committed
        unseen = shown.unseen(1, offset, text)
        assert unseen is not None
        page += unseen
    assert page == "".join(chunks)


def test_a_page_that_missed_a_delta_needs_the_whole_message():
    shown = Shown()
    shown.rendered([Message(pk=1, content="Hello", metadata={"streaming": True})])
    assert shown.unseen(1, 9, "later") is None
    assert shown.unseen(2, 0, "never sent whole") is None


def test_a_settled_message_is_forgotten():
    shown = Shown()
    shown.rendered([Message(pk=1, content="Hello", metadata={"streaming": True})])
    shown.rendered([Message(pk=1, content="Hello", metadata={})])
    assert shown.unseen(1, 5, "!") is None


# The owner's stream ------------------------------------------------------------


def _chunk(seq, text):
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return StreamEvent("session.update", {"update": update}, seq=seq)


@pytest.mark.django_db(transaction=True)
def test_text_after_anything_else_the_owner_applied_is_rendered_whole_again_on_its_pages(
    make_task, make_session, make_execution, board, told
):
    """The turn's end settled the message; more text revives its stream element, not a bare append."""
    task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
    execution = make_execution(make_session(task))
    ref = runner.ExecutionRef(execution.session_id, execution.pk)
    owner = runner.Runner()
    owner._refs[ref.execution_id] = ref

    async def stream():
        await owner._apply(ref, _chunk(1, "Done."))
        await owner._text.flush_all()
        await owner._apply(ref, _chunk(2, " Yes."))
        await owner._text.flush_all()
        await owner._apply(ref, StreamEvent("turn.completed", {"stop_reason": "end_turn"}, seq=3))
        told.clear()
        await owner._apply(ref, _chunk(4, " Really."))
        await owner._text.flush_all()

    async_to_sync(stream)()
    [message] = Message.objects.filter(session=execution.session_id)
    assert (message.content, message.metadata["streaming"]) == ("Done. Yes. Really.", True)
    assert [e["type"] for _, e in told] == ["message.changed", "message.appended"]
