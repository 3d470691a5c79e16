"""AC-64: an unanswered elicitation is declined at the answer deadline, and the overlay says so."""

from playwright.sync_api import expect

from testing_support.browser import agent_said, fresh_task
from testing_support.browser import start_scenario as start

SERVER_ENV = {
    "KANDEV_FEATURES_ACP_ELICITATION": "true",
    "KANDEV_ELICITATION_ANSWER_TIMEOUT": "2s",
    "KANDEV_ACP_IDLE_TIMEOUT": "1h",
}


def test_AC_64_answer_timeout_declines_and_withdraws_the_overlay(browser, server):
    page, _ = fresh_task(browser, server, "sleepy")
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    expect(page.locator("[data-testid=toast][data-reason=answer_timeout]")).to_contain_text("Timed out", timeout=15_000)
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    assert agent_said(page, "Answer:") == {"action": "decline"}
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "expired")
