"""Several machines' profile: PostgreSQL, Redis, two web processes, an executor host.

The operator's tab on one process answers an elicitation whose agent stream
the other process holds; exactly one answer reaches the agent, and the other
process's tabs follow live. Then the same with the agent on an executor host.
"""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from playwright.sync_api import expect

from kandev_web.executor.testing import running_executor

from .conftest import ROOT, login, running_server, server_environ
from .elicitation_support import agent_said, expect_agentctl_gone, option, start
from .processes import free_port


@pytest.fixture(scope="module")
def servers(postgres_url, redis_url, tmp_path_factory):
    logs = tmp_path_factory.mktemp("scale-out")
    env = server_environ(logs / "unused.sqlite3", {
        "DATABASE_URL": postgres_url,
        "REDIS_URL": redis_url,
        "KANDEV_CHANNEL_PREFIX": f"scale-{uuid.uuid4().hex[:8]}",
        "KANDEV_FEATURES_ACP_ELICITATION": "true",
        # Both web processes run on this one machine, so agentctl on loopback reaches them.
        "KANDEV_SILENCED_CHECKS": "kandev.E002",
    })
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with running_server(env, logs / "a.log") as a, running_server(env, logs / "b.log") as b:
        yield a, b


def test_an_answer_through_the_other_process_reaches_the_agent_once(browser, servers):
    a, b = servers
    ids = a.create_operator("scaler", workspace="Scale", tasks=True)
    task = f"/tasks/{ids['task_ids'][0]}/"
    on_a = browser.new_context().new_page()
    login(on_a, a, "scaler", task)
    on_b = browser.new_context().new_page()
    login(on_b, b, "scaler", task)
    expect(on_b.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    start(on_a, "elicit-single")  # process A spawns agentctl and holds its stream
    for page in (on_a, on_b):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()

    option(on_b, "Red").click()
    on_b.get_by_test_id("clarification-submit").click()
    # B's socket delivered it, through a connection of its own to the agentctl A holds.
    expect(on_b.locator("[data-testid=answer-outcomes] [data-outcome=delivered]")).to_have_count(1)
    # A's tab follows live.
    expect(on_a.get_by_test_id("clarification-overlay")).to_have_count(0)
    for page in (on_a, on_b):
        assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}
        expect(page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")).to_have_count(1)
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")


@pytest.fixture(scope="module")
def executor_host(servers, tmp_path_factory):
    """A kandev-executor as on another machine: its own environment, agentctls on another address."""
    a, _ = servers
    root = tmp_path_factory.mktemp("executor-host")
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    with running_executor(root / "workdirs", agentctl_host="127.0.0.2", env=env, log=root / "executor.log") as running:
        ids = a.create_operator("remote", workspace="Executors", tasks=True)
        a.register_executor("gpu-1", running.address.url, running.address.token, workspace="Executors")
        yield running, ids["task_ids"][0]


def execution_row(postgres_url, task_id):
    with psycopg.connect(postgres_url) as db:
        return db.execute(
            "SELECT e.url, e.pid, e.launch_id FROM agent_sessions_agentexecution e"
            " JOIN agent_sessions_tasksession s ON s.id = e.session_id WHERE s.task_id = %s",
            (task_id,),
        ).fetchone()


def parent_pid(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])


def test_an_agent_on_an_executor_host_is_answered_through_either_web_process(
    browser, servers, executor_host, postgres_url
):
    a, b = servers
    executor, task_id = executor_host
    on_a = browser.new_context().new_page()
    login(on_a, a, "remote", f"/tasks/{task_id}/")
    on_b = browser.new_context().new_page()
    login(on_b, b, "remote", f"/tasks/{task_id}/")
    expect(on_b.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    start(on_a, "elicit-single")
    for page in (on_a, on_b):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
        expect(page.get_by_test_id("session-executor")).to_have_attribute("data-executor", "gpu-1")
    url, pid, launch_id = execution_row(postgres_url, task_id)
    assert urlsplit(url).hostname == "127.0.0.2" and launch_id
    assert parent_pid(pid) == executor.process.pid  # started by the executor, not by a web process
    assert (executor.workdir_root / f"task-{task_id}").is_dir()

    option(on_b, "Red").click()
    on_b.get_by_test_id("clarification-submit").click()
    for page in (on_a, on_b):
        assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}
        expect(page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")).to_have_count(1)

    # The executor reports agentctl's end, however it ends: both tabs see the session fail.
    os.kill(pid, signal.SIGKILL)
    for page in (on_a, on_b):
        expect_agentctl_gone(page)
        expect(page.get_by_test_id("session-executor")).to_have_count(0)


def test_an_executor_host_that_is_down_fails_the_session_saying_so(browser, servers):
    a, _ = servers
    ids = a.create_operator("offline", workspace="Offline", tasks=True)
    down = f"ws://127.0.0.1:{free_port()}/executor/stream"
    a.register_executor("gpu-down", down, "unused", workspace="Offline")
    page = browser.new_context().new_page()
    login(page, a, "offline", f"/tasks/{ids['task_ids'][0]}/")
    start(page, "elicit-single")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error")).to_contain_text(
        f"The executor host at {down} could not start the agent"
    )
