"""URL-mode elicitation in the browser, with features.acpElicitation and features.acpUrlElicitation on for this module.

The mock agent (scenario ``elicit-url``) asks the operator to open a page, as
the Claude bridge 0.101.0 forwards an MCP server's sign-in, and 1.5 s after the
answer sends ``elicitation/complete`` for it. It runs behind ``e2e/acp_tap.py``
where what agentctl advertised matters.
"""

import json
from pathlib import Path

from playwright.sync_api import expect

from testing_support.browser import AGENT_STARTS_MS, agent_said, fresh_task, login, open_task
from testing_support.browser import start_scenario as start

from .tapped import create_tapped_profile, start_tapped
from .test_accessibility import assert_accessible

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_FEATURES_ACP_URL_ELICITATION": "true"}

URL = "https://auth.example.test/authorize?x=1"


def client_capabilities(tap_log: Path) -> dict:
    """What agentctl advertised in ``initialize``, as the agent read it."""
    for line in tap_log.read_text().splitlines():
        entry = json.loads(line)
        frame = entry["frame"] or {}
        if entry["direction"] == "client->agent" and frame.get("method") == "initialize":
            return frame["params"]["clientCapabilities"]
    raise AssertionError("no initialize in the tap's log")


def test_the_card_shows_the_host_opens_only_on_a_click_and_reads_sign_in_finished(browser, server, tmp_path):
    tap_log = tmp_path / "acp.jsonl"
    ids = server.create_operator("url-ann", workspace="Ann's", tasks=True)
    create_tapped_profile(server, workspace_id=ids["workspace_id"], log=tap_log, working_dir=tmp_path)
    page = browser.new_context().new_page()
    login(page, server, "url-ann", f"/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_tapped(page, "/e2e:elicit-url")

    overlay = page.get_by_test_id("clarification-overlay")
    expect(overlay).to_have_attribute("data-mode", "url", timeout=AGENT_STARTS_MS)
    assert client_capabilities(tap_log)["elicitation"] == {"form": {}, "url": {}}
    expect(page.get_by_test_id("clarification-requester")).to_contain_text("Tapped mock agent asks")
    expect(page.get_by_test_id("clarification-url-message")).to_have_text("Please authorize keysrv in your browser.")
    expect(page.get_by_test_id("clarification-url")).to_contain_text(URL)
    expect(page.get_by_test_id("clarification-url-host")).to_have_text("auth.example.test")
    link = page.get_by_test_id("clarification-url-open")
    expect(link).to_have_attribute("href", URL)
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_text("Open auth.example.test")
    # Nothing opened it on its own: this page is the context's only one.
    assert len(page.context.pages) == 1
    # The operator's click opens it, in a tab of its own that cannot reach this one.
    # (The sign-in server is the test's: nothing leaves the machine.)
    page.context.route(
        f"{URL.split('?')[0]}**", lambda route: route.fulfill(body="<p>sign in</p>", content_type="text/html")
    )
    with page.context.expect_page() as opened:
        link.click()
    sign_in = opened.value
    sign_in.wait_for_load_state()
    assert sign_in.url == URL
    assert sign_in.evaluate("[window.opener, document.referrer]") == [None, ""]
    sign_in.close()
    expect(overlay).to_be_visible()  # opening is not answering

    page.get_by_test_id("clarification-url-continue").click()
    assert agent_said(page, "Answer:") == {"action": "accept"}
    expect(overlay).to_have_count(0)
    record = page.get_by_test_id("clarification-record")
    expect(record).to_have_attribute("data-mode", "url")
    expect(record).to_have_attribute("data-status", "answered")
    settlement = record.get_by_test_id("clarification-record-settlement")
    expect(settlement).to_contain_text("Sign-in finished")
    expect(settlement).to_have_attribute("data-reason", "sign_in_finished")
    expect(record.get_by_test_id("clarification-record-answer")).to_have_text("Signed in")
    # The address is on the card only, never in the timeline.
    assert "auth.example.test" not in record.inner_text()


def test_decline_is_skip(browser, server):
    page, _ = fresh_task(browser, server, "url-decline")
    start(page, "elicit-url")
    page.get_by_test_id("clarification-url-decline").click()
    assert agent_said(page, "Answer:") == {"action": "decline"}
    record = page.get_by_test_id("clarification-record")
    expect(record).to_have_attribute("data-status", "rejected")
    # The completion the agent sent anyway names a finished request: ignored.
    expect(record.get_by_test_id("clarification-record-answer")).to_have_text("Skipped")


def test_the_inbox_shows_the_same_card(browser, server):
    page, _ = fresh_task(browser, server, "url-inbox")
    inbox = browser.new_context().new_page()
    login(inbox, server, "url-inbox", "/inbox/")
    expect(inbox.get_by_test_id("inbox-live")).to_have_attribute("data-live", "connected")
    start(page, "elicit-url")
    card = inbox.get_by_test_id("clarification-url-request")
    expect(card).to_have_attribute("data-host", "auth.example.test", timeout=AGENT_STARTS_MS)
    expect(inbox.get_by_test_id("clarification-url-open")).to_have_attribute("rel", "noopener noreferrer")
    inbox.get_by_test_id("clarification-url-continue").click()
    assert agent_said(page, "Answer:") == {"action": "accept"}
    expect(card).to_have_count(0)


def test_an_http_or_javascript_address_is_refused_with_a_sentence(browser, server):
    for number, (url, sentence) in enumerate(
        [
            ("http://example.com/login", "only https is opened"),
            ("javascript:alert(document.domain)", "it was not an https address"),
        ]
    ):
        page, _ = fresh_task(browser, server, f"url-refused-{number}")
        start(page, f"elicit-url {url}")
        assert agent_said(page, "Answer:") == {"action": "decline"}
        notice = page.get_by_test_id("url-refused-notice")
        expect(notice).to_contain_text("The agent asked you to open a page, and kandev declined it")
        expect(notice).to_contain_text(sentence)
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
        expect(page.get_by_test_id("clarification-record")).to_have_count(0)
        # The prompt that asked for it shows it as text; no link anywhere leads there.
        expect(page.locator("a[href^='http://example.com'], a[href^='javascript:']")).to_have_count(0)


def test_the_card_is_accessible_in_both_schemes(browser, server):
    page, _ = fresh_task(browser, server, "url-axe")
    start(page, "elicit-url")
    expect(page.get_by_test_id("clarification-url-request")).to_be_visible(timeout=AGENT_STARTS_MS)
    assert_accessible(page)


def test_answered_from_the_board_s_panel(browser, server):
    ids = server.create_operator("url-board", workspace="Board's", tasks=True)
    task_id = ids["task_ids"][0]
    task = open_task(browser, server, "url-board", task_id)
    board = browser.new_context().new_page()
    login(board, server, "url-board", f"/boards/{ids['board_id']}/")
    expect(board.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    start(task, "elicit-url")
    card = board.get_by_test_id(f"task-card-{task_id}")
    expect(card).to_have_attribute("data-pending-action", "clarification", timeout=AGENT_STARTS_MS)
    card.get_by_test_id("task-answer").click()
    panel = board.get_by_test_id("answer-panel")
    expect(panel.get_by_test_id("clarification-overlay")).to_have_attribute("data-mode", "url")
    expect(panel.get_by_test_id("clarification-url-host")).to_have_text("auth.example.test")
    panel.get_by_test_id("clarification-url-continue").click()
    assert agent_said(task, "Answer:") == {"action": "accept"}
    expect(task.get_by_test_id("clarification-record-settlement")).to_contain_text("Sign-in finished")


def test_a_sign_in_finished_before_anyone_answered_leaves_every_page(browser, server):
    ids = server.create_operator("url-elsewhere", workspace="Elsewhere's", tasks=True)
    task = open_task(browser, server, "url-elsewhere", ids["task_ids"][0])
    inbox = browser.new_context().new_page()
    login(inbox, server, "url-elsewhere", "/inbox/")
    expect(inbox.get_by_test_id("inbox-live")).to_have_attribute("data-live", "connected")
    start(task, "elicit-url-finished-elsewhere")
    expect(task.get_by_test_id("clarification-url-request")).to_be_visible(timeout=AGENT_STARTS_MS)
    expect(inbox.get_by_test_id("clarification-url-request")).to_be_visible()
    # Nobody answers: the agent's completion withdraws it everywhere, saying why.
    assert agent_said(task, "Answer:") == {"action": "cancel"}
    for page in (task, inbox):
        expect(page.get_by_test_id("clarification-url-request")).to_have_count(0)
    expect(task.get_by_test_id("clarification-record-settlement")).to_contain_text("Sign-in finished")
    expect(inbox.get_by_test_id("inbox-item-left")).to_contain_text("Sign-in finished")
