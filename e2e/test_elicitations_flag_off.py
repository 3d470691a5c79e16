"""With features.acpElicitation off (the default), an agent's elicitation never reaches anyone."""

from playwright.sync_api import expect

from .elicitation_support import agent_said, fresh_task, start


def test_AC_20_flag_off_declines_with_no_overlay_pending_action_or_notification(browser, server):
    page, ids = fresh_task(browser, server, "flagoff")
    watcher = browser.new_context().new_page()
    from .conftest import login

    login(watcher, server, "flagoff", f"/tasks/{ids['task_ids'][1]}/")
    expect(watcher.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start(page, "elicit-single")
    assert agent_said(page, "Answer:") == {"action": "decline"}
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_count(0)
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_have_count(0)
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-turn-finished")).to_be_visible()
    expect(watcher.locator("[data-testid=toast][data-event]")).to_have_count(0)
