"""Answers sent as frames on the task page's socket (``TaskConsumer.receive``).

Each bad frame gets a sentence back on the same socket and changes nothing;
the socket stays open for the next one. A good frame reaches the agent
through the same answer service as the HTTP endpoint, and its outcome comes
back as the overlay's outcome marker.
"""

import asyncio
import json
from unittest.mock import ANY

import pytest
from channels.db import database_sync_to_async

from kandev_web.agentctl.stream_client import AgentStreamNotConnected, NotFound
from kandev_web.asgi import application
from kandev_web.board.models import Task
from kandev_web.clarifications import actions, elicitations, services
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions.models import AgentExecution, SessionState, TaskSession, Turn
from testing_support.runner import FakeRunner
from testing_support.sockets import HOST, Communicator, two_running_tasks

ORIGIN = (b"origin", b"http://127.0.0.1")
#: The reply to an answer frame: its outcome, for the page's #answer-outcomes.
OUTCOME = 'hx-swap-oob="beforeend:#answer-outcomes"'

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

BUNDLE = parse_bundle(
    [
        {
            "id": "db",
            "title": "DB",
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "relational"},
                {"label": "SQLite", "description": "embedded"},
            ],
        }
    ]
)
ELICITATION = {
    "pending_id": "7d3c9a52-0000-4000-8000-00000000abcd",
    "session_id": "acp-1",
    "tool_call_id": "toolu_1",
    "message": "Pick a colour",
    "questions": [
        {
            "id": "question_0",
            "title": "Colour",
            "prompt": "Pick a colour",
            "kind": "single",
            "accepts_text": True,
            "options": [{"id": "Red", "label": "Red"}, {"id": "Blue", "label": "Blue"}],
        },
    ],
}


@pytest.fixture
def fake_agentctl(monkeypatch):
    def install(answer):
        fake = FakeRunner(answer)
        monkeypatch.setattr(elicitations, "runner", fake)
        return fake

    return install


@database_sync_to_async
def _ask(task) -> Clarification:
    record, _ = services.request_clarification(task.sessions.get(), BUNDLE)
    return record


@database_sync_to_async
def _elicit(task) -> Clarification:
    session = task.sessions.get()
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent/stream", token="t")
    return elicitations.record_requested(execution.pk, session.pk, ELICITATION)


@database_sync_to_async
def _status(record) -> str:
    return Clarification.objects.get(pk=record.pk).status


async def _open(task, cookie) -> Communicator:
    communicator = Communicator(application, f"/ws/tasks/{task.pk}/", headers=[ORIGIN, HOST, cookie])
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def _reply(communicator, marker: str) -> str:
    """The first frame that contains ``marker``; frames pushed for other reasons are passed over."""
    while True:
        output = await communicator.receive_output(timeout=20)
        assert output["type"] != "websocket.close", "the socket was closed"
        if marker in output.get("text", ""):
            return output["text"]


def _answer(record, **fields) -> str:
    return json.dumps({"type": "clarification.answer", "pending_id": record.pending_id, "HEADERS": {}, **fields})


async def test_an_answer_frame_settles_an_ask_user_question_bundle():
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt1"}))
    assert 'data-outcome="delivered"' in await _reply(communicator, OUTCOME)
    assert await _status(record) == Status.ANSWERED
    await communicator.disconnect()


async def test_skip_is_the_action_of_the_frame():
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, action="skip", reject_reason="not now"))
    assert 'data-outcome="delivered"' in await _reply(communicator, OUTCOME)
    assert await _status(record) == Status.REJECTED
    await communicator.disconnect()


