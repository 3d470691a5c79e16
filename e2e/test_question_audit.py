"""The timeline says why each question ended, who answered it and from where, in every tab.

Two tabs of one operator watch the same task. Whichever way the agent asked
(Kandev's MCP tool or an ACP elicitation), the tab that answers reads
"Answered by … in this tab at …", the other "… in another tab at …", and the
other tab, whose overlay goes away, is told so in a notice. A withdrawn
question says why.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, login
from testing_support.browser import start_scenario as start

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def two_tabs(browser, server, username):
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    tabs = []
    for _ in range(2):
        page = browser.new_context().new_page()
        login(page, server, username, f"/tasks/{ids['task_ids'][0]}/")
        expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
        tabs.append(page)
    return tabs


def settlement(page):
    return page.get_by_test_id("clarification-record-settlement")


@pytest.mark.parametrize(
    ("scenario", "answer"),
    [
        ("clarification", lambda page: page.get_by_test_id("clarification-option").filter(has_text="SQLite").click()),
        (
            "elicit-single",
            lambda page: (
                page.locator("[data-testid=clarification-option][data-option-id=Blue]").click(),
                page.get_by_test_id("clarification-submit").click(),
            ),
        ),
    ],
    ids=["ask_user_question", "elicitation"],
)
def test_both_tabs_say_who_answered_where_and_when(browser, server, scenario, answer):
    username = f"audit-{scenario}"
    answering, watching = two_tabs(browser, server, username)
    start(answering, scenario)
    for page in (answering, watching):
        # The agent starts first (and its MCP client loads): a process start, on a shared machine.
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    answer(answering)

    for page in (answering, watching):
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
        expect(settlement(page).locator("time[datetime]")).to_have_count(1)
    expect(settlement(answering)).to_have_attribute("data-where", "this_tab")
    expect(settlement(answering)).to_contain_text(f"Answered by {username} in this tab at ")
    expect(settlement(watching)).to_have_attribute("data-where", "another_tab")
    expect(settlement(watching)).to_contain_text(f"Answered by {username} in another tab at ")
    # The tab whose overlay went away is told who answered it, and where; the answering tab is not told again.
    notice = watching.locator("[data-testid=toast][data-reason=operator]")
    expect(notice).to_contain_text(f"This question was already answered by {username} in another tab at ")
    expect(answering.locator("[data-testid=toast]").filter(has_text="already answered")).to_have_count(0)

    # The record is the audit trail: a reload still says it.
    watching.reload()
    expect(watching.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    expect(settlement(watching)).to_contain_text(f"Answered by {username} in another tab at ")
    expect(settlement(watching)).to_have_attribute("data-answered-by", username)


def test_a_cancelled_turn_says_in_both_tabs_why_the_question_went_away(browser, server):
    first, second = two_tabs(browser, server, "audit-cancel")
    start(first, "elicit-single")
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    first.get_by_test_id("session-cancel").click()
    for page in (first, second):
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
        expect(page.get_by_test_id("clarification-record-answer")).to_have_text("Withdrawn")
        expect(settlement(page)).to_have_attribute("data-reason", "turn_cancelled")
        expect(settlement(page)).to_contain_text("Withdrawn: the turn was cancelled at ")
        expect(page.locator("[data-testid=toast][data-reason=turn_cancelled]")).to_contain_text(
            "Withdrawn: the turn was cancelled"
        )
