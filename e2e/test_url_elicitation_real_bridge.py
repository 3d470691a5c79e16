"""An MCP server's sign-in page, forwarded by the real Claude bridge 0.101.0, consented to in the browser.

The task's agent profile is the installed bridge, offline (``tests/bridge``'s
fake Messages API and denying proxy), with one MCP server of its own:
``testing_support/bridge/forms_mcp_server.py --url``. The scripted model calls
its ``sign_in`` tool; the server asks its client to open a page (MCP URL-mode
elicitation); the bridge forwards it as ACP ``elicitation/create`` in mode
``url``, because agentctl advertised ``url`` (both flags on here). The
operator sees the card and consents; the server then says the sign-in finished,
which reaches the page as "Sign-in finished"; the same turn ends.
"""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from testing_support.bridge import find_bridge
from testing_support.bridge.fake_messages_api import DenyingProxy
from testing_support.bridge.forms import FINAL_TEXT, fake_api, forms_server, prompt, received_by_the_mcp_server
from testing_support.bridge.forms_mcp_server import SIGN_IN_URL
from testing_support.bridge.profiles import claude_bridge_environment, create_profile, kill_marked, wait_until_gone
from testing_support.browser import login

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_FEATURES_ACP_URL_ELICITATION": "true"}

#: Bridge 0.65.0's CLI refuses URL mode itself.
VERSION = "0.101.0"
#: The bridge starts, spawns the CLI, connects the MCP server and the fake answers: seconds.
AGENT_STEP_MS = 60_000


@pytest.mark.timeout(150)
def test_an_mcp_servers_sign_in_consented_in_the_browser_then_finished(browser, server, tmp_path):
    bridge = find_bridge(VERSION)
    api = fake_api(url=True)
    marker = uuid.uuid4().hex
    workdir = tmp_path / "project"
    workdir.mkdir()
    with DenyingProxy() as proxy, api:
        try:
            ids = server.create_operator("mcp-sign-in", workspace="Sign-in's", tasks=True)
            create_profile(
                server,
                workspace_id=ids["workspace_id"],
                name=f"Claude bridge {VERSION}",
                agent_id="claude-acp",
                command=bridge.argv,
                env=claude_bridge_environment(bridge, tmp_path, api=api, proxy=proxy, marker=marker),
                working_dir=str(workdir),
                mcp_servers=[forms_server(url=True)],
            )
            page = browser.new_context().new_page()
            login(page, server, "mcp-sign-in", f"/tasks/{ids['task_ids'][0]}/")
            expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
            page.get_by_test_id("session-start-profile").select_option(label=f"Claude bridge {VERSION}")
            page.get_by_test_id("session-start-prompt").fill(prompt(url=True))
            page.get_by_test_id("session-start-submit").click()

            # The CLI may ask before it runs the MCP tool: granted once, as an operator would.
            overlay = page.get_by_test_id("clarification-overlay")
            pending_permission = page.locator("[data-testid=permission-card][data-status=pending]")
            expect(overlay.or_(pending_permission).first).to_be_visible(timeout=AGENT_STEP_MS)
            if pending_permission.count():
                pending_permission.locator("[data-testid=permission-option][data-kind=allow_once]").click()
            expect(overlay).to_have_attribute("data-mode", "url", timeout=AGENT_STEP_MS)

            expect(page.get_by_test_id("clarification-url-host")).to_have_text("auth.example.test")
            link = page.get_by_test_id("clarification-url-open")
            expect(link).to_have_attribute("href", SIGN_IN_URL)
            expect(link).to_have_attribute("rel", "noopener noreferrer")
            page.get_by_test_id("clarification-url-continue").click()

            sessions = page.get_by_test_id("task-sessions")
            expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
            expect(overlay).to_have_count(0)
            record = page.get_by_test_id("clarification-record")
            expect(record.get_by_test_id("clarification-record-settlement")).to_contain_text("Sign-in finished")
            agent = page.locator("[data-testid=timeline-message][data-author=agent]")
            expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)
            assert received_by_the_mcp_server(api) == {"action": "accept", "content": {}}

            page.get_by_test_id("session-stop").click()
            expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
            assert wait_until_gone(marker) == {}, "processes outlived the stopped session"
            assert proxy.attempts == [], "the run tried to leave the machine"
        finally:
            kill_marked(marker)