async def test_an_elicitation_answer_is_forwarded_to_agentctl_as_the_contract_says(fake_agentctl):
    mine, _, cookie = await two_running_tasks()
    record = await _elicit(mine)
    fake = fake_agentctl({"success": True, "action": "accept", "content": {"question_0": "Blue"}})
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, **{"answer-question_0-option": ["Blue"]}))
    assert 'data-outcome="delivered"' in await _reply(communicator, OUTCOME)
    assert fake.sent == [
        (
            "agent.elicitations.respond",
            {
                "pending_id": record.pending_id,
                "answers": [{"question_id": "question_0", "selected_options": ["Blue"], "custom_text": ""}],
                "rejected": False,
                "reject_reason": "",
                "answer_ref": ANY,
            },
        )
    ]
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("answer", "outcome", "words"),
    [
        (NotFound("settled"), "already_settled", "already answered or withdrawn"),
        (AgentStreamNotConnected("down"), "stream_down", "connection to the agent is down"),
        ("hang", "not_responding", "The agent is not responding; your answer was not delivered."),
    ],
    ids=["already-answered", "stream-down", "not-responding"],
)
async def test_every_delivery_outcome_comes_back_on_the_socket(fake_agentctl, settings, answer, outcome, words):
    settings.KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS = 0.5
    mine, _, cookie = await two_running_tasks()
    record = await _elicit(mine)
    fake_agentctl(answer)
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, **{"answer-question_0-option": "Red"}))
    reply = await _reply(communicator, OUTCOME)
    assert f'data-outcome="{outcome}"' in reply
    assert words in reply
    assert await _status(record) == Status.PENDING
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("this is not json", "not JSON"),
        ("[1, 2]", "not an object"),
        (json.dumps({"type": "board.hack"}), "does not know"),
        (json.dumps({"type": "clarification.answer"}), "which question"),
        ("x" * (1024 * 1024 + 1), "too large"),
    ],
    ids=["non-json", "not-an-object", "unknown-type", "no-pending-id", "oversized"],
)
async def test_a_malformed_frame_gets_a_sentence_and_the_socket_stays_open(frame, words):
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=frame)
    assert words in await _reply(communicator, 'data-testid="toast"')
    # Still open, and still answering.
    await communicator.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt1"}))
    assert 'data-outcome="delivered"' in await _reply(communicator, OUTCOME)
    await communicator.disconnect()


@pytest.mark.parametrize(
    "fields",
    [{"answer-nope-option": "x"}, {"is_staff": True}, {"answer-db-option": {"id": 1}}, {"action": "approve"}],
    ids=["unknown-question", "unknown-field", "not-text", "unknown-action"],
)
async def test_a_frame_with_fields_the_question_does_not_have_changes_nothing(fields):
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt1", **fields}))
    reply = await _reply(communicator, OUTCOME)
    assert 'data-outcome="bad_frame"' in reply
    assert 'data-testid="toast"' in reply
    assert await _status(record) == Status.PENDING
    await communicator.disconnect()


async def test_another_workspaces_pending_id_is_refused_and_nothing_is_forwarded(fake_agentctl):
    mine, theirs, cookie = await two_running_tasks()
    foreign = await _elicit(theirs)
    fake = fake_agentctl({"success": True, "action": "decline"})
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(foreign, action="skip"))
    assert "not one you can answer" in await _reply(communicator, 'data-testid="toast"')
    assert fake.sent == []
    assert await _status(foreign) == Status.PENDING
    await communicator.disconnect()


async def test_a_question_of_another_task_in_the_same_workspace_is_refused():
    mine, _, cookie = await two_running_tasks()

    @database_sync_to_async
    def other_task():
        task = Task.objects.create(board=mine.board, step=mine.step, title="Other")
        session = TaskSession.objects.create(task=task, state=SessionState.RUNNING)
        Turn.objects.create(session=session)
        return task

    record = await _ask(await other_task())
    communicator = await _open(mine, cookie)
    await communicator.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt1"}))
    assert "not one you can answer" in await _reply(communicator, 'data-testid="toast"')
    assert await _status(record) == Status.PENDING
    await communicator.disconnect()


async def test_every_page_of_the_task_is_sent_the_same_overlay_before_anything_else_about_the_question():
    mine, _, cookie = await two_running_tasks()
    pages = [await _open(mine, cookie) for _ in range(3)]
    for page in pages:
        await page.receive_output(timeout=20)  # the catch-up
    await _elicit(mine)
    first_frames = [(await page.receive_output(timeout=20))["text"] for page in pages]
    assert 'data-testid="clarification-overlay"' in first_frames[0]
    assert "Pick a colour" in first_frames[0]
    assert len(set(first_frames)) == 1
    for page in pages:
        await page.disconnect()


async def test_a_submit_for_a_question_the_page_was_shown_goes_to_agentctl_even_when_it_is_settled_since(
    fake_agentctl,
):
    """The page answers from the question read as it was shown; whether the answer counts is agentctl's call."""
    mine, _, cookie = await two_running_tasks()
    communicator = await _open(mine, cookie)
    await communicator.receive_output(timeout=20)
    record = await _elicit(mine)
    await _reply(communicator, 'data-testid="clarification-overlay"')
    settled = {"pending_id": record.pending_id, "outcome": "cancelled", "reason": "turn_cancelled"}
    await database_sync_to_async(actions.do_settle_elicitation)(settled)
    fake = fake_agentctl(NotFound("no open elicitation has that pending_id"))
    await communicator.send_to(text_data=_answer(record, action="submit", **{"answer-question_0-option": "Red"}))
    assert 'data-outcome="already_settled"' in await _reply(communicator, OUTCOME)
    assert [payload["pending_id"] for _, payload in fake.sent] == [record.pending_id]
    await communicator.disconnect()


