"""Several machines' profile: PostgreSQL, Redis, two web processes, an executor host over SSH.

The operator's tab on one process answers an elicitation whose agent stream
the other process holds; exactly one answer reaches the agent, and the other
process's tabs follow live. Then the same with the agent on an executor host
reached over SSH (the real sshd scripts/test runs): its agentctl on the host's
loopback, each web process tunnelling to it; a kill -9 of it, an unreachable
host and a host showing another key each fail the session saying so.
"""

import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import psycopg
import pytest
from playwright.sync_api import expect

from testing_support.browser import agent_said, expect_agentctl_gone, login, option
from testing_support.browser import start_scenario as start
from testing_support.executor import ssh_executor_command, ssh_test_host
from testing_support.processes import free_port, two_web_processes


@pytest.fixture(scope="module")
def servers(postgres_url, redis_url, tmp_path_factory):
    logs = tmp_path_factory.mktemp("scale-out")
    with two_web_processes(postgres_url, redis_url, logs, {"KANDEV_FEATURES_ACP_ELICITATION": "true"}) as both:
        yield both


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
        expect(
            page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")
        ).to_have_count(1)
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")


@pytest.fixture(scope="module")
def ssh_host(servers, tmp_path_factory):
    """The executor host over SSH: the real sshd scripts/test runs, its agents' directories in a temp dir."""
    a, _ = servers
    host = ssh_test_host(workdir_root=str(tmp_path_factory.mktemp("ssh-host") / "workdirs"))
    a.create_operator("remote", workspace="Executors", tasks=True)
    register_ssh_executor(a, "gpu-1", host, workspace="Executors")
    return host


def register_ssh_executor(server, name, host, *, workspace, **changes):
    """``manage.py executor NAME --ssh ...`` for that workspace's Mock agent."""
    command = ssh_executor_command(name, replace(host, **changes))
    server.manage(*command, "--assign", "Mock agent", "--workspace", workspace)


def task_of(server, username, workspace):
    return server.create_operator(username, workspace=workspace, tasks=True)["task_ids"][0]


def execution_row(postgres_url, task_id):
    with psycopg.connect(postgres_url) as db:
        return db.execute(
            "SELECT e.url, e.pid, e.launch_id FROM agent_sessions_agentexecution e"
            " JOIN agent_sessions_tasksession s ON s.id = e.session_id WHERE s.task_id = %s",
            (task_id,),
        ).fetchone()


def test_an_agent_on_an_ssh_executor_is_answered_through_either_web_process_over_its_tunnel(
    browser, servers, ssh_host, postgres_url
):
    a, b = servers
    task_id = task_of(a, "remote", "Executors")
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
    agentctl = psutil.Process(pid)
    # Started by sshd, not by a web process; listening on the host's loopback only.
    assert any(parent.name().startswith("sshd") for parent in agentctl.parents())
    assert launch_id == f"ssh-{pid}"
    listening = {c.laddr for c in agentctl.net_connections() if c.status == psutil.CONN_LISTEN}
    assert listening == {(urlsplit(url).hostname, urlsplit(url).port)}
    assert urlsplit(url).hostname == "127.0.0.1"
    # Each web process reaches it through its SSH connection: only sshd connects to that port.
    peers = {c.pid for c in psutil.net_connections("tcp") if c.raddr and c.raddr.port == urlsplit(url).port and c.pid}
    assert peers
    assert all(psutil.Process(peer).name().startswith("sshd") for peer in peers)
    assert (Path(ssh_host.workdir_root) / f"task-{task_id}").is_dir()

    # B does not own the stream: its answer goes through B's own tunnel.
    option(on_b, "Red").click()
    on_b.get_by_test_id("clarification-submit").click()
    for page in (on_a, on_b):
        assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}
        expect(
            page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")
        ).to_have_count(1)

    # A kill -9 of agentctl on the host ends its SSH process: both tabs see the session fail.
    os.kill(pid, signal.SIGKILL)
    for page in (on_a, on_b):
        expect_agentctl_gone(page)
        expect(page.get_by_test_id("session-executor")).to_have_count(0)


def test_an_unreachable_ssh_executor_fails_the_session_saying_so(browser, servers, ssh_host):
    a, _ = servers
    task_id = task_of(a, "offline", "Offline")
    port = free_port()
    register_ssh_executor(a, "gpu-down", ssh_host, workspace="Offline", port=port)
    page = browser.new_context().new_page()
    login(page, a, "offline", f"/tasks/{task_id}/")
    start(page, "elicit-single")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error")).to_contain_text(
        f"The executor host ssh://{ssh_host.user}@{ssh_host.host}:{port} could not be reached over SSH"
    )


def test_an_ssh_executor_showing_another_host_key_is_refused_saying_so(browser, servers, ssh_host, tmp_path):
    a, _ = servers
    task_id = task_of(a, "impostor", "Impostor")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other = (tmp_path / "other.pub").read_text()
    register_ssh_executor(a, "gpu-impostor", ssh_host, workspace="Impostor", host_key=other)
    page = browser.new_context().new_page()
    login(page, a, "impostor", f"/tasks/{task_id}/")
    start(page, "elicit-single")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "FAILED")
    expect(page.get_by_test_id("session-error")).to_contain_text("showed another host key than the one recorded")


def test_stopping_a_session_on_an_ssh_executor_ends_its_agentctl_there(browser, servers, ssh_host, postgres_url):
    a, _ = servers
    task_id = task_of(a, "stopper", "Stopping")
    register_ssh_executor(a, "gpu-stop", ssh_host, workspace="Stopping")
    page = browser.new_context().new_page()
    login(page, a, "stopper", f"/tasks/{task_id}/")
    start(page, "elicit-single")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible()
    _, pid, _ = execution_row(postgres_url, task_id)
    agentctl = psutil.Process(pid)
    page.get_by_test_id("session-stop").click()
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-session-state", "CANCELLED")
    expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-agent-live", "false")
    agentctl.wait(timeout=15)  # gone from the host, not left running there
