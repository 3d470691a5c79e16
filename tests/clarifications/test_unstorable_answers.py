"""An operator's answer, a skip reason and an agent's MCP question with a NUL or a lone surrogate are kept.

PostgreSQL refuses a NUL in ``text`` and ``jsonb`` and no database takes a
lone surrogate: before, a typed answer or a skip reason with a NUL was a 500
and an ``ask_user_question_kandev`` call with one a bare tool error with a
traceback. Each now goes through with U+FFFD in place of what cannot be
stored (``kandev_web/storable.py``), on SQLite and, in scripts/test's second
pass, on PostgreSQL.
"""

import asyncio
import json
from types import SimpleNamespace

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from kandev_web.asgi import application
from kandev_web.clarifications import elicitations, mcp, services
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.clarifications.templatetags.clarifications import answer_text
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions.mcp_tokens import new_token
from kandev_web.sessions.models import AgentExecution, TaskSession
from testing_support.questions import timeline_rows
from testing_support.runner import FakeRunner
from testing_support.sockets import HOST, Communicator

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

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
    "pending_id": "7d3c9a52-0000-4000-8000-0000000000a1",
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
def session(make_task, make_session, operator):
    return make_session(make_task("Pick"), acp_session_id="acp-1")


def ask(session) -> Clarification:
    record, _ = services.request_clarification(session, BUNDLE)
    return record


def test_a_typed_answer_with_a_nul_is_recorded_not_a_500(session, operator_client):
    record = ask(session)
    response = operator_client.post(
        f"/clarifications/{record.pending_id}/respond/", {"answer-db-custom": "MySQL\x00 8"}
    )
    assert response.status_code == 204
    record.refresh_from_db()
    assert record.status == Status.ANSWERED
    assert record.response["answers"] == [{"question_id": "db", "selected_options": [], "custom_text": "MySQL\ufffd 8"}]
    [row] = timeline_rows()
    assert answer_text(row) == "MySQL\ufffd 8"


def test_a_skip_reason_with_a_nul_is_recorded_not_a_500(session, operator_client):
    record = ask(session)
    skip = {"action": "skip", "reject_reason": "\x00no"}
    response = operator_client.post(f"/clarifications/{record.pending_id}/respond/", skip)
    assert response.status_code == 204
    record.refresh_from_db()
    assert (record.status, record.response["reject_reason"]) == (Status.REJECTED, "\ufffdno")


def test_a_question_id_with_a_nul_is_not_found_not_a_500(session, operator_client):
    ask(session)
    assert operator_client.post("/clarifications/%00/respond/", {"action": "skip"}).status_code == 404


@pytest.mark.asyncio
async def test_a_lone_surrogate_typed_on_the_task_page_is_recorded(session, operator):
    record = await database_sync_to_async(ask)(session)
    cookie_client = Client()
    await database_sync_to_async(cookie_client.force_login)(operator)
    cookie = (b"cookie", f"sessionid={cookie_client.cookies['sessionid'].value}".encode())
    communicator = Communicator(
        application, f"/ws/tasks/{session.task_id}/", headers=[(b"origin", b"http://127.0.0.1"), HOST, cookie]
    )
    assert (await communicator.connect())[0]
    frame = {
        "type": "clarification.answer",
        "pending_id": record.pending_id,
        "HEADERS": {},
        "answer-db-custom": "half \ud83d",
        "action": "submit",
    }
    await communicator.send_to(text_data=json.dumps(frame))  # ASCII: the surrogate as \ud83d
    while 'hx-swap-oob="beforeend:#answer-outcomes"' not in (text := (await communicator.receive_output(20))["text"]):
        pass
    assert 'data-outcome="delivered"' in text
    await communicator.disconnect()
    await database_sync_to_async(record.refresh_from_db)()
    assert record.response["answers"][0]["custom_text"] == "half \ufffd"


def test_an_elicitation_answer_reaches_the_agent_as_it_is_recorded(session, operator_client, monkeypatch):
    execution = AgentExecution.objects.create(session=session, url="ws://127.0.0.1:1/agent/stream", token="t")
    record = elicitations.record_requested(execution.pk, session.pk, ELICITATION)
    fake = FakeRunner({"success": True, "action": "accept", "content": {"question_0": "Teal\ufffd"}})
    monkeypatch.setattr(elicitations, "runner", fake)
    response = operator_client.post(
        f"/clarifications/{record.pending_id}/respond/", {"answer-question_0-custom": "Teal\x00"}
    )
    assert response.status_code == 204
    [(_, sent)] = fake.sent
    assert sent["answers"] == [{"question_id": "question_0", "selected_options": [], "custom_text": "Teal\ufffd"}]
    record.refresh_from_db()
    assert record.response["answers"] == sent["answers"]


@pytest.mark.asyncio
async def test_an_mcp_question_with_a_nul_and_a_lone_surrogate_is_asked_and_answered(session):
    token, digest = new_token()
    await database_sync_to_async(TaskSession.objects.filter(pk=session.pk).update)(mcp_token_hash=digest)

    async def no_progress(*args):
        pass

    ctx = SimpleNamespace(headers={"authorization": f"Bearer {token}"}, report_progress=no_progress)
    questions = [
        {
            "id": "db",
            "title": "DB\x00",
            "prompt": "Which \ud83d database?\x00",
            "options": [
                {"label": "Postgres\x00", "description": "rel\ud800"},
                {"label": "SQLite", "description": "embedded"},
            ],
        }
    ]
    asked = asyncio.create_task(mcp.ask_user_question_kandev(questions, ctx, context="From \x00 binary"))
    while not (record := await database_sync_to_async(Clarification.objects.first)()):
        assert not asked.done(), asked.result()  # a tool error would end the call here
        await asyncio.sleep(0.05)
    assert record.questions[0]["prompt"] == "Which \ufffd database?\ufffd"
    assert [o["label"] for o in record.questions[0]["options"]] == ["Postgres\ufffd", "SQLite"]
    assert record.context == "From \ufffd binary"
    option = record.questions[0]["options"][0]["id"]
    answer = [{"question_id": "db", "selected_options": [option], "custom_text": ""}]
    await database_sync_to_async(services.respond)(record.pending_id, answers=answer)
    assert await asyncio.wait_for(asked, 10) == {"db": {"selected_option": option}}
