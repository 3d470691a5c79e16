"""What an agent sends with a NUL or a lone surrogate is kept, with U+FFFD in their place, on every database.

``cat`` of a binary file puts a NUL in a tool result; PostgreSQL refuses it in
``text`` and ``jsonb``, and neither database takes a lone surrogate. Before,
the notification was dropped (logged and lost) and the tool call stayed "in
progress" for ever. Here the frames come over a real socket from an
in-process stand-in for agentctl (raw, or as agentctl encodes them), into
the owning stream client the runner builds, and on to the database (SQLite, and PostgreSQL in scripts/test's
second pass).
"""

import asyncio
import json
import uuid
from contextlib import asynccontextmanager

import pytest
from websockets.asyncio.server import serve

from kandev_web.agentctl import envelope
from kandev_web.clarifications.models import Clarification
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession
from kandev_web.sessions.runner import ExecutionRef, runner

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

BINARY = "\x7fELF\x02\x01\x01\x00\x00\x00"
HALF = "half a pair: \ud83d"


def notification(action: str, payload: dict) -> str:
    """A frame with what the agent sent.

    A NUL is valid JSON, and goes out raw, as any program may send it; a lone
    surrogate or a NaN no decoder on the stream accepts (``envelope.decode``),
    so that frame is agentctl's own encoding of it (``envelope.notification``).
    """
    frame = {
        "id": str(uuid.uuid4()),
        "type": "notification",
        "action": action,
        "payload": payload,
        "timestamp": envelope.timestamp(),
    }
    raw = json.dumps(frame)  # ensure_ascii: a NUL as \u0000, a lone surrogate as \ud83d
    return envelope.notification(action, payload) if "\\ud" in raw or "NaN" in raw else raw


NOTIFICATIONS = [
    (
        "session.update",
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"The file starts {BINARY}"},
            }
        },
    ),
    ("session.update", {"update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": HALF}}}),
    (
        "session.update",
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "cat-1",
                "title": "cat a.out\x00",
                "kind": "read",
                "status": "in_progress",
                "rawInput": {"path": "a.out\x00"},
            }
        },
    ),
    (
        "session.update",
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "cat-1",
                "status": "completed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": BINARY}},
                    {"type": "diff", "path": "bin\x00", "oldText": "a\x00", "newText": HALF},
                ],
                "rawOutput": {"stdout": BINARY, "\x00key": 1, "ratio": float("nan")},
            }
        },
    ),
    (
        "session.update",
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "run-1",
                "title": "Run it",
                "kind": "execute",
                "status": "completed",
                "content": [{"type": "terminal", "terminalId": "term-1"}],
                "_meta": {
                    "terminal_output": {"terminal_id": "term-1", "data": f"out {BINARY}"},
                    "terminal_exit": {"terminal_id": "term-1", "exit_code": 0},
                },
            }
        },
    ),
    (
        "permission.requested",
        {
            "pending_id": "perm-1",
            "tool_call": {"toolCallId": "rm-1", "title": "rm \x00 -rf"},
            "options": [{"optionId": "allow", "name": f"Allow {HALF}", "kind": "allow_once"}],
        },
    ),
    (
        "elicitation.requested",
        {
            "pending_id": "7d3c9a52-0000-4000-8000-0000000000e1",
            "session_id": "acp-1",
            "tool_call_id": "toolu_1",
            "message": "Pick\x00",
            "questions": [
                {
                    "id": "question_0",
                    "title": "Colour\x00",
                    "prompt": f"Pick {HALF}",
                    "kind": "single",
                    "accepts_text": True,
                    "sensitive": False,
                    "options": [
                        {"id": "Red", "label": "Red\x00", "description": HALF},
                        {"id": "Blue", "label": "Blue"},
                    ],
                }
            ],
        },
    ),
]


@asynccontextmanager
async def agentctl_saying(frames: list[str]):
    """A stand-in agentctl: it answers any request after sending ``frames``, so the answer comes after them."""

    async def handle(connection):
        async for data in connection:
            request = envelope.decode(data)
            for frame in frames:
                await connection.send(frame)
            await connection.send(envelope.response(request, {"pending": []}))

    async with serve(handle, "127.0.0.1", 0) as server:
        yield f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/agent/stream"


@pytest.fixture
def execution(make_task, make_session, make_execution):
    return make_execution(make_session(make_task("Inspect"), acp_session_id="acp-1"))


def deliver(execution, frames: list[str]) -> None:
    """The frames through the runner's owning stream client, applied before the answer to a request arrives.

    Streamed text is written in batches (``text_batches``): the last is written when the stream ends.
    """

    async def run():
        async with agentctl_saying(frames) as url:
            client = runner._stream_client(ExecutionRef(execution.session_id, execution.pk), url, "token", after_seq=0)
            await client.connect()
            try:
                await client.request("agent.elicitations.list", {})
            finally:
                await client.close()
                await runner._text.flush(execution.pk)  # the streamed text, written a batch at a time

    asyncio.run(run())


def test_a_binary_tool_result_completes_its_tool_call_and_every_message_is_kept(execution):
    deliver(execution, [notification(action, payload) for action, payload in NOTIFICATIONS])

    by_type = {m.type: m for m in Message.objects.filter(session=execution.session_id)}
    assert by_type[MessageType.MESSAGE].content == "The file starts \x7fELF\x02\x01\x01\ufffd\ufffd\ufffd"
    assert by_type[MessageType.THINKING].content == "half a pair: \ufffd"
    read = by_type[MessageType.TOOL_READ]
    assert read.content == "cat a.out\ufffd"
    assert read.metadata["status"] == "completed"  # not "in progress" for ever
    assert read.metadata["output"] == "\x7fELF\x02\x01\x01\ufffd\ufffd\ufffd"
    assert read.metadata["rawInput"] == {"path": "a.out\ufffd"}
    assert read.metadata["rawOutput"] == {"stdout": read.metadata["output"], "\ufffdkey": 1, "ratio": None}
    [diff] = read.metadata["diffs"]
    assert diff["new_path"].endswith("bin\ufffd")
    [terminal] = by_type[MessageType.TOOL_EXECUTE].metadata["terminals"]
    assert "\x00" not in terminal["output"]
    assert terminal["exited"]
    permission = by_type[MessageType.PERMISSION_REQUEST]
    assert permission.content == "rm \ufffd -rf"
    assert permission.metadata["options"][0]["name"] == "Allow half a pair: \ufffd"
    record = Clarification.objects.get()
    assert record.questions[0]["prompt"] == "Pick half a pair: \ufffd"
    assert [o["label"] for o in record.questions[0]["options"]] == ["Red\ufffd", "Blue"]
    assert Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).get().content == "Pick half a pair: \ufffd"


def test_a_stderr_tail_with_a_nul_still_says_how_the_agent_ended(execution):
    crash = {"exit_code": 3, "signal": None, "stderr_tail": f"Traceback\nValueError: {BINARY}\n{HALF}"}
    deliver(execution, [notification("agent.exited", crash)])
    session = TaskSession.objects.get(pk=execution.session_id)
    assert session.state == SessionState.FAILED
    assert session.error_output == "Traceback\nValueError: \x7fELF\x02\x01\x01\ufffd\ufffd\ufffd\nhalf a pair: \ufffd"
