"""A web process killed mid-question: after a restart the question is still answerable."""

import os
import signal

from playwright.sync_api import expect

from .conftest import login, running_server, server_environ
from .elicitation_support import agent_said, option, start

ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_OWNER_HEARTBEAT_SECONDS": "0.5"}


def test_question_survives_a_killed_web_process(browser, fresh_database):
    env = server_environ(fresh_database, ENV)
    with running_server(env, fresh_database.parent / "first.log") as first:
        ids = first.create_operator("phoenix", workspace="Phoenix", tasks=True)
        task = f"/tasks/{ids['task_ids'][0]}/"
        page = browser.new_context().new_page()
        login(page, first, "phoenix", task)
        start(page, "elicit-single")
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
        # Only the web process dies; the agent and its agentctl keep waiting.
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait()

        with running_server(env, fresh_database.parent / "second.log") as second:
            page = browser.new_context().new_page()
            login(page, second, "phoenix", task)
            expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
            option(page, "Blue").click()
            page.get_by_test_id("clarification-submit").click()
            # The new process adopted the stream: the agent's answer is recorded by it.
            assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
            expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
