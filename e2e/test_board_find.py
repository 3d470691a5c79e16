"""Finding a task on a busy board: search, filter chips in the URL, live updates that respect them, and keys.

The demo's three tasks are "Add a health-check endpoint", "Fix flaky login
redirect" and "Write the release notes".
"""

import re

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, login, open_task, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def open_board(browser, server, username, board_id, query="", **context):
    page = browser.new_context(**context).new_page()
    login(page, server, username, f"/boards/{board_id}/{query}")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    return page


def shown_titles(page):
    return page.locator("#kanban [data-testid=task-card-title]")


def test_a_search_and_a_chip_narrow_the_board_and_its_url_shares_them_with_live_updates_kept(browser, server):
    ids = server.create_operator("finder", workspace="Finder's", tasks=True)
    board = open_board(browser, server, "finder", ids["board_id"])
    expect(shown_titles(board)).to_have_count(3)

    board.get_by_test_id("board-search").fill("LOGIN")
    board.get_by_test_id("board-search").press("Enter")
    expect(board.get_by_test_id("board-find")).to_have_attribute("data-filtered", "true")
    expect(shown_titles(board)).to_have_text(["Fix flaky login redirect"])
    assert re.search(r"\?q=LOGIN$", board.url)
    expect(board.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")

    # The URL is the filter: a colleague opening it sees the same board, and it stays live for both.
    shared = open_board(browser, server, "finder", ids["board_id"], "?q=LOGIN")
    expect(shown_titles(shared)).to_have_text(["Fix flaky login redirect"])
    unfiltered = open_board(browser, server, "finder", ids["board_id"])
    unfiltered.get_by_test_id("task-create-form").get_by_role("textbox").first.fill("Login page copy")
    unfiltered.get_by_test_id("task-create-submit").click()
    for page in (board, shared):
        expect(shown_titles(page)).to_have_text(["Fix flaky login redirect", "Login page copy"])
    unfiltered.get_by_test_id("task-create-form").get_by_role("textbox").first.fill("Unrelated chore")
    unfiltered.get_by_test_id("task-create-submit").click()
    expect(shown_titles(unfiltered)).to_have_count(5)

    # A card edited so that it no longer matches leaves the filtered boards.
    copy = card_titled(unfiltered, "Login page copy")
    copy.get_by_test_id("task-edit").click()
    form = unfiltered.get_by_test_id("task-edit-form")
    form.get_by_role("textbox").first.fill("Signup page copy")
    form.get_by_test_id("task-edit-save").click()
    for page in (board, shared):
        expect(shown_titles(page)).to_have_text(["Fix flaky login redirect"])
        column = page.locator("[data-testid=kanban-column-head]").first
        expect(column).to_have_attribute("data-count", "1")

    # A state chip adds to the search; "Show all" takes every filter away.
    board.locator("[data-testid=board-filter-state][data-value=waiting]").click()
    expect(board.locator("[data-testid=board-filter-state][data-value=waiting]")).to_have_attribute("data-on", "true")
    assert "state=waiting" in board.url
    assert "q=LOGIN" in board.url
    expect(shown_titles(board)).to_have_count(0)
    board.get_by_test_id("board-filter-clear").click()
    expect(board.get_by_test_id("board-find")).to_have_attribute("data-filtered", "false")
    expect(shown_titles(board)).to_have_count(5)


def card_titled(page, title):
    return page.locator("#kanban .card").filter(has=page.get_by_text(title, exact=True))


def test_the_waiting_chip_shows_a_card_while_its_agent_asks_and_lets_it_go_once_answered(browser, server):
    ids = server.create_operator("chipper", workspace="Chipper's", tasks=True)
    task_id = ids["task_ids"][0]
    board = open_board(browser, server, "chipper", ids["board_id"], "?state=waiting")
    expect(shown_titles(board)).to_have_count(0)
    task = open_task(browser, server, "chipper", task_id)
    start_scenario(task, "elicit-single")

    card = board.get_by_test_id(f"task-card-{task_id}")
    expect(card).to_have_attribute("data-pending-action", "clarification", timeout=AGENT_STARTS_MS)
    overlay = task.get_by_test_id("clarification-overlay")
    overlay.locator("[data-testid=clarification-option][data-option-id=Blue]").click()
    overlay.get_by_test_id("clarification-submit").click()
    expect(card).to_have_count(0)
    expect(shown_titles(board)).to_have_count(0)


def test_the_running_failed_and_profile_chips_follow_the_agents_live(browser, server):
    ids = server.create_operator("states", workspace="States'", tasks=True)
    working, crashing, untouched = ids["task_ids"]
    running = open_board(browser, server, "states", ids["board_id"], "?state=running")
    failed = open_board(browser, server, "states", ids["board_id"], "?state=failed")
    expect(shown_titles(running)).to_have_count(0)
    expect(shown_titles(failed)).to_have_count(0)

    # A card comes to "Running" while its agent works, and leaves once its turn is cancelled.
    task = open_task(browser, server, "states", working)
    start_scenario(task, "long-stream")
    expect(running.get_by_test_id(f"task-card-{working}")).to_be_visible(timeout=AGENT_STARTS_MS)
    expect(shown_titles(running)).to_have_count(1)
    # Cancelled once its turn is open: while the agent is still starting there is nothing to cancel.
    streaming = task.locator("[data-testid=timeline-message][data-author=agent][data-type=message]")
    expect(streaming).to_contain_text("Line 1 of the long stream", timeout=AGENT_STARTS_MS)
    task.get_by_test_id("session-cancel").click()
    expect(task.locator("[data-testid=timeline-message][data-type=status]")).to_contain_text("Turn cancelled")
    expect(shown_titles(running)).to_have_count(0)

    # A card comes to "Failed" when its agent crashes.
    task = open_task(browser, server, "states", crashing)
    start_scenario(task, "crash")
    expect(failed.get_by_test_id(f"task-card-{crashing}")).to_be_visible(timeout=AGENT_STARTS_MS)
    expect(shown_titles(failed)).to_have_count(1)

    # The agent profile's chip shows the tasks its agents worked on, and no other.
    board = open_board(browser, server, "states", ids["board_id"])
    expect(shown_titles(board)).to_have_count(3)
    chip = board.get_by_test_id("board-filter-profile").first
    chip.click()
    expect(board.get_by_test_id("board-filter-profile").first).to_have_attribute("data-on", "true")
    assert "profile=" in board.url
    expect(shown_titles(board)).to_have_count(2)
    expect(board.get_by_test_id(f"task-card-{untouched}")).to_have_count(0)


def test_the_board_by_keyboard(browser, server):
    ids = server.create_operator("keys", workspace="Keys'", tasks=True)
    task_id = ids["task_ids"][0]
    task = open_task(browser, server, "keys", task_id)
    start_scenario(task, "elicit-single")
    board = open_board(browser, server, "keys", ids["board_id"])
    waiting = board.get_by_test_id(f"task-card-{task_id}")
    expect(waiting).to_have_attribute("data-pending-action", "clarification", timeout=AGENT_STARTS_MS)
    cards = board.locator("#kanban .card")

    # "?" lists the keys; Escape closes the list.
    board.locator("body").press("?")
    expect(board.get_by_test_id("board-keys")).to_be_visible()
    board.keyboard.press("Escape")
    expect(board.get_by_test_id("board-keys")).to_be_hidden()

    # j and k move between the cards shown, in order; no key fires while typing.
    board.keyboard.press("j")
    expect(cards.nth(0)).to_have_attribute("data-current", "true")
    board.keyboard.press("j")
    expect(cards.nth(1)).to_have_attribute("data-current", "true")
    board.keyboard.press("k")
    expect(cards.nth(0)).to_have_attribute("data-current", "true")
    # A live patch replaces the current card (here, renamed elsewhere): it stays the current one.
    first_id = cards.nth(0).get_attribute("data-task-id")
    other = open_board(browser, server, "keys", ids["board_id"])
    other.get_by_test_id(f"task-card-{first_id}").get_by_test_id("task-edit").click()
    other.get_by_test_id("task-edit-form").get_by_role("textbox").first.fill("Renamed while current")
    other.get_by_test_id("task-edit-save").click()
    renamed = board.get_by_test_id(f"task-card-{first_id}")
    expect(renamed.get_by_test_id("task-card-title")).to_have_text("Renamed while current")
    expect(renamed).to_have_attribute("data-current", "true")
    expect(renamed.get_by_test_id("task-card-title")).to_be_focused()
    board.keyboard.press("/")
    expect(board.get_by_test_id("board-search")).to_be_focused()
    board.keyboard.type("jk?a")
    expect(board.get_by_test_id("board-search")).to_have_value("jk?a")
    expect(cards.nth(0)).to_have_attribute("data-current", "true")
    expect(board.get_by_test_id("board-keys")).to_be_hidden()
    board.get_by_test_id("board-search").fill("")

    # "a" on the waiting card opens its answer panel, in place.
    order = [cards.nth(i).get_attribute("data-task-id") for i in range(cards.count())]
    board.get_by_test_id("board-title").click()
    for _ in range(order.index(str(task_id)) + 1):
        board.keyboard.press("j")
    expect(waiting).to_have_attribute("data-current", "true")
    board.keyboard.press("a")
    panel = board.get_by_test_id("answer-panel")
    expect(panel).to_have_attribute("data-task-id", str(task_id))
    expect(panel).to_be_visible()
    panel.get_by_test_id("answer-panel-close").click()

    # Enter opens the current card's task, straight after the keys that made it current.
    board.get_by_test_id("board-title").click()
    for _ in range(order.index(str(task_id)) + 1):
        board.keyboard.press("j")
    expect(waiting).to_have_attribute("data-current", "true")
    board.keyboard.press("Enter")
    expect(board).to_have_url(re.compile(rf"/tasks/{task_id}/$"))


def test_search_and_filters_on_a_phone(browser, server):
    ids = server.create_operator("phone-finder", workspace="Phone finder's", tasks=True)
    board = open_board(
        browser,
        server,
        "phone-finder",
        ids["board_id"],
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    )
    search = board.get_by_test_id("board-search")
    expect(search).to_be_in_viewport()
    search.tap()
    search.fill("notes")
    board.get_by_test_id("board-search-submit").tap()
    expect(shown_titles(board)).to_have_text(["Write the release notes"])
    chip = board.locator("[data-testid=board-filter-state][data-value=done]")
    box = chip.bounding_box()
    assert box["height"] >= 44, box
    assert box["x"] + box["width"] <= 390, box
    page_width = board.evaluate("() => document.documentElement.scrollWidth")
    assert page_width <= 390, f"the page scrolls sideways: {page_width}px"
