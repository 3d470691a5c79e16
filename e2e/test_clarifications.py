"""The ask_user_question_kandev path, end to end: the AC-57 baseline.

The mock agent calls Kandev's MCP tool; the operator answers in the overlay;
the agent reports the tool result it received. Later issues must keep this
suite passing unmodified.
"""

import json
import re

from playwright.sync_api import expect

from testing_support.browser import fresh_task, login
from testing_support.browser import start_scenario as start


def tool_result(page) -> dict:
    """The tool result the agent says it received."""
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Tool result:")
    expect(message).to_have_count(1)
    # The report streams in; it is whole once its turn is over.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    return json.loads(re.sub(r"^.*?Tool result:\s*", "", message.inner_text(), flags=re.S))


def option(page, label):
    return page.get_by_test_id("clarification-option").filter(has_text=label)


def test_AC_57_single_select_click_submits_and_reaches_the_tool_result(browser, server):
    page, _ = fresh_task(browser, server, "single")
    start(page, "clarification")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_be_visible()
    expect(page.get_by_test_id("clarification-option")).to_have_count(3)
    expect(option(page, "PostgreSQL").get_by_test_id("clarification-option-description")).to_contain_text(
        "battle-tested"
    )
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_be_visible()
    expect(page.get_by_test_id("clarification-submit")).to_have_count(0)

    option(page, "SQLite").click()
    assert tool_result(page) == {"db": {"selected_option": "db_opt3"}}
    expect(overlay).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    expect(page.get_by_test_id("clarification-record-answer")).to_have_text("SQLite")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_have_count(0)


def test_AC_57_custom_text_with_enter_replaces_a_pick(browser, server):
    page, _ = fresh_task(browser, server, "custom")
    start(page, "clarification")
    text = page.get_by_test_id("clarification-input")
    text.fill("CockroachDB")
    expect(page.get_by_test_id("clarification-custom-input")).to_have_attribute("data-active", "true")
    for each in page.get_by_test_id("clarification-option").all():
        expect(each).to_have_attribute("data-selected", "false")
    text.press("Enter")
    assert tool_result(page) == {"db": {"custom_text": "CockroachDB"}}


def test_AC_57_a_pick_clears_typed_text(browser, server):
    page, _ = fresh_task(browser, server, "picker")
    start(page, "clarification")
    page.get_by_test_id("clarification-input").fill("Something else")
    option(page, "PostgreSQL").click()
    assert tool_result(page) == {"db": {"selected_option": "db_opt1"}}


def test_AC_57_skip_with_a_reason(browser, server):
    page, _ = fresh_task(browser, server, "skipper")
    start(page, "clarification")
    page.get_by_test_id("clarification-skip-reason").fill("Not my call")
    page.get_by_test_id("clarification-skip").click()
    assert tool_result(page) == {"db": {"answered": False}, "rejected": True, "reject_reason": "Not my call"}
    expect(page.get_by_test_id("clarification-record-answer")).to_have_text("Skipped")


