"""A web process killed mid-question: after a restart the question is still answerable.

With the agent on this machine, and on an executor host over SSH.
"""

import os
import signal
import sqlite3

import psutil
from playwright.sync_api import expect

from testing_support.browser import agent_said, expect_agentctl_gone, login, option
from testing_support.browser import start_scenario as start
from testing_support.executor import ssh_executor_command, ssh_test_host
from testing_support.processes import running_server, server_environ

ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_OWNER_HEARTBEAT_SECONDS": "0.5"}


def ask_then_kill(browser, server, username: str, task: str) -> None:
    """Put a question to ``username`` through ``server``, then kill that web process only.

    The agent and its agentctl keep waiting for the answer.
    """
    page = browser.new_context().new_page()
    login(page, server, username, task)
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()


def answer_through(browser, server, username: str, task: str):
    """Answer the open question through ``server``; the page, once the agent has read the answer."""
    page = browser.new_context().new_page()
    login(page, server, username, task)
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    option(page, "Blue").click()
    page.get_by_test_id("clarification-submit").click()
    # The new process adopted the stream: the agent's answer is recorded by it.
    assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
    expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    return page


def test_question_survives_a_killed_web_process(browser, fresh_database):
    env = server_environ(fresh_database, ENV)
    with running_server(env, fresh_database.parent / "first.log") as first:
        ids = first.create_operator("phoenix", workspace="Phoenix", tasks=True)
        task = f"/tasks/{ids['task_ids'][0]}/"
        ask_then_kill(browser, first, "phoenix", task)

        with running_server(env, fresh_database.parent / "second.log") as second:
            page = answer_through(browser, second, "phoenix", task)
            # agentctl was the dead process's child; the adopter still notices when it goes.
            with sqlite3.connect(fresh_database) as db:
                [(pid,)] = db.execute("SELECT pid FROM agent_sessions_agentexecution").fetchall()
            os.kill(pid, signal.SIGKILL)
            expect_agentctl_gone(page)


def test_an_adopted_execution_on_an_ssh_executor_is_reached_through_its_own_tunnel_and_followed(
    browser, fresh_database, tmp_path
):
    env = server_environ(fresh_database, ENV)
    host = ssh_test_host(workdir_root=str(tmp_path / "workdirs"))
    with running_server(env, fresh_database.parent / "first-ssh.log") as first:
        ids = first.create_operator("hermes", workspace="Hermes", tasks=True)
        first.manage(*ssh_executor_command("gpu-ssh", host), "--assign", "Mock agent", "--workspace", "Hermes")
        task = f"/tasks/{ids['task_ids'][0]}/"
        ask_then_kill(browser, first, "hermes", task)  # its SSH connection goes with it; agentctl stays

        with running_server(env, fresh_database.parent / "second-ssh.log") as second:
            page = answer_through(browser, second, "hermes", task)
            with sqlite3.connect(fresh_database) as db:
                [(pid,)] = db.execute("SELECT pid FROM agent_sessions_agentexecution WHERE launch_id LIKE 'ssh-%'")
            # Its sshd session went with the first process; agentctl stayed, and is no child of the second.
            assert second.process.pid not in [parent.pid for parent in psutil.Process(pid).parents()]
            os.kill(pid, signal.SIGKILL)
            expect_agentctl_gone(page)
