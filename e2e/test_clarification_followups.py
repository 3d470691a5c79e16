"""Around the answer: the operator is notified, and a late answer still reaches the agent."""

from playwright.sync_api import expect

from testing_support.browser import login


def test_a_question_notifies_every_open_page_once_without_the_question(browser, server):
    ids = server.create_operator("notified", workspace="Notified", tasks=True)
    task, other_task = ids["task_ids"][0], ids["task_ids"][1]
    asker = browser.new_context().new_page()
    login(asker, server, "notified", f"/tasks/{task}/")
    elsewhere = browser.new_context().new_page()
    login(elsewhere, server, "notified", f"/tasks/{other_task}/")
    expect(elsewhere.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    asker.get_by_test_id("session-start-prompt").fill("/e2e:clarification")
    asker.get_by_test_id("session-start-submit").click()
    toast = elsewhere.locator("[data-testid=toast][data-event='session.clarification_requested']")
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text("Agent needs your answer")
    expect(toast).to_contain_text("Add a health-check endpoint")
    expect(toast).not_to_contain_text("Which database")
    expect(toast.get_by_test_id("toast-link")).to_have_attribute("href", f"/tasks/{task}/")


def test_answer_after_the_agent_moved_on_is_sent_as_a_new_message(browser, server):
    ids = server.create_operator("latecomer", workspace="Late", tasks=True)
    page = browser.new_context().new_page()
    login(page, server, "latecomer", f"/tasks/{ids['task_ids'][0]}/")
    page.get_by_test_id("session-start-prompt").fill("/e2e:clarification")
    page.get_by_test_id("session-start-submit").click()
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()

    page.get_by_test_id("session-cancel").click()
    expect(page.get_by_test_id("clarification-deferred-notice")).to_be_visible()
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-agent-disconnected", "true")
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "pending")

    page.get_by_test_id("clarification-option").filter(has_text="MongoDB").click()
    expect(page.locator("[data-testid=toast][data-level=info]")).to_contain_text("sent as a new message")
    follow_up = page.locator("[data-testid=timeline-message][data-author=user]").last
    expect(follow_up).to_contain_text(
        'You previously asked the user: "Which database should we use for this project?". They answered: MongoDB'
    )
    expect(page.get_by_test_id("clarification-record-answer")).to_contain_text("sent as new message")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
