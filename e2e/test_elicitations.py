"""ACP form elicitations in the operator's overlay, with the flag on for this module."""

from playwright.sync_api import expect

from testing_support.browser import agent_said, card, fresh_task, option
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def test_AC_09_single_question_answered_in_the_same_turn(browser, server):
    page, _ids = fresh_task(browser, server, "single")
    start(page, "elicit-single")
    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-source", "elicitation")
    expect(page.get_by_test_id("clarification-requester")).to_contain_text("Mock agent asks")
    expect(page.get_by_test_id("clarification-requester")).to_have_attribute("data-requester", "agent")
    expect(option(page, "Red").get_by_test_id("clarification-option-description")).to_have_text("The warm one.")
    # AC-09: waiting for input while the session stays RUNNING.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "RUNNING")
    details = page.get_by_test_id("task-details")
    expect(details.get_by_test_id("task-state-waiting-for-input")).to_be_visible()
    expect(details.get_by_test_id("task-state-running")).to_have_count(0)
    expect(details.get_by_test_id("task-state-background-running")).to_have_count(0)
    expect(page.get_by_test_id("clarification-input")).to_have_attribute("placeholder", "Or type your own answer")

    option(page, "Blue").click()
    expect(option(page, "Blue")).to_have_attribute("data-selected", "true")
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
    expect(overlay).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    expect(details.get_by_test_id("task-state-waiting-for-input")).to_have_count(0)
    # One prompt, one turn: the answer continued it (AC-13).
    expect(page.locator("[data-testid=timeline-message][data-author=user]")).to_have_count(1)


def test_AC_55_AC_12i_two_questions_multi_select_and_custom_text(browser, server):
    page, _ = fresh_task(browser, server, "multi")
    start(page, "elicit-two")
    first, second = card(page, "question_0"), card(page, "question_1")
    expect(first).to_have_attribute("data-kind", "single")
    option(first, "Postgres").click()
    first.get_by_test_id("clarification-input").fill("  CockroachDB  ")
    # Typed text is the answer: options look deselected, the pick is kept in the record.
    expect(option(first, "Postgres")).to_have_attribute("data-selected", "false")
    page.get_by_test_id("clarification-next").click()
    expect(second).to_have_attribute("data-kind", "multi")
    expect(second.locator("[role=checkbox]")).to_have_count(3)
    option(second, "prod").click()
    option(second, "dev").click()
    option(second, "staging").click()
    option(second, "staging").click()
    expect(second.locator("[data-selected=true]")).to_have_count(2)
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {
        "action": "accept",
        "content": {"question_0_custom": "CockroachDB", "question_1": ["dev", "prod"]},
    }


def test_AC_12b_empty_submission_is_accept_with_no_content(browser, server):
    page, _ = fresh_task(browser, server, "empty")
    start(page, "elicit-two")
    submit = page.get_by_test_id("clarification-submit")
    expect(submit).to_be_enabled()
    submit.click()
    # Asked once, inside the overlay; confirmed, nothing answered is accept {}.
    expect(page.get_by_test_id("clarification-confirm-empty")).to_contain_text("Send without answers?")
    page.get_by_test_id("clarification-confirm-send").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {}}


def test_AC_14_skip_declines(browser, server):
    page, _ = fresh_task(browser, server, "skipping")
    start(page, "elicit-single")
    page.get_by_test_id("clarification-skip").click()
    assert agent_said(page, "Answer:") == {"action": "decline"}
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "rejected")


def test_AC_12c_refusal_fallback(browser, server):
    page, _ = fresh_task(browser, server, "refusal")
    start(page, "elicit-refusal")
    requester = page.get_by_test_id("clarification-requester")
    expect(requester).to_have_attribute("data-requester", "retry-offer")
    expect(requester).to_have_text("Mock agent offers to retry your request on another model")
    expect(page.get_by_test_id("clarification-option")).to_have_count(2)
    expect(page.get_by_test_id("clarification-input")).to_have_count(0)
    option(page, "retry_fallback").click()
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"choice": "retry_fallback"}}


