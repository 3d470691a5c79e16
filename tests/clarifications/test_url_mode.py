"""URL-mode elicitations in the web app: the card every surface shows, the refusal sentence, "Sign-in finished"."""

import json

import pytest
from django.template.loader import render_to_string
from django.test import Client

from kandev_web.clarifications import actions, elicitations, overlay, url_mode
from kandev_web.clarifications.models import Clarification, Mode, Status
from kandev_web.clarifications.settlement import describe, ending_of_record
from kandev_web.sessions.models import Message, MessageType
from testing_support.questions import timeline_row
from testing_support.runner import FakeRunner

PENDING_ID = "5b0e2d9c-0000-4000-8000-0000000000a1"
URL_REQUESTED = {
    "pending_id": PENDING_ID,
    "session_id": "acp-1",
    "tool_call_id": None,
    "message": "Please authorize keysrv in your browser.",
    "mode": "url",
    "url": "https://auth.example.test/authorize?x=1&next=<b>hi</b>",
    "elicitation_id": "ae031ec0-7b43-45d2-8014-1cf25fe63d73",
    "created_at": "2026-12-03T10:00:00.000Z",
    "expires_at": "2026-12-03T11:00:00.000Z",
    "questions": [],
}


@pytest.fixture
def execution(make_task, make_session, make_execution, operator):
    return make_execution(make_session(make_task("Paint"), acp_session_id="acp-1"))


def _asked(execution, **changes) -> Clarification:
    record = elicitations.record_requested(execution.pk, execution.session_id, {**URL_REQUESTED, **changes})
    assert record is not None
    return record


def _card(record: Clarification) -> str:
    return render_to_string(
        "clarifications/overlay.html#overlay", {"clarifications": overlay.pending_for_task(record.session.task_id)}
    )


def test_a_url_request_is_a_question_of_its_own_kind(execution):
    record = _asked(execution)
    assert (record.mode, record.url, record.elicitation_id) == (
        Mode.URL,
        URL_REQUESTED["url"],
        URL_REQUESTED["elicitation_id"],
    )
    row = timeline_row("url")
    assert row.question["kind"] == "url"
    # The timeline (and with it the inbox list, notifications, webhooks) says the agent's message, not the address.
    (message,) = Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST)
    assert message.content == "Please authorize keysrv in your browser."
    assert "auth.example.test" not in message.content


def test_the_card_emphasises_the_host_escapes_the_address_and_opens_it_only_on_a_click(execution):
    html = _card(_asked(execution))
    assert 'data-mode="url"' in html
    assert (
        '<strong class="clarification-url-host" data-testid="clarification-url-host">auth.example.test</strong>' in html
    )
    assert "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "<b>hi</b>" not in html
    link = html[html.index('<a class="button clarification-url-open"') :].split(">")[0]
    assert 'target="_blank"' in link
    assert 'rel="noopener noreferrer"' in link
    assert 'href="https://auth.example.test/authorize?x=1&amp;next=&lt;b&gt;hi&lt;/b&gt;"' in link
    assert 'data-testid="clarification-url-continue"' in html
    assert 'data-testid="clarification-url-decline"' in html
    assert 'data-confirm-empty="false"' in html
    assert "<script" not in html.lower()


@pytest.mark.parametrize("url", ["javascript:alert(1)", "http://example.com/", "data:text/html,hi"])
def test_an_address_that_slipped_through_gets_no_link(execution, url):
    html = _card(_asked(execution, url=url))
    assert 'data-testid="clarification-url-open"' not in html
    assert 'data-openable="false"' in html
    assert f'href="{url}"' not in html


def test_a_refused_address_is_said_in_the_timeline_with_its_reason(execution):
    elicitations.record_declined(
        execution.session_id, {"session_id": "acp-1", "reason": "url_refused", "problem": "not_https"}
    )
    (notice,) = Message.objects.filter(type=MessageType.STATUS, metadata__notice="url_refused")
    assert notice.content == "The agent asked you to open a page, and kandev declined it: it was not an https address."
    assert not Clarification.objects.exists()


def _settle(record, outcome, reason):
    actions.do_settle_elicitation(
        {"pending_id": record.pending_id, "session_id": "acp-1", "outcome": outcome, "reason": reason, "content": {}}
    )
    record.refresh_from_db()


def test_accepted_then_completed_reads_sign_in_finished(execution):
    record = _asked(execution)
    _settle(record, "accepted", "operator")
    assert record.status == Status.ANSWERED
    url_mode.record_completed({"pending_id": PENDING_ID, "elicitation_id": "x", "session_id": "acp-1"})
    record.refresh_from_db()
    assert record.completed_at is not None
    assert describe(ending_of_record(record)).sentence == "Sign-in finished"


def test_completed_before_an_answer_is_withdrawn_as_sign_in_finished(execution):
    record = _asked(execution)
    _settle(record, "cancelled", "agent_completed")
    assert record.status == Status.CANCELLED
    assert describe(ending_of_record(record)).sentence == "Sign-in finished"
    assert overlay.pending_for_task(record.session.task_id) == []


def test_unknown_or_finished_completions_are_ignored(execution):
    record = _asked(execution)
    url_mode.record_completed({"pending_id": "not-ours"})
    url_mode.record_completed({"pending_id": PENDING_ID})  # still open: agentctl settles it first, so nothing here
    record.refresh_from_db()
    assert (record.status, record.completed_at) == (Status.PENDING, None)
    _settle(record, "declined", "operator_skipped")
    url_mode.record_completed({"pending_id": PENDING_ID})
    record.refresh_from_db()
    assert describe(ending_of_record(record)).sentence.startswith("Skipped")


def test_the_task_page_shows_the_card(execution, operator):
    record = _asked(execution)
    client = Client()
    client.force_login(operator)
    page = client.get(f"/tasks/{record.session.task_id}/").text
    assert 'data-testid="clarification-url-open"' in page


def test_webhooks_say_it_is_a_page_to_open_and_never_its_address(execution, django_capture_on_commit_callbacks):
    from kandev_web.webhooks import signing
    from kandev_web.webhooks.models import Webhook, WebhookDelivery

    hook = Webhook(
        workspace=execution.session.task.board.workspace,
        name="Chat",
        url="https://hooks.example/",
        events=["question.asked"],
    )
    hook.set_signing_secret(signing.new_secret())
    hook.save()
    with django_capture_on_commit_callbacks():
        record = _asked(execution)
    (delivery,) = WebhookDelivery.objects.all()
    payload = json.loads(delivery.body)
    assert payload["question"] == {"id": record.pending_id, "source": "elicitation", "status": "pending", "mode": "url"}
    assert "auth.example.test" not in delivery.body
    assert "keysrv" not in delivery.body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("action", "status", "rejected"), [("submit", Status.ANSWERED, False), ("skip", Status.REJECTED, True)]
)
def test_the_form_without_javascript_consents_or_declines(execution, operator, monkeypatch, action, status, rejected):
    record = _asked(execution)
    fake = FakeRunner({"success": True, "action": "decline" if rejected else "accept"})
    monkeypatch.setattr(elicitations, "runner", fake)
    client = Client()
    client.force_login(operator)
    client.post(f"/clarifications/{record.pending_id}/respond/?via=form", {"action": action, "reject_reason": ""})
    [(sent_action, sent)] = fake.sent
    assert sent_action == "agent.elicitations.respond"
    assert (sent["pending_id"], sent["rejected"], sent["answers"]) == (record.pending_id, rejected, [])
    record.refresh_from_db()
    assert record.status == status
