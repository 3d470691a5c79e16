"""A web process killed mid-question: after a restart the question is still answerable.

With the agent on this machine, and on an executor host.
"""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import expect

from kandev_web.executor.testing import running_executor

from .conftest import ROOT, login, running_server, server_environ
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
            # agentctl was the dead process's child; the adopter still notices when it goes.
            with sqlite3.connect(fresh_database) as db:
                [(pid,)] = db.execute("SELECT pid FROM agent_sessions_agentexecution").fetchall()
            os.kill(pid, signal.SIGKILL)
            expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
            expect(page.get_by_test_id("session-error")).to_contain_text("stopped unexpectedly")


def test_an_adopted_execution_on_an_executor_host_is_still_followed_to_its_end(browser, fresh_database, tmp_path):
    env = server_environ(fresh_database, ENV)
    with running_executor(tmp_path / "workdirs", log=tmp_path / "executor.log") as executor, \
            running_server(env, fresh_database.parent / "first-remote.log") as first:
        ids = first.create_operator("atlas", workspace="Atlas", tasks=True)
        subprocess.run(
            [sys.executable, "manage.py", "executor", "gpu-1", executor.address.url,
             "--assign", "Mock agent", "--workspace", "Atlas"],
            cwd=ROOT, env={**env, "KANDEV_EXECUTOR_TOKEN": executor.address.token}, check=True, capture_output=True,
        )
        task = f"/tasks/{ids['task_ids'][0]}/"
        page = browser.new_context().new_page()
        login(page, first, "atlas", task)
        start(page, "elicit-single")
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait()

        with running_server(env, fresh_database.parent / "second-remote.log") as second:
            page = browser.new_context().new_page()
            login(page, second, "atlas", task)
            option(page, "Blue").click()
            page.get_by_test_id("clarification-submit").click()
            assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
            # The adopting process follows agentctl through the executor too.
            for agentctl in executor_children(executor.process.pid):
                os.kill(agentctl, signal.SIGKILL)
            expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
            expect(page.get_by_test_id("session-error")).to_contain_text("stopped unexpectedly")


def executor_children(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert children, "the executor started no agentctl"
    return [int(child) for child in children]
