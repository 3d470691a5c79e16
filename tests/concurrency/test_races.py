"""Operators racing each other over real HTTP, on SQLite and (scripts/test's second pass) PostgreSQL.

Fifty requests at once against a Daphne process serving the test database,
each on a connection of its own: the database alone decides who wins.
Whatever the race, no request is a 5xx, exactly one answer settles a
question and reaches the agent's waiting ``ask_user_question_kandev`` call
(the others are told it was already answered), and no task is lost or
duplicated.
"""

import asyncio
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx2
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from kandev_web.agents.models import AgentProfile
from kandev_web.board.models import Task
from kandev_web.clarifications import timeline
from kandev_web.clarifications.models import Clarification, Source, Status
from kandev_web.sessions.mcp_tokens import new_token
from kandev_web.sessions.models import AuthorType, Message, MessageType, SessionState, TaskSession, Turn
from testing_support.processes import daphne, server_environ

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

BURST = 50
#: Any 32 letters: Django takes an unmasked secret that matches the cookie.
CSRF = "c" * 32

#: What the agent asks, with a NUL as ``cat`` of a binary file would put in it.
QUESTIONS = [
    {
        "id": "db",
        "title": "DB",
        "prompt": "Which database?\x00",
        "options": [{"label": "Postgres", "description": "relational"}, {"label": "SQLite", "description": "embedded"}],
    }
]


@dataclass(frozen=True)
class Response:
    status_code: int
    text: str


def shared_database_url() -> str:
    """The database this run's tests use, as a URL another process can open."""
    name = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


@pytest.fixture
def server_url(transactional_db, tmp_path):
    """A Daphne process serving kandev-web on the test database, stopped before the test's data is flushed.

    One per test, not per module: a server kept between tests was still at
    work from the last one (a tool call re-reading its question, the runner)
    when the flush truncated the tables, and PostgreSQL ended the flush as a
    deadlock (a clean-clone run's PostgreSQL pass).
    """
    database_url = shared_database_url()
    log = tmp_path / "server.log"
    # Short keepalives: a waiting tool call also re-reads its question between them.
    env = server_environ(
        Path("unused"),
        {
            "DATABASE_URL": database_url,
            "KANDEV_MCP_KEEPALIVE_SECONDS": "0.2",
            "KANDEV_FEATURES_ACP_ELICITATION": "true",
        },
    )
    with log.open("w") as output, daphne(env, cwd=settings.BASE_DIR, output=output, timeout=30) as (port, _):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def post(server_url, operator):
    """``post(requests)``: each ``(path, data)`` POSTed at once, as the operator; their responses, in order."""
    client = Client()
    client.force_login(operator)
    headers = {
        "Cookie": f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}",
        "X-CSRFToken": CSRF,
        "HX-Request": "true",
    }

    def send_all(requests: list[tuple[str, dict]]) -> list[Response]:
        start = threading.Barrier(len(requests))

        def send(request: tuple[str, dict]) -> Response:
            path, data = request
            http = urllib.request.Request(
                server_url + path, data=urlencode(data).encode(), headers=headers, method="POST"
            )
            start.wait()
            try:
                with urllib.request.urlopen(http, timeout=60) as response:
                    return Response(response.status, response.read().decode())
            except urllib.error.HTTPError as error:
                return Response(error.code, error.read().decode())

        with ThreadPoolExecutor(len(requests)) as pool:
            return list(pool.map(send, requests))

    return send_all


def no_5xx(responses: list[Response]) -> Counter:
    statuses = Counter(response.status_code for response in responses)
    assert not [status for status in statuses if status >= 500], statuses
    return statuses


@dataclass
class WaitingAgent:
    """An agent's ``ask_user_question_kandev`` call over the server's MCP endpoint, waiting for its answer."""

    question: Clarification
    thread: threading.Thread
    results: list

    def answers(self) -> list:
        """What the tool call returned to the agent: one result, once it has returned."""
        self.thread.join(30)
        assert not self.thread.is_alive(), "the agent's tool call is still waiting"
        return self.results


@pytest.fixture
def waiting_agent(server_url, make_task, operator) -> WaitingAgent:
    token, digest = new_token()
    session = TaskSession.objects.create(
        task=make_task("Pick"), state=SessionState.RUNNING, acp_session_id="acp-1", mcp_token_hash=digest
    )
    Turn.objects.create(session=session)
    results = []

    async def ask() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http,
            streamable_http_client(f"{server_url}/mcp/", http_client=http) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            result = await mcp.call_tool("ask_user_question_kandev", {"questions": QUESTIONS})
            results.append(result)

    thread = threading.Thread(target=asyncio.run, args=(ask(),))
    thread.start()
    deadline = time.monotonic() + 30
    while (question := Clarification.objects.filter(session=session).first()) is None:
        assert thread.is_alive(), results or "the question was never asked"
        assert time.monotonic() < deadline, results or "the question was never asked"
        time.sleep(0.05)
    return WaitingAgent(question, thread, results)


def settled_once(record: Clarification) -> Clarification:
    """The record, settled, with its one timeline message showing the one response."""
    record.refresh_from_db()
    assert record.status != Status.PENDING
    [message] = Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id)
    row = timeline.asked(message)
    assert row is not None
    assert row.status == record.status
    assert row.record.response == record.response
    return record


