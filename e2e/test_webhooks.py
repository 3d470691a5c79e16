"""A staff operator adds a webhook, copies its secret (shown once), sends a test event and sees it delivered.

The receiver is a local HTTP server that verifies each POST's signature with
the secret the page showed; the web server's own sender delivers it, off the
request, and the page's delivery log shows the delivery it made.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from standardwebhooks import Webhook as StandardWebhook

from testing_support.browser import login, start_scenario
from testing_support.fakes import Receiver

pytestmark = pytest.mark.e2e

#: The log re-reads itself every 2 s; the sender is woken at once.
DELIVERED_MS = 15_000


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


def test_a_webhook_is_added_its_secret_shown_once_and_a_test_event_delivered(browser, server, receiver):
    ids = server.create_operator("hooks", workspace="Hooks", staff=True)
    page = browser.new_context().new_page()
    login(page, server, "hooks", f"/boards/{ids['board_id']}/")
    page.get_by_test_id("board-webhooks").click()
    expect(page.get_by_test_id("webhook-list-empty")).to_be_visible()

    page.get_by_test_id("webhook-field-name").get_by_role("textbox").fill("Team chat")
    page.get_by_test_id("webhook-field-url").get_by_role("textbox").fill(receiver.url)
    page.get_by_test_id("webhook-event-turn.finished").get_by_role("checkbox").check()
    page.get_by_test_id("webhook-save").click()

    secret = page.get_by_test_id("webhook-secret").inner_text().strip()
    assert secret.startswith("whsec_")
    card = page.get_by_test_id("webhook-card")
    expect(card).to_have_attribute("data-active", "true")
    expect(card.get_by_test_id("webhook-log-empty")).to_be_visible()

    page.reload()
    expect(page.get_by_test_id("webhook-card")).to_have_count(1)
    expect(page.get_by_test_id("webhook-secret")).to_have_count(0)
    assert secret not in page.content()

    page.get_by_test_id("webhook-test").click()
    row = page.get_by_test_id("webhook-delivery")
    expect(row).to_have_attribute("data-state", "delivered", timeout=DELIVERED_MS)
    expect(row).to_have_attribute("data-event", "webhook.test")
    expect(row).to_have_attribute("data-attempts", "1")
    expect(row).to_have_attribute("data-last-status", "200")

    (received,) = receiver.received
    assert StandardWebhook(secret).verify(received.body, received.headers) == received.payload
    assert received.payload["event"] == "webhook.test"
    assert received.payload["workspace"] == {"id": ids["workspace_id"], "name": "Hooks"}
    expect(row).to_have_attribute("data-delivery", received.headers["webhook-id"])


def test_an_agents_question_answered_and_its_finished_turn_reach_the_receiver(browser, server, receiver):
    ids = server.create_operator("hooked", workspace="Hooked", staff=True, tasks=True)
    page = browser.new_context().new_page()
    login(page, server, "hooked", f"/settings/workspaces/{ids['workspace_id']}/webhooks/")
    page.get_by_test_id("webhook-field-name").get_by_role("textbox").fill("Everything")
    page.get_by_test_id("webhook-field-url").get_by_role("textbox").fill(receiver.url)
    for event in ("question.answered", "question.withdrawn", "turn.finished"):
        page.get_by_test_id(f"webhook-event-{event}").get_by_role("checkbox").check()
    page.get_by_test_id("webhook-save").click()
    secret = page.get_by_test_id("webhook-secret").inner_text().strip()

    task_id = ids["task_ids"][0]
    page.goto(f"{server.url}/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_scenario(page, "clarification")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible(timeout=30_000)
    page.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=30_000)

    page.goto(f"{server.url}/settings/workspaces/{ids['workspace_id']}/webhooks/")
    rows = page.get_by_test_id("webhook-delivery")
    expect(rows).to_have_count(3, timeout=DELIVERED_MS)
    for index in range(3):
        expect(rows.nth(index)).to_have_attribute("data-state", "delivered", timeout=DELIVERED_MS)

    payloads = receiver.verified(secret)
    assert [p["event"] for p in payloads] == ["question.asked", "question.answered", "turn.finished"]
    assert {p["task"]["id"] for p in payloads} == {task_id}
    assert payloads[1]["question"]["status"] == "answered"
    for item in receiver.received:
        assert b"Which database" not in item.body
        assert b"SQLite" not in item.body
