"""Kandev's MCP endpoint over real HTTP: tokens, validation, blocking with keepalives."""

import asyncio
import json

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from testing_support.browser import run_async

SERVER_ENV = {"KANDEV_MCP_KEEPALIVE_SECONDS": "0.2"}

MAKE_SESSION = """
from kandev_web.board.models import Task
from kandev_web.sessions.mcp_tokens import token_hash
from kandev_web.sessions.models import SessionState, TaskSession, Turn
session = TaskSession.objects.create(
    task=Task.objects.get(pk={task_id}), state=SessionState.RUNNING, mcp_token_hash=token_hash("{token}")
)
Turn.objects.create(session=session)
print(session.pk)
"""

ANSWER = """
from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.services import respond
record = Clarification.objects.get()
respond(record.pending_id, answers=[{{"question_id": "db", "selected_options": ["db_opt2"]}}])
"""

BUNDLE = {
    "questions": [
        {
            "id": "db",
            "title": "Database",
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
}


@pytest.fixture(scope="module")
def token(server):
    ids = server.create_operator("mcp", workspace="MCP", tasks=True)
    server.manage("shell", "-c", MAKE_SESSION.format(task_id=ids["task_ids"][0], token="good-token"))
    return "good-token"


async def call(server, token, *calls):
    """Open an MCP session with ``token`` and run each ``call(session)``."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http,
        streamable_http_client(f"{server.url}/mcp/", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return [await each(session) for each in calls]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic good-token"}])
def test_no_valid_token_is_a_401(server, token, headers):
    response = httpx2.post(f"{server.url}/mcp/", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_tool_is_listed(server, token):
    async def tools(session):
        return (await session.list_tools()).tools

    [tools] = run_async(call(server, token, tools))
    [tool] = [t for t in tools if t.name == "ask_user_question_kandev"]
    assert "operator" in tool.description


def test_an_invalid_bundle_is_a_tool_error_with_kandevs_messages(server, token):
    async def ask(session):
        return await session.call_tool(
            "ask_user_question_kandev", {"questions": [{"prompt": "Only one?", "options": []}]}
        )

    [result] = run_async(call(server, token, ask))
    assert result.is_error
    assert "question 1 must have at least 2 options" in result.content[0].text


def test_the_call_blocks_with_keepalives_until_the_operator_answers(server, token):
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    async def ask(session):
        return await session.call_tool("ask_user_question_kandev", BUNDLE, progress_callback=on_progress)

    async def scenario():
        calling = asyncio.ensure_future(call(server, token, ask))
        while len(progress) < 2:
            await asyncio.sleep(0.05)
        assert not calling.done()
        await asyncio.to_thread(server.manage, "shell", "-c", ANSWER.format())
        return await asyncio.wait_for(calling, 30)

    [result] = run_async(scenario())
    assert not result.is_error
    text = "".join(block.text for block in result.content)
    assert json.loads(text) == {"db": {"selected_option": "db_opt2"}}
    assert set(progress) == {"Waiting for your response in Kandev"}


REUSE_SESSION = MAKE_SESSION.replace("print(session.pk)", "print(session.pk, session.turns.get().pk)")

ANSWER_OPEN = """
from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.services import respond
record = Clarification.objects.get(session_id={session_id}, status="pending")
respond(record.pending_id, answers=[{{"question_id": "db", "selected_options": ["{option}"]}}])
"""

NEXT_TURN = """
from kandev_web.sessions.models import Turn
Turn.objects.filter(session_id={session_id}).update(completed_at=Turn.objects.get(session_id={session_id}).started_at)
Turn.objects.create(session_id={session_id})
"""

COUNT = """
from kandev_web.clarifications.models import Clarification
print(Clarification.objects.filter(session_id={session_id}).count())
"""


@pytest.fixture(scope="module")
def reuse(server):
    """A session of its own for the bundle-reuse calls: ``(token, session id)``."""
    ids = server.create_operator("mcp-reuse", workspace="MCP reuse", tasks=True)
    code = REUSE_SESSION.format(task_id=ids["task_ids"][0], token="reuse-token")
    output = server.manage("shell", "-v", "0", "-c", code)
    return "reuse-token", int(output.split()[0])


def ask_and_answer(server, token, session_id, option):
    """Call the tool and answer the bundle it opens with ``option``; the tool's result."""
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    async def ask(session):
        return await session.call_tool("ask_user_question_kandev", BUNDLE, progress_callback=on_progress)

    async def scenario():
        calling = asyncio.ensure_future(call(server, token, ask))
        while not progress and not calling.done():
            await asyncio.sleep(0.05)
        assert not calling.done(), "the call returned without the operator being asked"
        await asyncio.to_thread(server.manage, "shell", "-c", ANSWER_OPEN.format(session_id=session_id, option=option))
        return await asyncio.wait_for(calling, 30)

    [result] = run_async(scenario())
    return json.loads("".join(block.text for block in result.content))


def test_a_retried_call_gets_the_answer_given_and_a_later_turn_asks_again(server, reuse):
    token, session_id = reuse
    assert ask_and_answer(server, token, session_id, "db_opt2") == {"db": {"selected_option": "db_opt2"}}

    async def ask(session):
        return await session.call_tool("ask_user_question_kandev", BUNDLE)

    # The same call again within the turn (a retry): the answer already given, at once.
    [retried] = run_async(asyncio.wait_for(call(server, token, ask), 10))
    assert json.loads(retried.content[0].text) == {"db": {"selected_option": "db_opt2"}}
    assert server.manage("shell", "-v", "0", "-c", COUNT.format(session_id=session_id)).strip() == "1"

    # The next turn asks the same questions: the operator is asked again, and their new answer is the result.
    server.manage("shell", "-c", NEXT_TURN.format(session_id=session_id))
    assert ask_and_answer(server, token, session_id, "db_opt1") == {"db": {"selected_option": "db_opt1"}}
    assert server.manage("shell", "-v", "0", "-c", COUNT.format(session_id=session_id)).strip() == "2"