def test_AC_56_mcp_apikey_form_is_a_password_field_with_a_warning(browser, server):
    page, _ = fresh_task(browser, server, "apikey")
    start(page, "elicit-mcp-apikey")
    # Nothing in the form says an MCP server asked, so nothing is claimed: the agent asks.
    expect(page.get_by_test_id("clarification-requester")).to_have_text("Mock agent asks")
    expect(page.get_by_test_id("clarification-option")).to_have_count(0)
    expect(page.get_by_test_id("clarification-sensitive-warning")).to_be_visible()
    field = page.get_by_test_id("clarification-input")
    expect(field).to_have_attribute("type", "password")
    field.fill("T")
    page.get_by_test_id("clarification-submit").click()
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"apiKey": "T"}}


def test_AC_12d_eleven_questions_in_D1_order(browser, server):
    page, _ = fresh_task(browser, server, "eleven")
    start(page, "elicit-eleven")
    cards = page.get_by_test_id("clarification-question-card")
    expect(cards).to_have_count(11)
    ids = [cards.nth(i).get_attribute("data-question-id") for i in range(11)]
    assert ids == [f"question_{i}" for i in range(11)]
    expect(page.get_by_test_id("clarification-step")).to_have_count(11)


def test_D3_two_pending_elicitations_are_answered_independently(browser, server):
    page, _ = fresh_task(browser, server, "twice")
    start(page, "elicit-twice")
    overlays = page.get_by_test_id("clarification-overlay")
    expect(overlays).to_have_count(2)
    option(overlays.nth(1), "Blue").click()
    overlays.nth(1).get_by_test_id("clarification-submit").click()
    expect(overlays).to_have_count(1)
    option(overlays.first, "Red").click()
    overlays.first.get_by_test_id("clarification-submit").click()
    expect(overlays).to_have_count(0)
    first, second = agent_said(page, "First answer:"), agent_said(page, "Second answer:")
    assert sorted([first["content"]["question_0"], second["content"]["question_0"]]) == ["Blue", "Red"]


def test_AC_61_two_tabs_race_one_is_delivered_the_other_told(browser, server):
    first, ids = fresh_task(browser, server, "racer")
    from testing_support.browser import login

    second = browser.new_context().new_page()
    login(second, server, "racer", f"/tasks/{ids['task_ids'][0]}/")
    start(first, "elicit-single")
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    # Both tabs pick, then submit at the same instant of the browser's one clock: sent one after
    # the other, the first answer can settle the question before the second tab has clicked.
    pick_and_arm = """([choice, at]) => {
        document.querySelector(`[data-testid=clarification-option][data-option-id=${choice}]`).click();
        const submit = document.querySelector('[data-testid=clarification-submit]');
        setTimeout(() => submit.click(), Math.max(0, at - Date.now()));
    }"""
    at = first.evaluate("() => Date.now()") + 500
    # Both answers go out as frames on each tab's socket; agentctl takes one.
    first.evaluate(pick_and_arm, ["Red", at])
    second.evaluate(pick_and_arm, ["Blue", at])
    answer = agent_said(first, "Answer:")
    assert answer["content"]["question_0"] in ("Red", "Blue")
    winner, loser = (first, second) if answer["content"]["question_0"] == "Red" else (second, first)
    expect(winner.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(loser.locator("[data-testid=toast][data-level=info]").filter(has_text="already answered")).to_have_count(1)
    expect(winner.locator("[data-testid=toast]").filter(has_text="already answered")).to_have_count(0)


def test_AC_15_cancelling_the_turn_withdraws_the_question(browser, server):
    page, _ = fresh_task(browser, server, "canceller")
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    page.get_by_test_id("session-cancel").click()
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(page.locator("[data-testid=toast][data-reason=turn_cancelled]")).to_contain_text("turn was cancelled")
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "cancelled")
    expect(page.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_have_count(0)


def test_the_agent_withdraws_its_own_question(browser, server):
    page, _ = fresh_task(browser, server, "withdrawn")
    start(page, "elicit-then-cancel-request")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    expect(page.locator("[data-testid=toast][data-reason=agent_cancelled_request]")).to_be_visible(timeout=10_000)
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    assert agent_said(page, "Answer:") == {"action": "cancel"}
