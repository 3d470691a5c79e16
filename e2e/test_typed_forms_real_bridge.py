"""An MCP server's typed form, forwarded by the real Claude bridge, answered in the overlay.

The task's agent profile is the installed bridge, offline (``tests/bridge``'s
fake Messages API and denying proxy), and names one MCP server of its own
beside Kandev's (``AgentProfile.mcp_servers``): ``testing_support/bridge/forms_mcp_server.py``.
The scripted model calls its tool; the server asks a form with a boolean, an
integer from 1 to 5, an e-mail and a required field through MCP elicitation;
the bridge forwards it as ACP ``elicitation/create``. The operator answers in
the browser, where the overlay's own checks refuse what does not fit first;
the MCP server receives typed JSON, valid for the schema it asked with.
"""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from testing_support.bridge import BRIDGE_VERSIONS, find_bridge
from testing_support.bridge.fake_messages_api import DenyingProxy
from testing_support.bridge.forms import FINAL_TEXT, fake_api, forms_server, prompt, received_by_the_mcp_server
from testing_support.bridge.profiles import claude_bridge_environment, create_profile, kill_marked, wait_until_gone
from testing_support.browser import card, login, option

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}

#: The bridge starts, spawns the CLI, connects the MCP server and the fake answers: seconds.
AGENT_STEP_MS = 60_000


def control(page, question_id):
    return card(page, question_id).get_by_test_id("clarification-input")


def problem(page, question_id):
    return card(page, question_id).get_by_test_id("clarification-problem")


@pytest.mark.timeout(150)
@pytest.mark.parametrize("version", BRIDGE_VERSIONS)
def test_an_mcp_servers_typed_form_answered_in_the_browser_reaches_it_typed(browser, server, tmp_path, version):
    bridge = find_bridge(version)
    api = fake_api()
    marker = uuid.uuid4().hex
    workdir = tmp_path / "project"
    workdir.mkdir()
    with DenyingProxy() as proxy, api:
        try:
            username = f"mcp-forms-{version.replace('.', '-')}"
            ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
            create_profile(
                server,
                workspace_id=ids["workspace_id"],
                name=f"Claude bridge {version}",
                agent_id="claude-acp",
                command=bridge.argv,
                env=claude_bridge_environment(bridge, tmp_path, api=api, proxy=proxy, marker=marker),
                working_dir=str(workdir),
                mcp_servers=[forms_server()],
            )
            page = browser.new_context().new_page()
            login(page, server, username, f"/tasks/{ids['task_ids'][0]}/")
            expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
            page.get_by_test_id("session-start-profile").select_option(label=f"Claude bridge {version}")
            page.get_by_test_id("session-start-prompt").fill(prompt())
            page.get_by_test_id("session-start-submit").click()

            # The CLI may ask before it runs the MCP tool: granted once, as an operator would.
            overlay = page.get_by_test_id("clarification-overlay")
            pending_permission = page.locator("[data-testid=permission-card][data-status=pending]")
            expect(overlay.or_(pending_permission).first).to_be_visible(timeout=AGENT_STEP_MS)
            if pending_permission.count():
                pending_permission.locator("[data-testid=permission-option][data-kind=allow_once]").click()
            expect(overlay).to_have_attribute("data-source", "elicitation", timeout=AGENT_STEP_MS)

            cards = page.get_by_test_id("clarification-question-card")
            expect(cards).to_have_count(3)
            assert [cards.nth(i).get_attribute("data-question-id") for i in range(3)] == [
                "contact",
                "overwrite",
                "replicas",
            ]
            expect(card(page, "contact")).to_have_attribute("data-required", "true")
            expect(control(page, "contact")).to_have_attribute("type", "email")
            expect(card(page, "overwrite")).to_have_attribute("data-kind", "boolean")
            expect(card(page, "replicas")).to_have_attribute("data-kind", "integer")

            # Out of range and the required e-mail missing: refused in the page, nothing sent.
            page.get_by_test_id("clarification-step").nth(2).click()
            expect(control(page, "replicas")).to_have_attribute("max", "5")
            control(page, "replicas").fill("9")
            page.get_by_test_id("clarification-submit").click()
            expect(problem(page, "contact")).to_have_text("“Contact” needs an answer.")
            expect(problem(page, "replicas")).to_have_text("“Replicas” must be at most 5.")
            assert api.of_kind("after_tool_result") == []

            # The first question that does not fit is brought up.
            expect(card(page, "contact")).to_be_visible()
            control(page, "contact").fill("ops@example.com")
            page.get_by_test_id("clarification-step").nth(2).click()
            control(page, "replicas").fill("3")
            page.get_by_test_id("clarification-step").nth(1).click()
            expect(card(page, "overwrite").get_by_role("radio")).to_have_count(2)
            option(card(page, "overwrite"), "true").click()
            page.get_by_test_id("clarification-submit").click()

            # The same turn ends after the MCP server's tool returned what it received.
            sessions = page.get_by_test_id("task-sessions")
            expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=AGENT_STEP_MS)
            expect(overlay).to_have_count(0)
            agent = page.locator("[data-testid=timeline-message][data-author=agent]")
            expect(agent.filter(has_text=FINAL_TEXT)).to_have_count(1)
            assert received_by_the_mcp_server(api) == {
                "action": "accept",
                "content": {"contact": "ops@example.com", "overwrite": True, "replicas": 3},
                "valid": True,
            }

            page.get_by_test_id("session-stop").click()
            expect(sessions).to_have_attribute("data-agent-live", "false", timeout=AGENT_STEP_MS)
            assert wait_until_gone(marker) == {}, "processes outlived the stopped session"
            assert proxy.attempts == [], "the run tried to leave the machine"
        finally:
            kill_marked(marker)
