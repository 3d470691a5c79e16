"""A profile's API key, set in the admin, is never sent back to a browser; the agent gets it, the page never does
(docs/decisions/operator.md#secrets-at-rest).

The operator types the key into the profile admin's password input and saves;
the change page then says the name is set, and neither it (after a reload
too) nor the profile's history holds the value. An agent started with the
profile repeats the key in a message, a diff and on stderr before it crashes:
the task page shows ``[secret]`` there, and the value is in no page, in no
text of the database, and in no line of the server's log (web process,
agentctl and agent, at DEBUG), while the file the agent wrote shows it had it.
"""

import secrets
import sqlite3
import sys
from pathlib import Path

from playwright.sync_api import expect

from testing_support.bridge.profiles import create_profile
from testing_support.browser import login

SERVER_ENV = {"LOG_LEVEL": "DEBUG", "KANDEV_AGENTCTL_LOG_LEVEL": "DEBUG"}
PROFILE = "Keyed mock agent"


def database_text(database: Path) -> str:
    connection = sqlite3.connect(database)
    try:
        return "\n".join(connection.iterdump())
    finally:
        connection.close()


def test_a_key_set_in_the_admin_reaches_the_agent_and_no_page_log_or_row(browser, server, fresh_database, tmp_path):
    key = f"sk-ant-e2e-{secrets.token_hex(16)}"
    ids = server.create_operator("vault", workspace="Vault", staff=True, tasks=True)
    profile_id = create_profile(
        server,
        workspace_id=ids["workspace_id"],
        name=PROFILE,
        agent_id="mock-agent",
        command=[sys.executable, "-m", "kandev_web.mock_agent"],
        env={},
        working_dir=str(tmp_path),
    )
    page = browser.new_context().new_page()
    change_page = f"/admin/agents/agentprofile/{profile_id}/change/"
    login(page, server, "vault", change_page)
    expect(page.get_by_test_id("secret-env-empty")).to_be_visible()
    page.get_by_test_id("secret-env-new-name").first.fill("MOCK_API_KEY")
    value = page.get_by_test_id("secret-env-new-value").first
    expect(value).to_have_attribute("type", "password")
    value.fill(key)
    page.locator("input[name=_continue]").click()

    row = page.locator("[data-testid=secret-env-row][data-secret-name=MOCK_API_KEY]")
    expect(row).to_have_attribute("data-secret-set", "true")
    expect(row.get_by_test_id("secret-env-state")).to_have_text("set")
    expect(row.get_by_test_id("secret-env-replace")).to_have_value("")
    assert key not in page.content()
    page.reload()
    expect(row).to_have_attribute("data-secret-set", "true")
    assert key not in page.content()
    page.goto(f"{server.url}/admin/agents/agentprofile/{profile_id}/history/")
    expect(page.locator("#change-history")).to_contain_text("Secrets")
    assert key not in page.content()

    page.goto(f"{server.url}/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    page.get_by_test_id("session-start-profile").select_option(label=PROFILE)
    page.get_by_test_id("session-start-prompt").fill("/e2e:echo-secret")
    page.get_by_test_id("session-start-submit").click()
    badge = page.get_by_test_id("task-sessions").get_by_test_id("session-state").first
    expect(badge).to_have_attribute("data-display-state", "failed")
    expect(page.get_by_test_id("session-stderr")).to_have_text("debug: calling the API with key=[secret]")
    said = page.locator("[data-testid=timeline-message][data-type=message][data-author=agent]")
    expect(said).to_contain_text("My key is [secret] today.")

    # The agent had it: it wrote it into its working directory.
    assert (tmp_path / "secret.txt").read_text() == key
    assert key not in page.content()
    page.reload()
    expect(page.get_by_test_id("session-stderr")).to_have_text("debug: calling the API with key=[secret]")
    assert key not in page.content()
    assert key not in database_text(fresh_database)
    server_log = (fresh_database.parent / "server.log").read_text()
    assert "agent stderr: debug: calling the API with key=[secret]" in server_log  # agentctl's log is in it
    assert key not in server_log
