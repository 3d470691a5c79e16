"""A value typed into a credential-looking field reaches the agent and nothing else
(``docs/decisions/operator.md#secrets``).

The operator answers an MCP server's ``apiKey`` form in one tab while a second
tab watches. The agent runs behind ``e2e/acp_tap.py``, whose log of the ACP
frames (outside the web app) shows what the agent received. The secret must
not be in either tab's page (live, and after a reload), in any text of the
server's database, or in the server's log (web process, agentctl and agent),
which runs at DEBUG level here.
"""

import json
import secrets
import sqlite3
from pathlib import Path

from playwright.sync_api import expect

from testing_support.browser import login

from .tapped import PROFILE, create_tapped_profile

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "LOG_LEVEL": "DEBUG"}

MASK = "•••• (sent, not stored)"


def database_text(database: Path) -> str:
    """Every row of every table, as SQL text: what a dump of the database would hold."""
    connection = sqlite3.connect(database)
    try:
        return "\n".join(connection.iterdump())
    finally:
        connection.close()


def what_the_agent_received(tap_log: Path) -> list:
    """The results the client (agentctl) wrote back to the agent's ``elicitation/create`` requests."""
    frames = [json.loads(line) for line in tap_log.read_text().splitlines()]
    requests = {
        entry["frame"]["id"]
        for entry in frames
        if entry["direction"] == "agent->client" and (entry["frame"] or {}).get("method") == "elicitation/create"
    }
    return [
        entry["frame"]["result"]
        for entry in frames
        if entry["direction"] == "client->agent"
        and "result" in (entry["frame"] or {})
        and entry["frame"].get("id") in requests
    ]


def test_a_secret_answer_reaches_the_agent_and_is_never_shown_stored_or_logged(
    browser, server, fresh_database, tmp_path
):
    secret = f"sk-live-{secrets.token_hex(12)}"
    tap_log = tmp_path / "acp.jsonl"
    ids = server.create_operator("keeper", workspace="Keeper", tasks=True)
    create_tapped_profile(server, workspace_id=ids["workspace_id"], log=tap_log, working_dir=tmp_path)
    task_url = f"/tasks/{ids['task_ids'][0]}/"
    pages = []
    for _ in range(2):
        page = browser.new_context().new_page()
        login(page, server, "keeper", task_url)
        expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
        pages.append(page)
    answering, _watching = pages

    answering.get_by_test_id("session-start-profile").select_option(label=PROFILE)
    answering.get_by_test_id("session-start-prompt").fill("/e2e:elicit-secret")
    answering.get_by_test_id("session-start-submit").click()
    for page in pages:
        expect(page.get_by_test_id("clarification-sensitive-warning")).to_be_visible()
    field = answering.get_by_test_id("clarification-input")
    expect(field).to_have_attribute("type", "password")
    field.fill(secret)
    answering.get_by_test_id("clarification-submit").click()

    for page in pages:
        expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
        record = page.get_by_test_id("clarification-record")
        expect(record).to_have_attribute("data-status", "answered")
        expect(record.get_by_test_id("clarification-record-answer")).to_have_text(MASK)
        expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
        said = page.locator("[data-testid=timeline-message][data-type=message][data-author=agent]")
        expect(said).to_contain_text("came back: accept")
    # The agent got the value, verbatim.
    assert what_the_agent_received(tap_log) == [{"action": "accept", "content": {"apiKey": secret}}]

    for page in pages:
        assert secret not in page.content()
        page.reload()
        expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
        expect(page.get_by_test_id("clarification-record-answer")).to_have_text(MASK)
        assert secret not in page.content()
    assert secret not in database_text(fresh_database)
    server_log = (fresh_database.parent / "server.log").read_text()
    assert "elicitation" in server_log  # the log does say what happened
    assert secret not in server_log