def delivered(agent: WaitingAgent) -> dict:
    """The one answer the agent's tool call returned."""
    [result] = agent.answers()
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_fifty_identical_answers_reach_the_waiting_agent_once(post, waiting_agent):
    question = waiting_agent.question
    assert question.questions[0]["prompt"] == "Which database?\ufffd"
    option = question.questions[0]["options"][0]["id"]
    path = f"/clarifications/{question.pending_id}/respond/"
    responses = post([(path, {"answer-db-option": option})] * BURST)
    assert no_5xx(responses) == {204: 1, 200: BURST - 1}
    told = [response.text for response in responses if response.status_code == 200]
    assert all("already answered" in text for text in told), told[:1]
    assert delivered(waiting_agent) == {"db": {"selected_option": option}}
    record = settled_once(question)
    assert record.status == Status.ANSWERED
    assert record.response["answers"] == [{"question_id": "db", "selected_options": [option], "custom_text": ""}]


def test_answers_racing_skips_reach_the_waiting_agent_once_as_the_winner_said(post, waiting_agent):
    question = waiting_agent.question
    option = question.questions[0]["options"][1]["id"]
    path = f"/clarifications/{question.pending_id}/respond/"
    answer, skip = {"answer-db-option": option}, {"action": "skip", "reject_reason": "not now"}
    requests = [(path, answer if n % 2 else skip) for n in range(BURST)]
    responses = post(requests)
    assert no_5xx(responses) == {204: 1, 200: BURST - 1}
    [winner] = [data for (_, data), response in zip(requests, responses, strict=True) if response.status_code == 204]
    result = delivered(waiting_agent)
    record = settled_once(question)
    if winner is skip:
        assert (record.status, record.response["reject_reason"]) == (Status.REJECTED, "not now")
        assert "not now" in json.dumps(result)
    else:
        assert record.status == Status.ANSWERED
        assert record.response["answers"][0]["selected_options"] == [option]
        assert result == {"db": {"selected_option": option}}


def eventually(read, what: str, timeout: float = 60):
    """``read()``'s first truthy value: the state a real agent reaches in its own time."""
    deadline = time.monotonic() + timeout
    while not (value := read()):
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)
    return value


def test_fifty_answers_to_an_elicitation_reach_the_agent_once(post, make_task, workspace):
    """The mock agent under a real agentctl asks over ACP; agentctl alone decides which answer counts."""
    task = make_task("Elicit")
    command = [sys.executable, "-m", "kandev_web.mock_agent"]
    profile = AgentProfile.objects.create(workspace=workspace, name="Mock", agent_id="mock-agent", command=command)
    [started] = post([(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk, "prompt": "/e2e:elicit-single"})])
    assert started.status_code == 204
    question = eventually(
        lambda: Clarification.objects.filter(session__task=task, source=Source.ELICITATION).first(), "a question"
    )
    path = f"/clarifications/{question.pending_id}/respond/"
    option = question.questions[0]["options"][0]["id"]
    responses = post([(path, {"answer-question_0-option": option})] * BURST)
    assert no_5xx(responses) == {204: 1, 200: BURST - 1}
    session = question.session
    eventually(lambda: Turn.objects.filter(session=session, completed_at__isnull=False).exists(), "the turn's end")
    [said] = Message.objects.filter(session=session, author_type=AuthorType.AGENT, content__startswith="Answer:")
    assert json.loads(said.content.removeprefix("Answer:")) == {"action": "accept", "content": {"question_0": option}}
    assert settled_once(question).status == Status.ANSWERED
    [stopped] = post([(f"/sessions/{session.pk}/stop/", {})])
    assert stopped.status_code == 204


def test_creates_racing_moves_lose_no_task(post, board, make_task):
    backlog, *_, done = board.steps.all()
    moved = [make_task(f"old {n}", step=backlog, position=n) for n in range(BURST // 2)]
    creates = [
        (f"/boards/{board.pk}/tasks/", {"title": f"new {n}", "description": "", "step": backlog.pk})
        for n in range(BURST // 2)
    ]
    moves = [(f"/tasks/{task.pk}/move/", {"step": done.pk}) for task in moved]
    statuses = no_5xx(post([request for pair in zip(creates, moves, strict=True) for request in pair]))
    assert statuses == {200: BURST}
    assert sorted(Task.objects.filter(step=backlog).values_list("title", flat=True)) == sorted(
        f"new {n}" for n in range(BURST // 2)
    )
    assert set(Task.objects.filter(step=done)) == set(moved)


def test_deletes_racing_edits_are_never_a_5xx(post, make_task):
    tasks = [make_task(f"task {n}") for n in range(BURST // 2)]
    requests = []
    for task in tasks:
        requests += [
            (f"/tasks/{task.pk}/edit/", {"title": f"{task.title} edited", "description": ""}),
            (f"/tasks/{task.pk}/delete/", {}),
        ]
    statuses = no_5xx(post(requests))
    assert set(statuses) <= {200, 404}, statuses
    assert not Task.objects.exists()
