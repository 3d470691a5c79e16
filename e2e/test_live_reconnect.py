"""A tab cut off from the server says so, comes back by itself and shows what it missed.

The cut-off tab reaches the server through a TCP proxy (``testing_support/tcp_proxy.py``) the
test cuts and restores; everyone else talks to the server directly. Nothing
is reloaded: the tab's socket reconnects and its first frame catches it up.
"""

import dataclasses

import pytest
from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, open_task, start_agent, start_scenario, watched_page
from testing_support.tcp_proxy import TcpProxy

#: An upper bound on coming back once the network is: a retry is at most
#: 3 s away (static/js/live.js), plus the handshake and catch-up on a busy machine.
BACK_WITHIN_MS = 8000


@pytest.fixture(scope="module")
def proxy(server):
    proxy = TcpProxy(int(server.url.rsplit(":", 1)[1]))
    yield proxy
    proxy.close()


@pytest.fixture
def through_proxy(server, proxy):
    """The server as the cut-off tab sees it: at the proxy's address (its origin is the proxy's too)."""
    proxy.restore()
    return dataclasses.replace(server, url=proxy.url)


def same_document(page) -> None:
    """Mark the document, so a test can tell it was not reloaded, and keep the live swaps that found no target."""
    page.evaluate(
        "window.__sameDocument = true; window.swapsWithoutTarget = [];"
        "document.addEventListener('htmx:oobErrorNoTarget', ({detail}) => {"
        "  window.swapsWithoutTarget.push(detail.content.outerHTML.slice(0, 120));"
        "})"
    )


def expect_same_document(page) -> None:
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    assert page.evaluate("window.swapsWithoutTarget") == [], "part of the catch-up found nothing to replace"


def expect_paused(page, live: str) -> None:
    status = page.get_by_test_id("live-status")
    expect(status).to_have_attribute("data-state", "disconnected")
    expect(status).to_be_visible()
    expect(status).to_have_text("Live updates paused — reconnecting…")
    expect(page.get_by_test_id(live)).to_have_attribute("data-live", "disconnected")


def expect_live(page, live: str, *, timeout: float = 5000) -> None:
    expect(page.get_by_test_id(live)).to_have_attribute("data-live", "connected", timeout=timeout)
    status = page.get_by_test_id("live-status")
    expect(status).to_have_attribute("data-state", "connected")
    expect(status).to_be_hidden()


def ask_while_cut_off(browser, server, proxy, away, live: str, username: str, task_id: int):
    """Cut ``away`` off, have the agent of ``task_id`` ask a question on a tab that is not, then restore: that tab."""
    proxy.cut()
    expect_paused(away, live)
    here = open_task(browser, server, username, task_id)
    start_scenario(here, "clarification")
    expect(here.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    return here


def test_a_question_asked_while_the_tab_was_cut_off_appears_when_it_is_back(browser, server, proxy, through_proxy):
    task_id = server.create_operator("carol", workspace="Carol's", tasks=True)["task_ids"][0]
    away = open_task(browser, through_proxy, "carol", task_id)
    expect_live(away, "task-live")
    same_document(away)

    here = ask_while_cut_off(browser, server, proxy, away, "task-live", "carol", task_id)
    expect(away.get_by_test_id("clarification-overlay")).to_have_count(0)

    proxy.restore()
    expect(away.get_by_test_id("clarification-overlay")).to_be_visible(timeout=BACK_WITHIN_MS)
    expect_live(away, "task-live")
    expect(away.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(away.get_by_test_id("task-details").get_by_test_id("task-state-waiting-for-input")).to_be_visible()
    expect(away.get_by_test_id("clarification-record")).to_have_attribute("data-status", "pending")
    expect_same_document(away)

    # The overlay that arrived late works like any other: the answer reaches the agent.
    away.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    for page in (away, here):
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)


def test_a_thinking_the_operator_opened_stays_open_when_the_tab_catches_up(browser, server, proxy, through_proxy):
    task_id = server.create_operator("faye", workspace="Faye's", tasks=True)["task_ids"][0]
    page = open_task(browser, through_proxy, "faye", task_id)
    start_agent(page, "Hello")
    reply = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="You said")
    expect(reply).to_have_count(1, timeout=20_000)
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=20_000)
    thinking = page.locator("[data-testid=timeline-message][data-type=thinking] details")
    thinking.locator("summary").click()
    expect(thinking).to_have_attribute("open", "")
    same_document(page)

    # The catch-up re-sends the latest turn's messages, this one included.
    proxy.cut()
    expect_paused(page, "task-live")
    proxy.restore()
    expect_live(page, "task-live", timeout=BACK_WITHIN_MS)
    expect_same_document(page)
    expect(thinking).to_have_attribute("open", "")


