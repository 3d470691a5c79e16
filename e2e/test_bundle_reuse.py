"""Bundle reuse on the ask_user_question_kandev path, in the browser
(``docs/decisions/board-and-timeline.md#bundle-reuse``).

The same questions asked again in a later turn are shown to the operator
again; the very same call retried within a turn gets the answer already given.
"""

import json
import re

from playwright.sync_api import expect

from testing_support.browser import fresh_task
from testing_support.browser import start_scenario as start


def agent_reports(page, prefix: str, count: int = 1) -> list:
    """Every JSON value the mock agent said after ``prefix``, oldest first, once its ``count``-th report is whole.

    The turn's end alone is no sign: the page may not have shown the
    follow-up turn open yet when it is looked at.
    """
    messages = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=prefix)
    expect(messages).to_have_count(count)
    # A report streams in; it is whole once its turn is over.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    expect(messages.last).to_have_attribute("data-streaming", "false")
    return [json.loads(re.sub(rf"^.*?{prefix}\s*", "", text, flags=re.S)) for text in messages.all_inner_texts()]


def option(page, label):
    return page.get_by_test_id("clarification-option").filter(has_text=label)


def test_the_same_questions_in_a_later_turn_are_asked_again(browser, server):
    page, _ = fresh_task(browser, server, "asked-twice")
    start(page, "clarification")
    option(page, "SQLite").click()
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    assert agent_reports(page, "Tool result:") == [{"db": {"selected_option": "db_opt3"}}]

    # A follow-up turn asks the very same question: the operator sees it again.
    page.get_by_test_id("session-prompt-input").fill("/e2e:clarification")
    page.get_by_test_id("session-prompt-submit").click()
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    records = page.get_by_test_id("clarification-record")
    expect(records).to_have_count(2)
    expect(records.last).to_have_attribute("data-status", "pending")
    option(page, "MongoDB").click()
    expect(records.last).to_have_attribute("data-status", "answered")
    expect(records.last.get_by_test_id("clarification-record-answer")).to_have_text("MongoDB")
    expect(records.first.get_by_test_id("clarification-record-answer")).to_have_text("SQLite")
    assert agent_reports(page, "Tool result:", count=2) == [
        {"db": {"selected_option": "db_opt3"}},
        {"db": {"selected_option": "db_opt2"}},
    ]


def test_a_call_retried_within_the_turn_gets_the_answer_already_given(browser, server):
    page, _ = fresh_task(browser, server, "retrier")
    start(page, "clarification-retry")
    option(page, "PostgreSQL").click()
    [(first, retried)] = agent_reports(page, "Both results:")
    assert first == retried == {"db": {"selected_option": "db_opt1"}}
    # Asked once, answered once: the retry never reached the operator.
    expect(page.get_by_test_id("clarification-record")).to_have_count(1)
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