def test_AC_57_bundle_stepper_keyboard_and_submit(browser, server):
    page, _ = fresh_task(browser, server, "bundler")
    start(page, "clarification-multi")
    expect(page.get_by_test_id("clarification-stepper")).to_be_visible()
    expect(page.get_by_test_id("clarification-step")).to_have_count(3)
    progress = page.get_by_test_id("clarification-group-progress")
    expect(progress).to_have_text("0 of 3 answered")
    expect(page.get_by_test_id("clarification-context")).to_have_text("Setting up the new billing service.")
    submit = page.get_by_test_id("clarification-submit")
    expect(submit).to_be_disabled()

    # A pick moves to the next question; digits pick on the current one.
    option(page, "PostgreSQL").click()
    visible = page.locator("[data-testid=clarification-question-card]:visible")
    expect(visible).to_have_attribute("data-question-id", "lang")
    page.get_by_test_id("clarification-overlay").focus()
    page.keyboard.press("2")
    expect(visible).to_have_attribute("data-question-id", "ci")
    expect(progress).to_have_text("2 of 3 answered")

    # Back, custom text on the second question replaces its pick.
    page.get_by_test_id("clarification-prev").click()
    expect(visible).to_have_attribute("data-question-id", "lang")
    page.locator("[data-testid=clarification-question-card][data-question-id=lang]").get_by_test_id(
        "clarification-input"
    ).fill("Kotlin")
    page.get_by_test_id("clarification-next").click()
    expect(submit).to_be_disabled()
    page.locator("[data-testid=clarification-question-card][data-question-id=ci]").get_by_test_id(
        "clarification-option"
    ).first.click()
    expect(progress).to_have_text("3 of 3 answered")
    expect(page.locator("[data-testid=clarification-step][data-answered=true]")).to_have_count(3)
    page.keyboard.press("Control+Enter")
    assert tool_result(page) == {
        "db": {"selected_option": "db_opt1"},
        "lang": {"custom_text": "Kotlin"},
        "ci": {"selected_option": "ci_opt1"},
    }
    expect(page.get_by_test_id("clarification-record")).to_have_count(3)


#: Hold the page's answer frames (the rest of its socket is untouched) until ``releaseAnswers()`` sends them.
HOLD_ANSWERS = """() => {
    const send = WebSocket.prototype.send;
    const held = [];
    WebSocket.prototype.send = function (data) {
        if (!String(data).includes('"clarification.answer"')) return send.call(this, data);
        held.push([this, data]);
    };
    window.releaseAnswers = () => {
        WebSocket.prototype.send = send;
        held.splice(0).forEach(([socket, data]) => send.call(socket, data));
    };
}"""


def test_AC_57_two_tabs_race_one_answer_wins(browser, server):
    first, ids = fresh_task(browser, server, "racer")
    second = browser.new_context().new_page()
    login(second, server, "racer", f"/tasks/{ids['task_ids'][0]}/")
    expect(second.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start(first, "clarification")
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()

    send = """(label) => {
        const option = [...document.querySelectorAll('[data-testid=clarification-option]')]
            .find((o) => o.textContent.includes(label));
        option.click();
    }"""
    # Both answers go out as frames on each tab's socket (no HTTP request to race on). The first tab's
    # frame is held in the page until the second tab has answered too: whichever way the race goes,
    # neither tab's overlay can be taken away before its operator answers.
    first.evaluate(HOLD_ANSWERS)
    first.evaluate(send, "MongoDB")
    second.evaluate(send, "SQLite")
    first.evaluate("() => window.releaseAnswers()")

    assert tool_result(first) == tool_result(second)
    answers = {tool_result(first)["db"]["selected_option"]}
    assert answers <= {"db_opt2", "db_opt3"}
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    loser = second if answers == {"db_opt2"} else first
    expect(loser.locator("[data-testid=toast][data-level=info]")).to_contain_text("already answered")


def test_a_blocked_task_shows_waiting_for_input_and_an_idle_one_does_not(browser, server):
    blocked, ids = fresh_task(browser, server, "boarder")
    start(blocked, "clarification")
    expect(blocked.get_by_test_id("clarification-overlay")).to_be_visible()
    idle_task = ids["task_ids"][1]
    idle = browser.new_context().new_page()
    login(idle, server, "boarder", f"/tasks/{idle_task}/")
    idle.get_by_test_id("session-start-prompt").fill("/e2e:simple-message")
    idle.get_by_test_id("session-start-submit").click()
    expect(idle.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")

    idle.goto(f"{server.url}/boards/{ids['board_id']}/")
    expect(
        idle.get_by_test_id(f"task-card-{ids['task_ids'][0]}").get_by_test_id("task-state-waiting-for-input")
    ).to_be_visible()
    idle_card = idle.get_by_test_id(f"task-card-{idle_task}")
    expect(idle_card.get_by_test_id("task-state-turn-finished")).to_be_visible()
    expect(idle_card.get_by_test_id("task-state-waiting-for-input")).to_have_count(0)