def test_a_question_asked_while_the_inbox_was_cut_off_is_in_it_and_counted_when_it_is_back(
    browser, server, proxy, through_proxy
):
    task_id = server.create_operator("gus", workspace="Gus's", tasks=True)["task_ids"][0]
    inbox = watched_page(browser, through_proxy, "gus", "/inbox/", live="inbox-live")
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    same_document(inbox)

    here = ask_while_cut_off(browser, server, proxy, inbox, "inbox-live", "gus", task_id)

    proxy.restore()
    waiting = inbox.locator("[data-testid=inbox-item][data-kind=question][data-state=waiting]")
    expect(waiting).to_have_count(1, timeout=BACK_WITHIN_MS)
    expect_live(inbox, "inbox-live")
    expect(inbox.get_by_test_id("inbox-count")).to_have_attribute("data-count", "1")
    expect(inbox.get_by_test_id("inbox-empty")).to_be_hidden()
    expect_same_document(inbox)

    # Answered from the inbox that came back, it leaves the task page too.
    waiting.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    expect(inbox.locator("[data-testid=inbox-item][data-state=left]")).to_have_attribute("data-reason", "operator")
    expect(here.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(here.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")


def test_the_inbox_keeps_its_selection_when_it_is_back(browser, server, proxy, through_proxy):
    """The catch-up renders the inbox's items anew; the one picked with j is still the selected one."""
    task_ids = server.create_operator("ida", workspace="Ida's", tasks=True)["task_ids"][:2]
    for task_id in task_ids:
        task = open_task(browser, server, "ida", task_id)
        start_scenario(task, "clarification")
        expect(task.get_by_test_id("clarification-overlay")).to_be_visible(timeout=AGENT_STARTS_MS)
    inbox = watched_page(browser, through_proxy, "ida", "/inbox/", live="inbox-live")
    same_document(inbox)
    older, newer = (inbox.locator(f"[data-testid=inbox-item][data-task-id='{task_id}']") for task_id in task_ids)
    inbox.keyboard.press("j")
    expect(older).to_have_attribute("data-selected", "true")
    inbox.keyboard.press("j")
    expect(newer).to_have_attribute("data-selected", "true")

    proxy.cut()
    expect_paused(inbox, "inbox-live")
    proxy.restore()
    expect_live(inbox, "inbox-live", timeout=BACK_WITHIN_MS)
    expect(newer).to_have_attribute("data-selected", "true")
    expect(older).to_have_attribute("data-selected", "false")
    inbox.keyboard.press("k")
    expect(older).to_have_attribute("data-selected", "true")
    expect_same_document(inbox)


def test_a_card_moved_while_the_board_was_cut_off_is_in_its_new_column_when_it_is_back(
    browser, server, proxy, through_proxy
):
    ids = server.create_operator("dave", workspace="Dave's", tasks=True)
    server.create_operator("erin", workspace="Dave's")
    board = f"/boards/{ids['board_id']}/"
    away = watched_page(browser, through_proxy, "dave", board, live="board-live")
    expect_live(away, "board-live")
    same_document(away)
    card_id = ids["task_ids"][0]
    card = away.get_by_test_id(f"task-card-{card_id}")
    old_step = int(card.get_attribute("data-step-id"))
    new_step = ids["step_ids"][ids["step_ids"].index(old_step) + 1]
    old_head = away.get_by_test_id(f"kanban-column-{old_step}").get_by_test_id("kanban-column-head")
    old_count = int(old_head.get_attribute("data-count"))

    proxy.cut()
    expect_paused(away, "board-live")
    # Several retries fail, as in an outage of a few seconds: the wait after them stays short.
    proxy.wait_for_refused(5, timeout=30)

    other = watched_page(browser, server, "erin", board, live="board-live")
    other.get_by_test_id(f"task-card-{card_id}").get_by_test_id("task-move-right").click()
    expect(other.get_by_test_id(f"task-card-{card_id}")).to_have_attribute("data-step-id", str(new_step))
    expect(card).to_have_attribute("data-step-id", str(old_step))

    proxy.restore()
    expect_live(away, "board-live", timeout=BACK_WITHIN_MS)
    moved = away.get_by_test_id(f"kanban-column-{new_step}").get_by_test_id(f"task-card-{card_id}")
    expect(moved).to_be_visible()
    expect(away.get_by_test_id(f"task-card-{card_id}")).to_have_count(1)
    old_head = away.get_by_test_id(f"kanban-column-{old_step}").get_by_test_id("kanban-column-head")
    expect(old_head).to_have_attribute("data-count", str(old_count - 1))
    expect_same_document(away)

    # The columns it got back are live: a move made on it reaches the other operator.
    moved.get_by_test_id("task-move-left").click()
    expect(other.get_by_test_id(f"task-card-{card_id}")).to_have_attribute("data-step-id", str(old_step))
