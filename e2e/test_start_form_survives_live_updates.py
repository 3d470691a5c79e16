"""What an operator types into the task page's composer survives the page's live updates.

The composer is re-rendered live whenever the task changes: a teammate's edit
or move from the board, the agent's turn moving the task to Review. The
Start-agent form (prompt and agent) and the follow-up box keep what the
operator typed through all of them.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import open_task, start_scenario, watched_page


@pytest.fixture(scope="module")
def team(server):
    ids = server.create_operator("typist", workspace="Typing", tasks=True)
    server.create_operator("teammate", workspace="Typing")
    return ids


def test_a_typed_prompt_and_chosen_agent_survive_a_teammates_move(browser, server, team):
    task_id = team["task_ids"][0]
    page = open_task(browser, server, "typist", task_id)
    page.get_by_test_id("session-start-prompt").fill("Only the parser, please")
    step_before = page.get_by_test_id("task-step").inner_text()

    board = watched_page(browser, server, "typist", f"/boards/{team['board_id']}/", live="board-live")
    board.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-move-right").click()

    # The move reached the page (its details were re-rendered live) ...
    expect(page.get_by_test_id("task-step")).not_to_have_text(step_before)
    # ... and the operator's text is still there.
    expect(page.get_by_test_id("session-start-prompt")).to_have_value("Only the parser, please")


def test_a_typed_prompt_survives_another_operators_edit_then_move(browser, server, team):
    task_id = team["task_ids"][1]
    page = open_task(browser, server, "typist", task_id)
    prompt = page.get_by_test_id("session-start-prompt")
    prompt.fill("Fix the redirect, keep the tests")
    profile = page.get_by_test_id("session-start-profile")
    chosen = profile.input_value()

    # Another operator, in a browser of their own, edits the task: title and the description the prompt defaults to.
    board = watched_page(browser, server, "teammate", f"/boards/{team['board_id']}/", live="board-live")
    card = board.get_by_test_id(f"task-card-{task_id}")
    card.get_by_test_id("task-edit").click()
    board.get_by_test_id("task-edit-title").fill("Fix the login redirect for good")
    board.get_by_test_id("task-edit-description").fill("Their new description")
    board.get_by_test_id("task-edit-save").click()
    expect(page.get_by_test_id("task-title")).to_have_text("Fix the login redirect for good")
    expect(page.get_by_test_id("task-description")).to_contain_text("Their new description")
    expect(prompt).to_have_value("Fix the redirect, keep the tests")

    step_before = page.get_by_test_id("task-step").inner_text()
    board.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-move-right").click()
    expect(page.get_by_test_id("task-step")).not_to_have_text(step_before)
    expect(prompt).to_have_value("Fix the redirect, keep the tests")
    expect(profile).to_have_value(chosen)


def test_a_typed_follow_up_survives_the_agent_moving_the_task(browser, server, team):
    task_id = team["task_ids"][2]
    page = open_task(browser, server, "typist", task_id)
    start_scenario(page, "long-stream")
    follow_up = page.get_by_test_id("session-prompt-input")
    follow_up.fill("Next, the release notes")
    expect(page.get_by_test_id("task-step")).to_have_text("In Progress")
    # The turn ends: the agent's workflow moves the task to Review and re-renders the composer.
    page.get_by_test_id("session-cancel").click()
    expect(page.get_by_test_id("task-step")).to_have_text("Review")
    expect(page.get_by_test_id("session-prompt-submit")).to_be_enabled()
    expect(follow_up).to_have_value("Next, the release notes")


def test_a_budget_being_typed_keeps_its_text_and_focus_through_a_teammates_edit_and_set_saves_it(browser, server, team):
    task_id = team["task_ids"][0]
    page = open_task(browser, server, "typist", task_id)
    budget = page.get_by_test_id("task-budget-input")
    budget.fill("0.50")
    page.get_by_test_id("task-budget-save").click()
    expect(budget).to_have_attribute("data-budget", "0.50")
    budget.fill("5")

    # The details, budget field and all, are re-rendered live from what is saved ...
    board = watched_page(browser, server, "teammate", f"/boards/{team['board_id']}/", live="board-live")
    board.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-edit").click()
    board.get_by_test_id("task-edit-title").fill("Cap what the agents spend")
    board.get_by_test_id("task-edit-save").click()
    expect(page.get_by_test_id("task-title")).to_have_text("Cap what the agents spend")
    # ... but the operator's draft, and their place in it, are still theirs ...
    expect(budget).to_have_attribute("data-budget", "0.50")
    expect(budget).to_have_value("5")
    expect(budget).to_be_focused()
    # ... and Set saves the draft, not the value the swap brought.
    page.keyboard.press("Enter")
    expect(budget).to_have_attribute("data-budget", "5.00")
