"""Running the mock agent from a task: streaming, cancelling, permissions, crashes."""

import pytest
from playwright.sync_api import expect

from testing_support.browser import fresh_task, held_request, start_agent
from testing_support.browser import open_task as open_task_page


@pytest.fixture(scope="module")
def team(server):
    ids = server.create_operator("alice", workspace="Agents", staff=True, tasks=True)
    server.create_operator("bob", workspace="Agents")
    return ids


def open_task(browser, server, team, username, task_index=0):
    return open_task_page(browser, server, username, team["task_ids"][task_index])


def agent_messages(page):
    return page.locator("[data-testid=timeline-message][data-type=message][data-author=agent]")


def test_reply_streams_into_the_timeline_and_the_turn_finishes(browser, server, team):
    page = open_task(browser, server, team, "alice", 0)
    start_agent(page, "/e2e:simple-message")
    expect(page.locator("[data-testid=timeline-message][data-author=user]")).to_contain_text("/e2e:simple-message")
    expect(agent_messages(page)).to_have_count(1)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-turn-finished")).to_be_visible()
    expect(page.get_by_test_id("session-prompt-input")).to_be_visible()

    page.get_by_test_id("session-prompt-input").fill("Thanks! Anything else?")
    page.get_by_test_id("session-prompt-submit").click()
    expect(agent_messages(page)).to_have_count(2)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")


def test_a_follow_up_the_server_took_clears_the_composer(browser, server):
    page, _ = fresh_task(browser, server, "composer")
    start_agent(page, "/e2e:simple-message")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    prompt = page.get_by_test_id("session-prompt-input")
    prompt.fill("/e2e:long-stream")
    with page.expect_response(lambda response: "/prompt/" in response.url) as sent:
        page.get_by_test_id("session-prompt-submit").click()
    assert sent.value.status == 204
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-running")).to_be_visible()
    expect(prompt).to_have_value("")
    page.get_by_test_id("session-cancel").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")


def test_what_is_typed_while_a_follow_up_is_sent_stays_in_the_composer(browser, server):
    """Only the prompt the server took leaves the composer: the next one, begun meanwhile, stays."""
    page, _ = fresh_task(browser, server, "composer-typist")
    start_agent(page, "/e2e:simple-message")
    panel = page.get_by_test_id("task-sessions")
    expect(panel).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    prompt = page.get_by_test_id("session-prompt-input")
    prompt.fill("Thanks! Anything else?")
    with held_request(page, "**/prompt/"):
        page.get_by_test_id("session-prompt-submit").click()
        prompt.fill("And the tests?")
    expect(agent_messages(page)).to_have_count(2)
    expect(panel).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(prompt).to_have_value("And the tests?")


def test_cancel_a_long_turn(browser, server, team):
    page = open_task(browser, server, team, "alice", 1)
    start_agent(page, "/e2e:long-stream")
    expect(agent_messages(page)).to_have_count(1)
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-running")).to_be_visible()
    page.get_by_test_id("session-cancel").click()
    expect(page.locator("[data-testid=timeline-message][data-type=status]")).to_contain_text("Turn cancelled")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")


def test_approve_a_permission_in_one_tab_and_it_settles_in_the_other(browser, server, team):
    alice = open_task(browser, server, team, "alice", 2)
    bob = open_task(browser, server, team, "bob", 2)
    start_agent(alice, "/e2e:permission-flow")
    for page in (alice, bob):
        expect(page.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")
        expect(page.get_by_test_id("task-details").get_by_test_id("task-state-pending-permission")).to_be_visible()

    bob.locator("[data-testid=permission-option][data-option-id=allow-once]").click()
    for page in (alice, bob):
        expect(page.get_by_test_id("permission-card")).to_have_attribute("data-status", "approved")
        expect(page.get_by_test_id("permission-outcome")).to_have_attribute("data-option-id", "allow-once")
        expect(agent_messages(page).last).to_contain_text("allow-once")
    expect(alice.get_by_test_id("permission-option")).to_have_count(0)


def test_a_stopped_agent_can_be_started_again(browser, server):
    page = fresh_task(browser, server, "stopper")[0]
    start_agent(page, "/e2e:simple-message")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    page.get_by_test_id("session-stop").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "CANCELLED")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-agent-live", "false")
    start_agent(page, "/e2e:simple-message")
    expect(page.locator("[data-testid^=task-session-]")).to_have_count(2)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")


def test_a_crashing_agent_shows_a_failed_session(browser, server):
    page = fresh_task(browser, server, "crasher")[0]
    start_agent(page, "/e2e:crash")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error").first).to_contain_text("exited unexpectedly")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-interrupted")).to_be_visible()
    expect(page.get_by_test_id("session-start-form")).to_be_visible()


def test_tool_calls_and_plan_are_shown_with_their_status(browser, server):
    page = fresh_task(browser, server, "tooler")[0]
    start_agent(page, "/e2e:tool-calls")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    tools = page.get_by_test_id("tool-call")
    expect(tools).to_have_count(2)
    expect(tools.nth(0)).to_have_attribute("data-status", "completed")
    expect(tools.nth(1)).to_contain_text("42 passed")
    expect(page.get_by_test_id("agent-plan")).to_have_count(1)
    expect(page.get_by_test_id("plan-entry")).to_have_count(2)
    for entry in page.get_by_test_id("plan-entry").all():
        expect(entry).to_have_attribute("data-status", "completed")
