"""What an operator types into the Start-agent form survives the page's live updates."""

from playwright.sync_api import expect

from .conftest import open_task, watched_page


def test_a_typed_prompt_and_chosen_agent_survive_a_teammates_move(browser, server):
    ids = server.create_operator("typist", workspace="Typing", tasks=True)
    task_id = ids["task_ids"][0]
    page = open_task(browser, server, "typist", task_id)
    page.get_by_test_id("session-start-prompt").fill("Only the parser, please")
    step_before = page.get_by_test_id("task-step").inner_text()

    board = watched_page(browser, server, "typist", f"/boards/{ids['board_id']}/", live="board-live")
    board.get_by_test_id(f"task-card-{task_id}").get_by_test_id("task-move-right").click()

    # The move reached the page (its details were re-rendered live) ...
    expect(page.get_by_test_id("task-step")).not_to_have_text(step_before)
    # ... and the operator's text is still there.
    expect(page.get_by_test_id("session-start-prompt")).to_have_value("Only the parser, please")
