"""Two Daphne processes on one PostgreSQL database and one Redis: either one serves the operator.

Alice's process starts the agent and so holds its stream; Bob is connected to
the other process, sees everything live, and can answer and cancel.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import login
from testing_support.processes import two_web_processes


@pytest.fixture(scope="module")
def servers(postgres_url, redis_url, tmp_path_factory):
    with two_web_processes(postgres_url, redis_url, tmp_path_factory.mktemp("two-web-processes")) as both:
        yield both


@pytest.fixture(scope="module")
def team(servers):
    a, _ = servers
    ids = a.create_operator("alice", workspace="Scale", staff=True, tasks=True)
    a.create_operator("bob", workspace="Scale")
    return ids


def open_task(browser, server, username, task_id):
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    return page


def test_permission_answered_through_the_other_process(browser, servers, team):
    a, b = servers
    task_id = team["task_ids"][0]
    alice, bob = open_task(browser, a, "alice", task_id), open_task(browser, b, "bob", task_id)
    alice.get_by_test_id("session-start-prompt").fill("/e2e:permission-flow")
    alice.get_by_test_id("session-start-submit").click()

    expect(bob.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")
    bob.locator("[data-testid=permission-option][data-option-id=reject-once]").click()
    for page in (alice, bob):
        expect(page.get_by_test_id("permission-outcome")).to_have_attribute("data-option-id", "reject-once")
        expect(page.locator("[data-testid=timeline-message][data-author=agent]").last).to_contain_text("reject-once")


def test_turn_cancelled_through_the_other_process(browser, servers, team):
    a, b = servers
    task_id = team["task_ids"][1]
    alice, bob = open_task(browser, a, "alice", task_id), open_task(browser, b, "bob", task_id)
    alice.get_by_test_id("session-start-prompt").fill("/e2e:long-stream")
    alice.get_by_test_id("session-start-submit").click()
    expect(bob.locator("[data-testid=timeline-message][data-type=message][data-author=agent]")).to_have_count(1)
    bob.get_by_test_id("session-cancel").click()
    for page in (alice, bob):
        expect(page.locator("[data-testid=timeline-message][data-type=status]")).to_contain_text("Turn cancelled")
        expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
