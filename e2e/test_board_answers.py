"""Answering from the board: a card waiting on an operator opens the answer panel in place.

The panel shows the task's questions and permission requests with the task
page's own overlay and card; an answer sent there goes out on the board's
socket, reaches the agent in its turn, and the panel says who answered, while
the task page open in another tab is told the answer came from the board.
"""

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, login, open_task, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def open_board(browser, server, username, board_id):
    page = browser.new_context().new_page()
    login(page, server, username, f"/boards/{board_id}/")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    return page


def test_a_question_is_answered_from_its_card_without_leaving_the_board(browser, server):
    ids = server.create_operator("board-ada", workspace="Ada's", tasks=True)
    task_id = ids["task_ids"][0]
    task = open_task(browser, server, "board-ada", task_id)
    board = open_board(browser, server, "board-ada", ids["board_id"])
    card = board.get_by_test_id(f"task-card-{task_id}")
    expect(card.get_by_test_id("task-answer")).to_have_count(0)

    start_scenario(task, "elicit-single")
    expect(card).to_have_attribute("data-pending-action", "clarification", timeout=AGENT_STARTS_MS)
    card.get_by_test_id("task-answer").click()
    panel = board.get_by_test_id("answer-panel")
    expect(panel).to_have_attribute("data-task-id", str(task_id))
    expect(panel).to_be_visible()
    overlay = panel.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation")

    overlay.locator("[data-testid=clarification-option][data-option-id=Blue]").click()
    overlay.get_by_test_id("clarification-submit").click()

    left = panel.locator("[data-testid=inbox-item][data-state=left]")
    expect(left).to_have_attribute("data-reason", "operator")
    expect(left.get_by_test_id("inbox-item-left")).to_contain_text("Answered by board-ada in this tab at ")
    expect(card).to_have_attribute("data-pending-action", "")
    assert board.url.endswith(f"/boards/{ids['board_id']}/"), "the operator never left the board"
    # The agent got Blue in its turn; the task page says where the answer came from.
    expect(task.locator("[data-testid=timeline-message][data-author=agent]").last).to_contain_text("Blue")
    expect(task.get_by_test_id("clarification-record-settlement")).to_contain_text("Answered by board-ada on the board")

    panel.get_by_test_id("answer-panel-close").click()
    expect(panel).to_be_hidden()


def test_a_permission_request_is_approved_from_its_card(browser, server):
    ids = server.create_operator("board-bo", workspace="Bo's", tasks=True)
    task_id = ids["task_ids"][0]
    task = open_task(browser, server, "board-bo", task_id)
    board = open_board(browser, server, "board-bo", ids["board_id"])
    card = board.get_by_test_id(f"task-card-{task_id}")
    start_scenario(task, "permission-flow")
    expect(card).to_have_attribute("data-pending-action", "permission", timeout=AGENT_STARTS_MS)

    card.get_by_test_id("task-answer").click()
    panel = board.get_by_test_id("answer-panel")
    panel.locator("[data-testid=permission-option][data-option-id=allow-once]").click()
    expect(panel.locator("[data-testid=inbox-item][data-state=left]")).to_have_attribute("data-reason", "selected")
    expect(task.get_by_test_id("permission-card")).to_have_attribute("data-status", "approved")
    expect(card).not_to_have_attribute("data-pending-action", "permission")
