"""Elicitations when the connection to the agent fails: AC-20a, reconciliation, agentctl killed (withdrawn)."""

import os
import signal

from playwright.sync_api import expect

from testing_support.browser import agent_said, agentctl_pid, fresh_task, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_AGENT_STREAM_PING_SECONDS": "0.3"}


def test_AC_20a_stream_down_answer_not_delivered_then_reconciled_and_answered(browser, server):
    page, ids = fresh_task(browser, server, "frozen")
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    panel = page.get_by_test_id("task-sessions")
    expect(panel).to_have_attribute("data-agent-stream", "up")
    pid = agentctl_pid(server, ids["task_ids"][0])

    os.kill(pid, signal.SIGSTOP)
    try:
        expect(panel).to_have_attribute("data-agent-stream", "down")
        expect(page.get_by_test_id("agent-stream-down")).to_be_visible()
        option(page, "Red").click()
        page.get_by_test_id("clarification-submit").click()
        expect(page.locator("[data-testid=toast][data-level=error]")).to_contain_text("Not delivered")
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "pending")
    finally:
        os.kill(pid, signal.SIGCONT)

    expect(panel).to_have_attribute("data-agent-stream", "up")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}


def test_a_question_whose_agentctl_was_killed_is_withdrawn_saying_it_can_no_longer_be_answered(browser, server):
    """agentctl died with its agent: nothing can settle the question, so it is withdrawn, never left to "try again"."""
    page, ids = fresh_task(browser, server, "killed")
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    os.kill(agentctl_pid(server, ids["task_ids"][0]), signal.SIGKILL)

    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    record = page.get_by_test_id("clarification-record")
    expect(record).to_have_attribute("data-status", "cancelled")
    settled = page.get_by_test_id("clarification-record-settlement")
    expect(settled).to_have_attribute("data-reason", "agentctl_gone")
    expect(settled).to_contain_text("Withdrawn: the agent stopped; this question can no longer be answered")
    page.reload()
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(settled).to_contain_text("this question can no longer be answered")
