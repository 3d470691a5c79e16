"""Kandev's MCP server for an agent without ``mcpCapabilities.http``: over stdio, through ``kandev-mcp-stdio``.

Real processes end to end: the web app (Daphne), agentctl, the mock agent
started with ``--no-mcp-http``, and the ``kandev-mcp-stdio`` it starts from
what agentctl handed it. The agent lists the tool and gets the operator's
answer back through the web app's MCP endpoint.
"""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from kandev_web.agentctl.launcher import launch
from kandev_web.sessions.mcp_tokens import mcp_server_for_agent
from testing_support.agentctl import Inbox, message_text, text_prompt
from testing_support.browser import run_async

MOCK_AGENT = str(Path(sys.executable).parent / "kandev-mock-agent")

MAKE_SESSION = """
from kandev_web.board.models import Task
from kandev_web.sessions.mcp_tokens import token_hash
from kandev_web.sessions.models import SessionState, TaskSession, Turn
session = TaskSession.objects.create(
    task=Task.objects.get(pk={task_id}), state=SessionState.RUNNING, mcp_token_hash=token_hash("{token}")
)
Turn.objects.create(session=session)
"""

# Waits inside one shell for the agent's question to be recorded, then answers it.
ANSWER_WHEN_ASKED = """
import time
from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.services import respond
deadline = time.monotonic() + 30
while not Clarification.objects.filter(status="pending").exists():
    assert time.monotonic() < deadline, "the agent's question never arrived"
    time.sleep(0.1)
record = Clarification.objects.get(status="pending")
respond(record.pending_id, answers=[{"question_id": "db", "selected_options": ["db_opt2"]}])
"""


@pytest.fixture(scope="module")
def task_id(server):
    return server.create_operator("mcp-stdio", workspace="MCP stdio", tasks=True)["task_ids"][0]


@pytest.fixture
def token(server, task_id, request):
    """A running session of its own for each test: the same question twice in one turn is answered from the first."""
    token = f"token-{request.node.name}"
    server.manage("shell", "-c", MAKE_SESSION.format(task_id=task_id, token=token))
    return token


async def _run_agent(server, token, *, http: bool) -> tuple[dict, str]:
    """Start the mock agent through agentctl, play ``mcp-tools`` and answer its question; what it said."""
    argv = [MOCK_AGENT] if http else [MOCK_AGENT, "--no-mcp-http"]
    agentctl = await launch(argv)
    inbox = Inbox()
    try:
        async with agentctl.client(on_notification=inbox) as client:
            initialized = await client.request("agent.initialize", {"agent_id": "mock", "runtime_flags": {}})
            assert initialized["agent_capabilities"]["mcpCapabilities"]["http"] is http
            kandev = mcp_server_for_agent(f"{server.url}/mcp/", token)
            session = await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [kandev]})
            await client.request(
                "agent.prompt", {"session_id": session["session_id"], "prompt": text_prompt("/e2e:mcp-tools")}
            )
            await asyncio.to_thread(server.manage, "shell", "-c", ANSWER_WHEN_ASKED)
            completed = await inbox.next("turn.completed", timeout=30)
            assert completed["stop_reason"] == "end_turn"
            return session, message_text(inbox, session["session_id"])
    finally:
        await agentctl.stop()


def test_an_agent_without_http_mcp_gets_kandevs_tool_over_stdio_and_its_answer(server, token):
    session, said = run_async(_run_agent(server, token, http=False))

    assert session["mcp_transports"] == {"kandev": "stdio"}
    assert "Kandev's tools: ask_user_question_kandev." in said
    result = json.loads(said.split("Tool result: ", 1)[1])
    assert result == {"db": {"selected_option": "db_opt2"}}


def test_an_agent_that_speaks_http_mcp_gets_kandevs_server_over_http(server, token):
    session, said = run_async(_run_agent(server, token, http=True))

    assert session["mcp_transports"] == {"kandev": "http"}
    assert json.loads(said.split("Tool result: ", 1)[1]) == {"db": {"selected_option": "db_opt2"}}
