"""The overlay's own controls: collapsing it and getting it back, and the one question before an empty Submit."""

from playwright.sync_api import expect

from testing_support.browser import agent_said, fresh_task, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def test_the_overlay_collapses_and_comes_back_with_a_visible_control_and_the_keyboard(browser, server):
    page, _ = fresh_task(browser, server, "collapser")
    start(page, "elicit-two")
    overlay = page.get_by_test_id("clarification-overlay")
    toggle = page.get_by_test_id("clarification-collapse")
    first_option = page.get_by_test_id("clarification-option").first
    expect(overlay).to_have_attribute("data-collapsed", "false")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_have_text("Hide the questions")

    toggle.click()
    expect(overlay).to_have_attribute("data-collapsed", "true")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_have_text("Show the questions")
    expect(first_option).to_be_hidden()
    expect(page.get_by_test_id("clarification-submit")).to_be_hidden()
    toggle.click()
    expect(overlay).to_have_attribute("data-collapsed", "false")
    expect(first_option).to_be_visible()
    expect(first_option).to_be_focused()

    # Esc collapses, and leaves the keyboard on the way back.
    page.keyboard.press("Escape")
    expect(overlay).to_have_attribute("data-collapsed", "true")
    expect(toggle).to_be_focused()
    page.keyboard.press("Enter")
    expect(overlay).to_have_attribute("data-collapsed", "false")
    expect(first_option).to_be_visible()
    # Answers typed before collapsing are still there.
    first_option.click()
    toggle.click()
    toggle.click()
    expect(first_option).to_have_attribute("data-selected", "true")


def test_an_empty_submit_asks_once_and_keep_answering_goes_back(browser, server):
    page, _ = fresh_task(browser, server, "reconsider")
    start(page, "elicit-single")
    ask = page.get_by_test_id("clarification-confirm-empty")
    expect(ask).to_be_hidden()
    page.get_by_test_id("clarification-submit").click()
    expect(ask).to_be_visible()
    expect(page.get_by_test_id("clarification-confirm-send")).to_be_focused()
    # Nothing went out: the question is still open.
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "pending")
    expect(page.get_by_test_id("clarification-form")).to_have_attribute("data-sending", "false")

    page.get_by_test_id("clarification-confirm-cancel").click()
    expect(ask).to_be_hidden()
    expect(page.get_by_test_id("clarification-submit")).to_be_focused()
    # With an answer there is nothing to ask.
    option(page, "Blue").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)


def test_ctrl_enter_on_an_empty_form_asks_and_a_second_one_sends(browser, server):
    page, _ = fresh_task(browser, server, "keyboarder")
    start(page, "elicit-two")
    page.get_by_test_id("clarification-option").first.focus()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_test_id("clarification-confirm-empty")).to_be_visible()
    expect(page.get_by_test_id("clarification-record").first).to_have_attribute("data-status", "pending")
    page.keyboard.press("Control+Enter")
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {}}
