"""No agent process outlives its purpose: counted before and after, over real servers.

- Deleting a task stops its agent (agentctl and the agent gone), and its page,
  open in another tab, disables what would act on it.
- A web process started after the only one was killed (-9) adopts the agents
  it left running at once, with nobody opening a page: what they do next is
  recorded, and an agentctl whose agent died ends after its grace; one it
  cannot adopt is stopped.
- An agentctl no web process holds for its unheld timeout stops its agent and
  exits; a web process started later marks the session stopped, saying why.
"""

import os
import signal
import sqlite3
import time
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import expect

from testing_support.browser import card_titled, fresh_task, login, open_board, start_scenario
from testing_support.processes import running_server, server_environ

GRACE = {"KANDEV_AGENTCTL_EXIT_GRACE": "2s", "KANDEV_OWNER_HEARTBEAT_SECONDS": "0.5"}
SERVER_ENV = GRACE


def agent_processes(server_pid: int) -> list[psutil.Process]:
    """The agentctl and agent processes a web process started (its descendants)."""
    return psutil.Process(server_pid).children(recursive=True)


def until(condition, what: str, seconds: float = 30.0):
    """Poll ``condition`` (processes and rows, which no page shows) until it holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds}s: {what}")


def gone(processes: list[psutil.Process]) -> bool:
    return not any(process.is_running() and process.status() != psutil.STATUS_ZOMBIE for process in processes)


def test_deleting_a_task_stops_its_agent_and_its_open_page_says_so(browser, server):
    page, ids = fresh_task(browser, server, "lena")
    start_scenario(page, "permission-flow")
    expect(page.get_by_test_id("permission-card")).to_have_attribute("data-status", "pending")
    expect(page.get_by_test_id("permission-option").first).to_be_visible()
    expect(page.get_by_test_id("session-stop")).to_be_visible()
    agents = agent_processes(server.process.pid)
    assert len(agents) >= 2, "agentctl and its agent run"

    board = open_board(browser, server, ids, "lena")
    board.once("dialog", lambda dialog: dialog.accept())
    title = page.get_by_test_id("task-title").inner_text()
    card_titled(board, title).get_by_test_id("task-delete").click()

    # The open tab, live: nothing left to act on the deleted task with.
    expect(page.get_by_test_id("task-deleted-notice")).to_be_visible()
    expect(page.get_by_test_id("composer")).to_have_attribute("data-mode", "deleted")
    expect(page.get_by_test_id("composer-deleted")).to_have_text(
        "This task was deleted, so nothing more can be sent to its agent."
    )
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-agent-live", "false")
    expect(page.get_by_test_id("session-stop")).to_have_count(0)
    expect(page.get_by_test_id("session-cancel")).to_have_count(0)
    expect(page.get_by_test_id("permission-option").first).to_be_hidden()
    expect(page.get_by_test_id("permission-dismiss")).to_be_hidden()
    expect(page.get_by_test_id("session-prompt-input")).to_have_count(0)
    expect(page.get_by_test_id("session-start-submit")).to_have_count(0)

    until(lambda: gone(agents), "agentctl and the agent of the deleted task exited", 20)
    assert agent_processes(server.process.pid) == []


@pytest.fixture
def own_database(fresh_sqlite) -> Path:
    """A database of this test's own: the module's server must not adopt what the test leaves behind."""
    return fresh_sqlite


def orphan_an_agent(browser, server, username: str) -> tuple[psutil.Process, psutil.Process]:
    """Start an agent on a new task of ``server``, then kill ``server`` -9: its agentctl and agent, left running."""
    ids = server.create_operator(username, workspace=username.title(), tasks=True)
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{ids['task_ids'][0]}/")
    start_scenario(page, "simple-message")
    expect(page.get_by_test_id("session-prompt-input")).to_be_visible()
    page.context.close()
    [agentctl] = [p for p in agent_processes(server.process.pid) if p.parent().pid == server.process.pid]
    [agent] = agentctl.children()
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    return agentctl, agent


def test_a_restarted_web_process_adopts_the_agents_left_running_with_no_page_open(browser, own_database):
    env = server_environ(own_database, GRACE)
    # The second server inside the first's block: leaving that block ends the
    # first's process group, its agentctl included, as a terminal's Ctrl+C would.
    with running_server(env, own_database.parent / "before.log") as first:
        agentctl, agent = orphan_an_agent(browser, first, "otto")
        assert agentctl.is_running(), "agents outlive a killed web process"
        assert agent.is_running(), "agents outlive a killed web process"

        with running_server(env, own_database.parent / "after.log") as second:
            # Nobody connects to the new process: it adopts the execution on its own.
            owner = until(lambda: execution(own_database)["owner"], "the execution has an owner")
            until(
                lambda: f":{second.process.pid}:" in execution(own_database)["owner"],
                f"the new web process adopted the execution (owner was {owner})",
            )
            # What the agent does next reaches the records through the adopter.
            agent.kill()
            until(lambda: session_state(own_database) == "FAILED", "the adopter recorded the agent's death")
            until(lambda: gone([agentctl, agent]), "agentctl ended after its agent, within its grace", 20)
            assert "signal 9" in session_error(own_database)


def test_an_orphan_that_cannot_be_adopted_is_stopped(browser, own_database):
    """Its agentctl refuses the stored token: the new process ends it rather than leave it running."""
    env = server_environ(own_database, GRACE)
    with running_server(env, own_database.parent / "stray-before.log") as first:
        agentctl, agent = orphan_an_agent(browser, first, "stray")
        with sqlite3.connect(own_database) as db:
            db.execute("UPDATE agent_sessions_agentexecution SET token = 'not-its-token'")

        with running_server(env, own_database.parent / "stray-after.log"):
            until(lambda: gone([agentctl, agent]), "the agentctl nobody can adopt was stopped, its agent too")
            until(lambda: session_state(own_database) == "FAILED", "its session failed")


def test_agents_nobody_holds_end_and_a_later_web_process_says_they_were_stopped(browser, own_database):
    """The only web process was killed and stays down: its agentctl stops its agent and exits on its own."""
    env = server_environ(own_database, {**GRACE, "KANDEV_AGENTCTL_UNHELD_TIMEOUT": "2s"})
    with running_server(env, own_database.parent / "unheld-before.log") as first:
        agentctl, agent = orphan_an_agent(browser, first, "vela")
        until(lambda: gone([agentctl, agent]), "agentctl nobody held ended, its agent with it", 30)
        assert execution(own_database)["ended_at"] is None, "nobody was there to record it"

        with running_server(env, own_database.parent / "unheld-after.log"):
            until(lambda: session_state(own_database) == "CANCELLED", "the session was marked stopped")
            with sqlite3.connect(own_database) as db:
                said = [row[0] for row in db.execute("SELECT content FROM agent_sessions_message")]
            assert "The agent was stopped: no web server held it for 2s." in said
            assert session_error(own_database) == ""


def execution(database: Path) -> dict:
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT owner, pid, ended_at FROM agent_sessions_agentexecution").fetchone()
    return dict(row) if row else {"owner": "", "pid": None, "ended_at": None}


def session_state(database: Path) -> str:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT state FROM agent_sessions_tasksession").fetchone()[0]


def session_error(database: Path) -> str:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT error FROM agent_sessions_tasksession").fetchone()[0]
