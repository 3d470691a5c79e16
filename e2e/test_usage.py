"""What an agent spends, live: its usage_update reports on the session row, the task, the card, the inbox and /usage/.

The mock agent's ``spend`` scenario reports 12k of a 200k context and
0.25 USD, then 36k and 0.75 USD in all.
"""

import re

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, login, open_task, start_scenario


def test_a_budget_crossed_warns_live_on_the_task_the_card_and_the_inbox_while_the_agent_goes_on(browser, server):
    ids = server.create_operator("spender", workspace="Spender's", tasks=True)
    task_id = ids["task_ids"][0]
    task = open_task(browser, server, "spender", task_id)
    board = browser.new_context().new_page()
    login(board, server, "spender", f"/boards/{ids['board_id']}/")
    expect(board.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    inbox = browser.new_context().new_page()
    login(inbox, server, "spender", "/inbox/")
    expect(inbox.get_by_test_id("inbox-live")).to_have_attribute("data-live", "connected")

    task.get_by_test_id("task-budget-input").fill("0.50")
    task.get_by_test_id("task-budget-save").click()
    expect(task.get_by_test_id("task-budget-input")).to_have_attribute("data-budget", "0.50")
    expect(task.get_by_test_id("task-spent")).to_have_attribute("data-amount", "")

    start_scenario(task, "spend")
    usage = task.get_by_test_id("session-usage")
    expect(usage).to_have_attribute("data-cost", "0.75", timeout=AGENT_STARTS_MS)
    expect(usage).to_have_attribute("data-context-used", "36000")
    expect(usage).to_contain_text("36k of 200k tokens")
    expect(usage).to_contain_text("0.75 USD")
    expect(task.get_by_test_id("task-spent")).to_have_attribute("data-over-budget", "true")
    expect(task.get_by_test_id("task-over-budget")).to_contain_text("spent 0.75 USD of a 0.50 budget")
    expect(task.locator("[data-testid=timeline-message][data-author=agent]").last).to_contain_text("Done.")

    card_cost = board.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-card-cost")
    expect(card_cost).to_have_attribute("data-over-budget", "true")
    expect(card_cost).to_contain_text("0.75 USD")
    expect(card_cost).to_contain_text("36k tokens")
    expect(card_cost).to_contain_text("over budget")
    flagged = inbox.locator(f"[data-testid=inbox-over-budget-task][data-task-id='{task_id}']")
    expect(flagged).to_contain_text("spent 0.75 USD of 0.50")

    # A larger budget takes the warning away everywhere.
    task.get_by_test_id("task-budget-input").fill("5")
    task.get_by_test_id("task-budget-save").click()
    expect(task.get_by_test_id("task-over-budget")).to_have_count(0)
    expect(card_cost).to_have_attribute("data-over-budget", "false")
    expect(inbox.get_by_test_id("inbox-over-budget")).to_have_attribute("data-count", "0")

    page = browser.new_context().new_page()
    login(page, server, "spender", "/usage/")
    row = page.locator(f"[data-testid=usage-board][data-board-id='{ids['board_id']}']")
    expect(row).to_have_attribute("data-total", "0.75")
    expect(page.locator("[data-testid=usage-day]").first).to_have_attribute("data-total", re.compile(r"^0\.75 USD$"))
