"""An agentctl killed under a live session: the task page offers to resume it, and the conversation comes back.

The demo's Mock agent profile keeps its sessions on disk (``KANDEV_MOCK_SESSION_DIR``
under ``KANDEV_VAR_DIR``) and advertises ACP ``session/resume``, as the Claude
bridge does.
"""

import os
import signal

from playwright.sync_api import expect

from testing_support.browser import agentctl_pid, fresh_task, start_agent

EARLIER = "Use PostgreSQL, not SQLite"


def test_a_session_whose_agentctl_was_killed_is_resumed_with_its_conversation(browser, server):
    page, ids = fresh_task(browser, server, "resumer")
    panel = page.get_by_test_id("task-sessions")

    start_agent(page, EARLIER)
    expect(panel).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(page.get_by_test_id("resume-session")).to_have_count(0)

    os.kill(agentctl_pid(server, ids["task_ids"][0]), signal.SIGKILL)
    expect(panel).to_have_attribute("data-session-state", "FAILED")
    resume = page.get_by_test_id("resume-session")
    expect(resume).to_be_visible()
    acp_session_id = resume.get_attribute("data-acp-session-id")
    assert acp_session_id

    resume.click()
    expect(page.get_by_test_id("timeline-message").filter(has_text="Resumed")).to_contain_text(
        f"Resumed the agent's session {acp_session_id}."
    )
    expect(panel).to_have_attribute("data-session-state", "WAITING_FOR_INPUT")
    expect(page.get_by_test_id("resume-session")).to_have_count(0)

    page.get_by_test_id("session-prompt-input").fill("/e2e:recall")
    page.get_by_test_id("session-prompt-submit").click()
    recalled = page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Earlier in this")
    expect(recalled).to_contain_text(f"Earlier in this session you said: “{EARLIER}”.")
