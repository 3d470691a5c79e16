"""Shared steps for the elicitation browser specs."""

import json

from playwright.sync_api import expect

from .conftest import fresh_task  # noqa: F401  (the specs' shared steps, in one import)
from .conftest import start_scenario as start  # noqa: F401


def agent_said(page, prefix: str) -> dict | list:
    """The JSON the mock agent reports after ``prefix``: what reached it over ACP."""
    message = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text=prefix)
    expect(message).to_have_count(1)
    # The report streams in; it is whole once its turn is over.
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
    text = message.inner_text()
    offset = text.index(prefix) + len(prefix)
    value, _ = json.JSONDecoder().raw_decode(text[offset:].lstrip())
    return value


def expect_agentctl_gone(page) -> None:
    """The session failed because its agentctl ended, as every open tab shows."""
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error")).to_contain_text("stopped unexpectedly")


def card(page, question_id):
    return page.locator(f"[data-testid=clarification-question-card][data-question-id='{question_id}']")


def option(scope, option_id):
    return scope.locator(f"[data-testid=clarification-option][data-option-id='{option_id}']")
