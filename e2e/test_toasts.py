"""Toasts: beside the work, never on it; closable, few, merged; no news the page already shows."""

import json
import re

import pytest
from playwright.sync_api import expect

from testing_support.browser import login, start_scenario
from testing_support.layout import DESKTOP, PHONE, assert_reachable, assert_uncovered_by_toasts

QUESTION = "[data-testid=toast][data-event='session.clarification_requested']"


def task_page(browser, server, username: str, task_id: int, viewport=DESKTOP):
    page = browser.new_context(viewport=viewport).new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    return page


def ask_elsewhere(page, task_id: int) -> None:
    """Another of the operator's tasks gets a question (from ``page``, another window)."""
    page.goto(page.url.split("/tasks/")[0] + f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_scenario(page, "clarification")
    # Starting an agent is the slow part (a process, a session, its first turn) on a busy machine.
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible(timeout=30_000)


def blank_start(page) -> None:
    """Start agent with a prompt of spaces only: refused with a toast."""
    page.get_by_test_id("session-start-prompt").fill("   ")
    page.get_by_test_id("session-start-submit").click()


def tool_result(page) -> dict:
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Tool result:")
    expect(message).to_have_count(1)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    return json.loads(re.sub(r"^.*?Tool result:\s*", "", message.inner_text(), flags=re.S))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_toasts_never_cover_start_send_or_skip_nor_take_their_clicks(browser, server, viewport):
    username = f"covered-{viewport['width']}"
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    mine, first_other, second_other = ids["task_ids"]
    page = task_page(browser, server, username, mine, viewport)
    elsewhere = task_page(browser, server, username, first_other)
    ask_elsewhere(elsewhere, first_other)
    expect(page.locator(QUESTION)).to_have_count(1)

    # Start agent, with the toast on screen, at the top of the page and at its end.
    start = page.get_by_test_id("session-start-submit")
    controls = page.locator("[data-testid=composer], [data-testid=task-sessions] .session-actions")
    assert_uncovered_by_toasts(page, controls)
    assert_reachable(page, start)
    page.get_by_test_id("session-start-prompt").fill("/e2e:simple-message")
    start.click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")

    # Send.
    send = page.get_by_test_id("session-prompt-submit")
    expect(send).to_be_enabled()
    expect(page.locator(QUESTION)).to_have_count(1)
    assert_uncovered_by_toasts(page, controls)
    assert_reachable(page, send)
    page.get_by_test_id("session-prompt-input").fill("/e2e:clarification")
    send.click()
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible()

    # Skip, with a second task's question on screen (and none for the question the page shows).
    ask_elsewhere(elsewhere, second_other)
    expect(page.locator(QUESTION)).to_have_count(2)
    expect(page.locator(f"{QUESTION}[data-task-id='{mine}']")).to_have_count(0)
    assert_uncovered_by_toasts(page, overlay, controls)
    skip = page.get_by_test_id("clarification-skip")
    for control in (skip, *page.get_by_test_id("clarification-option").all()):
        assert_reachable(page, control)
    skip.click()
    assert tool_result(page)["rejected"] is True
    expect(page.locator(QUESTION)).to_have_count(2)


def test_five_identical_toasts_merge_into_one_that_says_how_many(browser, server):
    ids = server.create_operator("merged", workspace="Merged", tasks=True)
    page = task_page(browser, server, "merged", ids["task_ids"][0])
    toast = page.get_by_test_id("toast")
    blank_start(page)
    expect(toast).to_contain_text("Write a prompt first.")
    expect(page.get_by_test_id("toast-count")).to_be_hidden()
    for count in range(2, 6):
        blank_start(page)
        expect(toast).to_have_attribute("data-count", str(count))
    expect(toast).to_have_count(1)
    expect(page.get_by_test_id("toast-count")).to_be_visible()
    expect(page.get_by_test_id("toast-count")).to_contain_text("\u00d75")


def test_a_toast_closes_with_its_button(browser, server):
    ids = server.create_operator("closer", workspace="Closer", tasks=True)
    page = task_page(browser, server, "closer", ids["task_ids"][0])
    blank_start(page)
    toast = page.get_by_test_id("toast")
    expect(toast).to_be_visible()
    close = toast.get_by_test_id("toast-dismiss")
    expect(close).to_have_accessible_name("Dismiss")
    close.click()
    expect(toast).to_have_count(0)


def test_at_most_three_toasts_the_oldest_gives_way(browser, server):
    ids = server.create_operator("crowded", workspace="Crowded", tasks=True)
    more = server.create_operator("crowded", workspace="Crowded too", tasks=True)
    watched = ids["task_ids"][0]
    askers = [*ids["task_ids"][1:], *more["task_ids"][:2]]
    page = task_page(browser, server, "crowded", watched)
    elsewhere = task_page(browser, server, "crowded", askers[0])
    for task_id in askers:
        ask_elsewhere(elsewhere, task_id)
        expect(page.locator(f"{QUESTION}[data-task-id='{task_id}']")).to_have_count(1)
    toasts = page.get_by_test_id("toast")
    expect(toasts).to_have_count(3)
    expect(page.locator(f"{QUESTION}[data-task-id='{askers[0]}']")).to_have_count(0)
    toasts.first.get_by_test_id("toast-dismiss").click()
    expect(toasts).to_have_count(2)
