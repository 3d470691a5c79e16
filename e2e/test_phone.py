"""The board, the task page and the overlay in a phone's window (390×844): nothing sideways, nothing too small."""

import itertools

import pytest
from playwright.sync_api import expect

from testing_support.browser import login, start_scenario
from testing_support.layout import (
    PHONE,
    assert_no_horizontal_scroll,
    assert_tap_targets,
    assert_within_window,
    intersects,
)

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: How many lines each element's text takes on screen.
_LINES = """(els) => els.map((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
})"""


def phone_page(browser, server, username: str, path: str, *, locale: str = "en-US"):
    page = browser.new_context(viewport=PHONE, locale=locale).new_page()
    login(page, server, username, path)
    return page


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])  # German labels are longer
def test_the_nav_keeps_clear_of_the_brand_each_item_on_one_line(browser, server, locale):
    ids = server.create_operator(f"navigator-{locale}", workspace=f"Navigator {locale}", staff=True, tasks=True)
    page = phone_page(browser, server, f"navigator-{locale}", f"/boards/{ids['board_id']}/", locale=locale)
    expect(page.locator("html")).to_have_attribute("lang", locale[:2])
    brand = page.get_by_test_id("nav-home").bounding_box()
    items = page.locator(".topnav > *")
    # Inbox, Usage, Notifications, Feature toggles, the language switch, the user, Log out.
    expect(items).to_have_count(7)
    boxes = [items.nth(i).bounding_box() for i in range(items.count())]
    for box in boxes:
        assert not intersects(brand, box), f"{box} runs into the brand {brand}"
        same_row = box["y"] < brand["y"] + brand["height"] and brand["y"] < box["y"] + box["height"]
        assert not same_row or box["x"] >= brand["x"] + brand["width"] + 8, f"{box} is glued to the brand {brand}"
    for a, b in itertools.pairwise(boxes):
        assert not intersects(a, b)
    assert page.locator(".topnav a, .topnav button").evaluate_all(_LINES) == [1] * 7


def test_the_board_fits_the_window_and_every_control_takes_a_finger(browser, server):
    ids = server.create_operator("thumb", workspace="Thumb", tasks=True)
    page = phone_page(browser, server, "thumb", f"/boards/{ids['board_id']}/")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    assert_no_horizontal_scroll(page)
    assert_tap_targets(page)


SCENARIOS = [None, "clarification-multi", "elicit-two", "elicit-mcp-apikey", "permission-flow"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_task_page_and_overlay_fit_the_window_and_every_control_takes_a_finger(browser, server, scenario):
    username = f"phone-{scenario or 'idle'}"
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    page = phone_page(browser, server, username, f"/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    if scenario == "permission-flow":
        start_scenario(page, scenario)
        expect(page.get_by_test_id("permission-option").first).to_be_visible(timeout=30_000)
    elif scenario:
        start_scenario(page, scenario)
        overlay = page.get_by_test_id("clarification-overlay")
        # An agent's start is the slow part (a process, a session, a turn) on a busy machine.
        expect(overlay).to_be_visible(timeout=30_000)
        assert_within_window(page, overlay)
        for each in page.get_by_test_id("clarification-option").filter(visible=True).all():
            assert_within_window(page, each)
        steps = page.get_by_test_id("clarification-step")
        if steps.count():
            steps.last.click()  # a stepper's last question, with Submit in reach
            assert_within_window(page, page.get_by_test_id("clarification-submit"))
    assert_no_horizontal_scroll(page)
    assert_tap_targets(page)
