"""The session as an operator reads it: a badge per state, a crash with its stderr, Send while a turn is open.

Kandev's stored ``WAITING_FOR_INPUT`` means a finished turn, a permission
request and a blocking question alike; the badge (``data-display-state``)
tells them apart, and ``data-state`` keeps the stored state.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import fresh_task, login, start_scenario

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: Every toast the page is shown, by its event (notifications) or level, kept even after it fades.
RECORD_TOASTS = """
window.toastsSeen = [];
new MutationObserver((changes) => {
  for (const change of changes) for (const node of change.addedNodes) {
    if (node.nodeType !== 1) continue;
    const toast = node.matches("[data-testid=toast]") ? node : node.querySelector("[data-testid=toast]");
    if (toast) window.toastsSeen.push(toast.dataset.event || toast.dataset.level);
  }
}).observe(document, {childList: true, subtree: true});
"""


def badge(page):
    return page.get_by_test_id("task-sessions").get_by_test_id("session-state").first


def expect_badge(page, display_state, text):
    expect(badge(page)).to_have_attribute("data-display-state", display_state)
    expect(badge(page)).to_have_text(text)


@pytest.mark.parametrize(
    ("scenario", "display_state", "text", "stored"),
    [
        ("simple-message", "ready", "Ready for a follow-up", "WAITING_FOR_INPUT"),
        ("long-stream", "running", "Running", "RUNNING"),
        ("permission-flow", "needs-permission", "Needs your permission", "WAITING_FOR_INPUT"),
        ("clarification", "needs-answer", "Needs your answer", "WAITING_FOR_INPUT"),  # ask_user_question_kandev
        ("elicit-single", "needs-answer", "Needs your answer", "RUNNING"),  # an ACP elicitation
    ],
)
def test_the_badge_says_what_the_session_needs(browser, server, scenario, display_state, text, stored):
    page, _ = fresh_task(browser, server, f"badge-{scenario}")
    start_scenario(page, scenario)
    expect_badge(page, display_state, text)
    expect(badge(page)).to_have_attribute("data-state", stored)
    expect(badge(page)).not_to_have_text("Waiting for input")


def test_a_turn_then_a_stop_read_ready_then_stopped(browser, server):
    page, _ = fresh_task(browser, server, "badge-stop")
    start_scenario(page, "simple-message")
    expect_badge(page, "ready", "Ready for a follow-up")
    page.get_by_test_id("session-stop").click()
    expect_badge(page, "stopped", "Stopped")


def test_a_crash_shows_how_it_ended_and_what_the_agent_printed_once_and_as_text(browser, server):
    page, _ = fresh_task(browser, server, "crash-tail")
    dialogs, errors = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("pageerror", lambda error: errors.append(str(error)))
    start_scenario(page, "crash-stderr")
    expect_badge(page, "failed", "Failed")
    failure = page.get_by_test_id("session-error")
    expect(failure).to_contain_text("The agent exited unexpectedly with code 3.")
    stderr = page.get_by_test_id("session-stderr")
    expect(stderr).to_have_count(1)
    hostile = 'fatal: <img src=x onerror="window.pwned=1"><script>window.pwned=1</script> {{7*7}}'
    # The last 20 lines: noise 12 to 30, then the hostile one, as text.
    tail = "\n".join([*(f"noise line {n}" for n in range(12, 31)), hostile])
    expect(stderr).to_have_text(tail)

    def said_once(page):
        body = page.locator("body").inner_text()
        assert body.count("exited unexpectedly with code 3") == 1
        assert body.count("noise line 30") == 1
        assert "signal None" not in body
        assert "exit code 3, signal" not in body
        assert page.locator("main img, main script:not([src])").count() == 0
        assert page.evaluate("window.pwned") is None

    said_once(page)
    expect(page.locator("[data-testid=timeline-message][data-type=error]")).to_have_count(1)
    # And the same, server-rendered.
    page.reload()
    expect(page.get_by_test_id("session-stderr")).to_have_text(tail)
    said_once(page)
    assert dialogs == []
    assert errors == []


def _turn_finished_notifications_on(browser, server, username):
    context = browser.new_context()
    context.add_init_script(RECORD_TOASTS)
    page = context.new_page()
    login(page, server, username, "/settings/notifications/")
    setting = page.get_by_test_id("notification-setting-session.turn_finished")
    setting.get_by_test_id("notification-switch").click()
    expect(page.get_by_test_id("notification-setting-session.turn_finished")).to_have_attribute("data-enabled", "true")
    return page


def test_send_during_a_permission_is_off_with_the_reason_and_a_stale_send_changes_nothing(browser, server):
    _, ids = fresh_task(browser, server, "sender")
    page = _turn_finished_notifications_on(browser, server, "sender")
    page.goto(f"{server.url}/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_scenario(page, "permission-flow")
    expect(page.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")
    expect_badge(page, "needs-permission", "Needs your permission")

    prompt = page.get_by_test_id("session-prompt-input")
    prompt.fill("Also update the changelog")
    send = page.get_by_test_id("session-prompt-submit")
    expect(send).to_be_disabled()
    reason = page.get_by_test_id("session-prompt-blocked-reason")
    expect(reason).to_be_visible()
    expect(reason).to_have_text("The agent is waiting for your permission. Answer it first; your message is kept here.")

    # A tab that has not caught up still sends it: the server refuses, and nothing happens.
    # Found and submitted in one step in the page: a live swap of the composer between
    # finding the form and submitting it would leave a detached form, which sends nothing.
    page.evaluate("document.querySelector('[data-testid=session-prompt-form]').requestSubmit()")
    refusal = page.locator("[data-testid=toast][data-reason=turn_open]")
    expect(refusal).to_contain_text("waiting for your permission")
    expect(prompt).to_have_value("Also update the changelog")
    timeline = page.get_by_test_id("timeline")
    expect(timeline.locator("[data-testid=timeline-message][data-type=error]")).to_have_count(0)
    expect(timeline.locator("[data-testid=timeline-message][data-author=user]")).to_have_count(1)
    expect(page.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")
    expect_badge(page, "needs-permission", "Needs your permission")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-pending-permission")).to_be_visible()
    assert "session.turn_finished" not in page.evaluate("window.toastsSeen")

    # Once answered, the turn really ends: one notification, and Send is on with the text kept.
    page.locator("[data-testid=permission-option][data-option-id=allow-once]").click()
    expect_badge(page, "ready", "Ready for a follow-up")
    expect(send).to_be_enabled()
    expect(reason).to_have_count(0)
    expect(prompt).to_have_value("Also update the changelog")
    page.wait_for_function("() => window.toastsSeen.includes('session.turn_finished')")
    assert page.evaluate("window.toastsSeen").count("session.turn_finished") == 1
    expect(timeline.locator("[data-testid=timeline-message][data-type=error]")).to_have_count(0)


def test_send_while_the_agent_works_is_off_with_the_reason(browser, server):
    page, _ = fresh_task(browser, server, "impatient")
    start_scenario(page, "long-stream")
    expect_badge(page, "running", "Running")
    expect(page.get_by_test_id("session-prompt-submit")).to_be_disabled()
    expect(page.get_by_test_id("session-prompt-blocked-reason")).to_contain_text("still working on its turn")
    page.get_by_test_id("session-cancel").click()
    expect_badge(page, "ready", "Ready for a follow-up")
    expect(page.get_by_test_id("session-prompt-submit")).to_be_enabled()
