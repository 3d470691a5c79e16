"""One frozen agent holds nobody else: pages and live updates go on while an answer to it is outstanding.

The agent's controller is stopped (SIGSTOP) after it asked; the operator's
answer to it waits for a reply that never comes. Meanwhile another operator's
board loads and receives a live update, and the answering operator's own page
keeps receiving live updates too. The answer then ends as "not responding",
within the answer timeout, with the question still open.
"""

import os
import signal

from playwright.sync_api import expect

from testing_support.browser import agentctl_pid, login, open_task, option, watched_page
from testing_support.browser import start_scenario as start

#: Long enough for the board to load and update while the answer is outstanding,
#: on a loaded machine; the stream is pinged rarely so it is not dropped first.
SERVER_ENV = {
    "KANDEV_FEATURES_ACP_ELICITATION": "true",
    "KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS": "10",
    "KANDEV_AGENT_STREAM_PING_SECONDS": "60",
}


def test_a_frozen_agent_answer_holds_no_other_page_and_ends_as_not_responding(browser, server):
    ids = server.create_operator("asker", workspace="Frozen", tasks=True)
    server.create_operator("watcher", workspace="Frozen")
    task_id = ids["task_ids"][0]
    asker = open_task(browser, server, "asker", task_id)
    start(asker, "elicit-single")
    expect(asker.get_by_test_id("clarification-overlay")).to_be_visible()
    pid = agentctl_pid(server, task_id)

    os.kill(pid, signal.SIGSTOP)
    try:
        option(asker, "Red").click()
        asker.get_by_test_id("clarification-submit").click()
        form = asker.get_by_test_id("clarification-form")
        expect(form).to_have_attribute("data-sending", "true")

        # Another operator's board loads, and a change made now reaches it live.
        board = watched_page(browser, server, "watcher", f"/boards/{ids['board_id']}/", live="board-live")
        writer = browser.new_context().new_page()
        login(writer, server, "watcher", f"/boards/{ids['board_id']}/")
        writer.get_by_test_id("task-form-title").fill("Made while the agent is frozen")
        writer.get_by_test_id("task-create-submit").click()
        made = board.get_by_test_id("task-card-title").filter(has_text="Made while the agent is frozen")
        expect(made).to_be_visible()
        # The asker's own page is not held either: its task list hears of the new task.
        expect(asker.get_by_test_id("task-list").filter(has_text="Made while the agent is frozen")).to_be_visible()
        # All of that happened while the answer was still outstanding.
        expect(form).to_have_attribute("data-sending", "true")
        expect(asker.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "")

        expect(asker.get_by_test_id("clarification-outcome")).to_have_attribute(
            "data-outcome", "not_responding", timeout=20_000
        )
        expect(asker.locator("[data-testid=toast][data-level=error]")).to_contain_text("The agent is not responding")
        expect(asker.get_by_test_id("clarification-overlay")).to_be_visible()
        expect(asker.get_by_test_id("clarification-record")).to_have_attribute("data-status", "pending")
        expect(form).to_have_attribute("data-sending", "false")
    finally:
        os.kill(pid, signal.SIGCONT)


def test_an_open_page_loads_at_once_while_an_answer_waits_on_a_frozen_agent(browser, server):
    """The same with a fresh task page of the frozen task itself: it renders, its socket opens."""
    ids = server.create_operator("asker2", workspace="Frozen 2", tasks=True)
    task_id = ids["task_ids"][0]
    asker = open_task(browser, server, "asker2", task_id)
    start(asker, "elicit-single")
    expect(asker.get_by_test_id("clarification-overlay")).to_be_visible()
    pid = agentctl_pid(server, task_id)
    os.kill(pid, signal.SIGSTOP)
    try:
        asker.get_by_test_id("clarification-submit").click()
        asker.get_by_test_id("clarification-confirm-send").click()  # nothing answered: asked once
        expect(asker.get_by_test_id("clarification-form")).to_have_attribute("data-sending", "true")
        second = open_task(browser, server, "asker2", task_id)
        expect(second.get_by_test_id("clarification-overlay")).to_be_visible()
        expect(asker.get_by_test_id("clarification-outcome")).to_have_attribute("data-outcome", "")
        expect(asker.get_by_test_id("clarification-outcome")).to_have_attribute(
            "data-outcome", "not_responding", timeout=20_000
        )
    finally:
        os.kill(pid, signal.SIGCONT)
