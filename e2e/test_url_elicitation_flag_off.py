"""With features.acpUrlElicitation off and form elicitation on, url is not advertised and a URL request is declined.

Nobody is shown it, and nothing is said: an agent told the client has no URL
mode sends none on purpose (the Claude bridge cancels its MCP server's request).
"""

import json

from playwright.sync_api import expect

from testing_support.browser import agent_said, login

from .tapped import create_tapped_profile, start_tapped
from .test_url_elicitation import client_capabilities

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def test_url_is_not_advertised_and_a_url_request_is_declined_unseen(browser, server, tmp_path):
    tap_log = tmp_path / "acp.jsonl"
    ids = server.create_operator("url-off", workspace="Off's", tasks=True)
    create_tapped_profile(server, workspace_id=ids["workspace_id"], log=tap_log, working_dir=tmp_path)
    page = browser.new_context().new_page()
    login(page, server, "url-off", f"/tasks/{ids['task_ids'][0]}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_tapped(page, "/e2e:elicit-url")

    assert agent_said(page, "Answer:") == {"action": "decline"}
    assert client_capabilities(tap_log) == {"_meta": {"terminal_output": True}, "elicitation": {"form": {}}}
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    expect(page.get_by_test_id("clarification-record")).to_have_count(0)
    expect(page.get_by_test_id("url-refused-notice")).to_have_count(0)
    frames = [json.loads(line)["frame"] or {} for line in tap_log.read_text().splitlines()]
    assert any(frame.get("method") == "elicitation/complete" for frame in frames)  # sent, and ignored
