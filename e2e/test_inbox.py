"""The inbox: everything waiting on an operator, answered in place, live in every open page.

One operator watches a task in one tab and the inbox in another. A question
asked there arrives in the inbox (and in every page's count and tab title),
is answered from the inbox, and leaves both the inbox and the task page,
each saying who answered it and where. The inbox answers by keyboard alone,
and approves permission requests with the task page's card.
"""

import re

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, login, open_task, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def open_inbox(browser, server, username):
    page = browser.new_context().new_page()
    login(page, server, username, "/inbox/")
    expect(page.get_by_test_id("inbox-live")).to_have_attribute("data-live", "connected")
    return page


def asked_on_two_tasks(browser, server, username, scenarios):
    """``username``'s first two tasks, each with its agent asking (``scenarios``, in order): their pages and ids."""
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    task_ids = ids["task_ids"][:2]
    pages = [open_task(browser, server, username, task_id) for task_id in task_ids]
    for page, scenario in zip(pages, scenarios, strict=True):
        start_scenario(page, scenario)
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    return pages, task_ids


def item(page, **data):
    selector = "".join(f'[data-{name.replace("_", "-")}="{value}"]' for name, value in data.items())
    return page.locator(f"[data-testid=inbox-item]{selector}")


def test_a_question_arrives_in_the_inbox_is_answered_there_and_leaves_every_page_with_the_reason(browser, server):
    ids = server.create_operator("inbox-ann", workspace="Ann's", tasks=True)
    task_id = ids["task_ids"][0]
    inbox = open_inbox(browser, server, "inbox-ann")
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    expect(inbox.get_by_test_id("inbox-count")).to_have_attribute("data-count", "0")
    task = open_task(browser, server, "inbox-ann", task_id)

    start_scenario(task, "elicit-single")
    waiting = item(inbox, kind="question", state="waiting")
    expect(waiting).to_have_count(1, timeout=AGENT_STARTS_MS)
    expect(inbox.get_by_test_id("inbox-empty")).to_be_hidden()
    expect(waiting.get_by_test_id("inbox-item-task")).to_have_attribute("href", f"/tasks/{task_id}/")
    expect(waiting.get_by_test_id("inbox-item-board")).to_have_text("Demo board")
    expect(waiting.get_by_test_id("inbox-item-agent")).not_to_be_empty()
    # Every page counts it, and says it in its tab's title.
    for page in (inbox, task):
        expect(page.get_by_test_id("inbox-count")).to_have_attribute("data-count", "1")
        expect(page).to_have_title(re.compile(r"^\(1\) "))
    expect(task.get_by_test_id("clarification-overlay")).to_be_visible()

    waiting.locator("[data-testid=clarification-option][data-option-id=Blue]").click()
    waiting.get_by_test_id("clarification-submit").click()

    left = item(inbox, state="left")
    expect(left).to_have_attribute("data-reason", "operator")
    expect(left.get_by_test_id("inbox-item-left")).to_contain_text("Answered by inbox-ann in this tab at ")
    # The task page's overlay goes, and it is told where the answer came from.
    expect(task.get_by_test_id("clarification-overlay")).to_have_count(0)
    notice = task.locator("[data-testid=toast][data-reason=operator]")
    expect(notice).to_contain_text("This question was already answered by inbox-ann in the inbox at ")
    expect(task.get_by_test_id("clarification-record-settlement")).to_contain_text("Answered by inbox-ann in the inbox")
    for page in (inbox, task):
        expect(page.get_by_test_id("inbox-count")).to_have_attribute("data-count", "0")
        expect(page).not_to_have_title(re.compile(r"^\(\d+\) "))
    # The agent got the answer in its turn.
    expect(task.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")

    left.get_by_test_id("inbox-item-dismiss").click()
    expect(item(inbox)).to_have_count(0)
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()


def test_an_inbox_opened_later_lists_what_waits_oldest_first_and_a_withdrawn_one_leaves_saying_so(browser, server):
    (first, _), task_ids = asked_on_two_tasks(browser, server, "inbox-bea", ["elicit-single", "clarification"])

    inbox = open_inbox(browser, server, "inbox-bea")
    items = item(inbox, state="waiting")
    expect(items).to_have_count(2)
    assert [items.nth(i).get_attribute("data-task-id") for i in range(2)] == [str(t) for t in task_ids]
    expect(inbox).to_have_title(re.compile(r"^\(2\) "))

    first.get_by_test_id("session-cancel").click()
    left = item(inbox, state="left", task_id=task_ids[0])
    expect(left).to_have_attribute("data-reason", "turn_cancelled")
    expect(left.get_by_test_id("inbox-item-left")).to_contain_text("Withdrawn: the turn was cancelled")
    expect(item(inbox, state="waiting")).to_have_count(1)
    expect(inbox.get_by_test_id("inbox-count")).to_have_attribute("data-count", "1")


def test_keyboard_only_j_and_k_move_digits_pick_enter_sends_and_o_opens_the_task(browser, server):
    (first, _), task_ids = asked_on_two_tasks(browser, server, "inbox-kim", ["elicit-single", "elicit-single"])
    inbox = open_inbox(browser, server, "inbox-kim")
    older, newer = (item(inbox, task_id=task_id) for task_id in task_ids)
    expect(item(inbox, state="waiting")).to_have_count(2)

    inbox.keyboard.press("j")
    expect(older).to_have_attribute("data-selected", "true")
    inbox.keyboard.press("j")
    expect(newer).to_have_attribute("data-selected", "true")
    expect(older).to_have_attribute("data-selected", "false")
    inbox.keyboard.press("k")
    expect(older).to_have_attribute("data-selected", "true")

    inbox.keyboard.press("2")  # the second option of the selected question
    picked = older.locator("[data-testid=clarification-option][data-selected=true]")
    expect(picked).to_have_count(1)
    option_id = picked.get_attribute("data-option-id")
    inbox.keyboard.press("Enter")
    expect(older).to_have_attribute("data-state", "left")
    expect(older.get_by_test_id("inbox-item-left")).to_contain_text("Answered by inbox-kim in this tab")
    # The agent got the option picked by its digit.
    record = first.locator("[data-testid=clarification-record][data-status=answered]")
    expect(record).to_have_count(1)
    expect(first.locator("[data-testid=timeline-message][data-author=agent]").last).to_contain_text(option_id)
    # The selection moved to what still waits.
    expect(newer).to_have_attribute("data-selected", "true")

    inbox.keyboard.press("o")
    inbox.wait_for_url(f"**/tasks/{task_ids[1]}/")
    expect(inbox.get_by_test_id("clarification-overlay")).to_be_visible()


def test_a_question_arriving_while_nothing_is_selected_leaves_the_first_j_to_the_operator(browser, server):
    """With the keyboard on the page itself, an arrival selects nothing: j then picks the oldest item."""
    older_id, newer_id = server.create_operator("inbox-joy", workspace="Joy's", tasks=True)["task_ids"][:2]
    older_task, newer_task = (open_task(browser, server, "inbox-joy", task_id) for task_id in (older_id, newer_id))
    start_scenario(older_task, "elicit-single")
    expect(older_task.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    inbox = open_inbox(browser, server, "inbox-joy")
    inbox.get_by_role("heading", name="Inbox").click()  # in no item: the keyboard is the page's
    assert inbox.evaluate("document.activeElement === document.body")

    start_scenario(newer_task, "elicit-single")
    expect(item(inbox, state="waiting")).to_have_count(2, timeout=AGENT_STARTS_MS)
    expect(item(inbox, selected="true")).to_have_count(0)
    inbox.keyboard.press("j")
    expect(item(inbox, task_id=older_id)).to_have_attribute("data-selected", "true")
    expect(item(inbox, task_id=newer_id)).to_have_attribute("data-selected", "false")


def test_a_permission_request_is_approved_from_the_inbox(browser, server):
    ids = server.create_operator("inbox-pat", workspace="Pat's", tasks=True)
    task = open_task(browser, server, "inbox-pat", ids["task_ids"][0])
    inbox = open_inbox(browser, server, "inbox-pat")
    start_scenario(task, "permission-flow")
    waiting = item(inbox, kind="permission", state="waiting")
    expect(waiting).to_have_count(1, timeout=AGENT_STARTS_MS)
    expect(waiting.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")

    waiting.locator("[data-testid=permission-option][data-option-id=allow-once]").click()
    left = item(inbox, kind="permission", state="left")
    expect(left).to_have_attribute("data-reason", "selected")
    expect(left.get_by_test_id("inbox-item-left")).to_contain_text("Answered:")
    expect(task.get_by_test_id("permission-card")).to_have_attribute("data-status", "approved")
    expect(inbox.get_by_test_id("inbox-count")).to_have_attribute("data-count", "0")