async def test_a_page_shown_an_elicitation_reaches_its_agentctl_before_the_operator_answers(fake_agentctl):
    """The answer's connection is opened while the operator reads (``Runner.reach``), and the answer then uses it."""
    mine, _, cookie = await two_running_tasks()
    fake = fake_agentctl({"success": True, "action": "accept", "content": {"question_0": "Blue"}})
    communicator = await _open(mine, cookie)
    await communicator.receive_output(timeout=20)
    record = await _elicit(mine)
    await _reply(communicator, 'data-testid="clarification-overlay"')
    async with asyncio.timeout(10):
        while not fake.reached:
            await asyncio.sleep(0.01)
    execution = await database_sync_to_async(lambda: Clarification.objects.get(pk=record.pk).execution)()
    assert [(e.execution_id, e.url, e.token) for e in fake.reached] == [(execution.pk, execution.url, execution.token)]
    assert fake.sent == []  # nothing is sent before the operator answers
    await communicator.send_to(text_data=_answer(record, **{"answer-question_0-option": ["Blue"]}))
    assert 'data-outcome="delivered"' in await _reply(communicator, OUTCOME)
    assert [action for action, _ in fake.sent] == ["agent.elicitations.respond"]
    await communicator.disconnect()


async def _frames_until(communicator, *markers) -> str:
    """Every frame up to the one by which all ``markers`` have been seen, joined."""
    seen = ""
    while not all(marker in seen for marker in markers):
        output = await communicator.receive_output(timeout=20)
        assert output["type"] != "websocket.close", "the socket was closed"
        seen += output.get("text", "")
    return seen


@database_sync_to_async
def _answerer(record) -> tuple:
    found = Clarification.objects.select_related("answered_by").get(pk=record.pk)
    return found.answered_by.username, found.answered_via, found.answered_from


async def test_the_record_says_who_answered_from_which_tab_and_the_other_tab_is_told():
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    answering, watching = await _open(mine, cookie), await _open(mine, cookie)
    await answering.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt2"}))

    # The answering tab: its outcome, its timeline line in its own words, and no notice.
    here = await _frames_until(answering, OUTCOME, "clarification-record-settlement")
    assert 'data-outcome="delivered"' in here
    assert "Answered by alice in this tab" in here
    assert "already answered" not in here
    # Another tab: the same line in its words, and a notice saying who and where.
    there = await _frames_until(watching, "clarification-record-settlement", 'data-testid="toast"')
    assert "Answered by alice in another tab" in there
    assert "This question was already answered by alice in another tab at <time datetime=" in there
    assert 'data-reason="operator"' in there

    user, via, tab = await _answerer(record)
    assert (user, via) == ("alice", "task_page")
    assert tab
    for communicator in (answering, watching):
        await communicator.disconnect()


async def test_a_late_answer_from_another_tab_is_told_once_with_who_answered_first():
    mine, _, cookie = await two_running_tasks()
    record = await _ask(mine)
    first, second = await _open(mine, cookie), await _open(mine, cookie)
    await first.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt1"}))
    await _frames_until(first, OUTCOME)
    told = await _frames_until(second, 'data-testid="toast"')
    assert "already answered by alice in another tab" in told
    # The second tab answers anyway: it learns nothing new, so no second toast.
    await second.send_to(text_data=_answer(record, **{"answer-db-option": "db_opt2"}))
    reply = await _reply(second, OUTCOME)
    assert 'data-outcome="already_settled"' in reply
    assert 'data-testid="toast"' not in reply
    for communicator in (first, second):
        await communicator.disconnect()


async def test_an_answer_over_http_names_the_html_form_or_the_api():
    mine, _, cookie = await two_running_tasks()

    @database_sync_to_async
    def post(record, query):
        from django.test import Client

        from kandev_web.board.models import Workspace

        client = Client()
        client.force_login(Workspace.objects.get(boards__tasks=mine).members.get())
        return client.post(f"/clarifications/{record.pending_id}/respond/{query}", {"answer-db-option": "db_opt1"})

    record = await _ask(mine)
    watching = await _open(mine, cookie)
    assert (await post(record, "?via=form")).status_code == 204
    assert "answered by alice through the HTML form" in await _frames_until(watching, 'data-testid="toast"')
    assert (await _answerer(record))[1:] == ("form", "")
    await watching.disconnect()
