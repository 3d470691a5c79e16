"""With features.acpElicitation off (the default), an agent's elicitation never reaches anyone.

The timeline says once per session that a question was declined: staff get a
link to the toggle, other operators are told to ask an administrator.
"""

from playwright.sync_api import expect

from testing_support.browser import agent_said, fresh_task, login, open_task
from testing_support.browser import start_scenario as start


def notice(page):
    return page.get_by_test_id("elicitation-off-notice")


def test_AC_20_flag_off_declines_with_no_overlay_pending_action_or_notification(browser, server):
    page, ids = fresh_task(browser, server, "flagoff")
    watcher = browser.new_context().new_page()
    login(watcher, server, "flagoff", f"/tasks/{ids['task_ids'][1]}/")
    expect(watcher.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start(page, "elicit-single")
    assert agent_said(page, "Answer:") == {"action": "decline"}
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_count(0)
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_have_count(0)
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-turn-finished")).to_be_visible()
    expect(watcher.locator("[data-testid=toast][data-event]")).to_have_count(0)
    # An operator who is not staff is told who can change it, and gets no link to a page they cannot open.
    expect(notice(page)).to_have_count(1)
    expect(notice(page)).to_contain_text("Ask an administrator to turn them on.")
    expect(page.get_by_test_id("elicitation-off-toggle")).to_have_count(0)


def test_two_declined_questions_are_said_once_and_staff_follow_the_link_to_the_toggle(browser, server):
    ids = server.create_operator("flagoff-staff", workspace="flagoff-staff's", staff=True, tasks=True)
    page = open_task(browser, server, "flagoff-staff", ids["task_ids"][0])
    start(page, "elicit-twice")
    agent_said(page, "First answer:")
    expect(notice(page)).to_have_count(1)
    page.reload()  # as stored, not only as pushed live
    expect(notice(page)).to_have_count(1)
    page.get_by_test_id("elicitation-off-toggle").click()
    page.wait_for_url(lambda url: "/settings/feature-toggles/" in url)
    expect(page.get_by_test_id("feature-toggle-features.acpElicitation")).to_be_visible()
