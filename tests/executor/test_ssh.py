"""Executor hosts over SSH, against the real sshd ``scripts/test`` runs on 127.0.0.1.

The host runs this venv's ``kandev-agentctl`` through sshd; the web side
reaches its stream only through the SSH connection's tunnel.
"""

import asyncio
import json
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.stream_client import AgentStreamClient
from kandev_web.executor.checkout_cli import answer as checkout_answer
from kandev_web.executor.ssh import SshAgentctl, SshError, SshExecutor, SshFailure, trusted_host_key
from testing_support.agentctl import Inbox, message_text, open_session, text_prompt
from testing_support.executor import private_sshd, ssh_test_host

MOCK_AGENT = [sys.executable, "-m", "kandev_web.mock_agent"]
#: Another host's key: what a host that is not the recorded one would show.
OTHER_HOST_KEY = "[127.0.0.1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN6BomRUofCii6uq7xl1awFsIlQPttCEDhQ/+cBNkQyt"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def agent_recording_env(path: Path) -> list[str]:
    return ["sh", "-c", f"env > {shlex.quote(str(path))}; exec {shlex.join(MOCK_AGENT)}"]


def ancestors(pid: int) -> list[str]:
    """The names of a process's parents, nearest first."""
    return [process.name() for process in psutil.Process(pid).parents()]


@pytest.mark.asyncio
async def test_agentctl_starts_over_ssh_listens_on_loopback_and_is_reached_through_the_tunnel(tmp_path):
    host = SshExecutor(ssh_test_host(workdir_root=str(tmp_path / "workdirs")))
    seen_env = tmp_path / "agent.env"
    agentctl = await host.launch(
        agent_recording_env(seen_env),
        env={"PROFILE_VAR": "from-profile", "API_KEY": "sk-secret-value"},
        token="per-execution-token",
        workdir="",
        workdir_name="task-7",
    )
    try:
        remote, local = urlsplit(agentctl.remote_url), urlsplit(agentctl.url)
        # agentctl listens on the host's loopback only, and nowhere else...
        listening = {c.laddr for c in psutil.Process(agentctl.pid).net_connections() if c.status == psutil.CONN_LISTEN}
        assert listening == {(remote.hostname, remote.port)}
        assert remote.hostname == "127.0.0.1"
        # ...it was started by sshd, not by this process...
        assert any(name.startswith("sshd") for name in ancestors(agentctl.pid))
        assert os.getpid() not in [parent.pid for parent in psutil.Process(agentctl.pid).parents()]
        # ...and this side talks to another port, the tunnel's, which this process opened.
        assert local.port != remote.port
        tunnel = {c.laddr.port for c in psutil.Process().net_connections() if c.status == psutil.CONN_LISTEN}
        assert local.port in tunnel
        assert agentctl.cwd == str(tmp_path / "workdirs" / "task-7")
        assert Path(agentctl.cwd).is_dir()

        inbox = Inbox()
        async with AgentStreamClient(agentctl.url, "per-execution-token", on_notification=inbox) as stream:
            session_id = await open_session(stream, agent_id="mock-agent", cwd=agentctl.cwd)
            await stream.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
            await inbox.next("turn.completed")
            assert message_text(inbox, session_id)
        # Secrets reached the agent, but through stdin: not in anybody's argv on that host.
        env = dict(line.split("=", 1) for line in seen_env.read_text().splitlines() if "=" in line)
        assert env["PROFILE_VAR"] == "from-profile"
        assert env["API_KEY"] == "sk-secret-value"
        assert "KANDEV_AGENTCTL_TOKEN" not in env
        argv = " ".join(psutil.Process(agentctl.pid).cmdline())
        assert "per-execution-token" not in argv
        assert "sk-secret-value" not in argv
    finally:
        assert await agentctl.stop() == 0  # SIGTERM there: agentctl shuts down cleanly
        await host.close()


@pytest.mark.asyncio
async def test_a_kill_9_of_the_remote_agentctl_is_seen_with_its_signal():
    host = SshExecutor(ssh_test_host())
    agentctl = await host.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-kill")
    os.kill(agentctl.pid, signal.SIGKILL)
    assert await asyncio.wait_for(agentctl.wait(), 10) == -signal.SIGKILL
    await host.close()


@pytest.mark.asyncio
async def test_a_process_that_adopts_an_execution_follows_it_through_its_own_connection():
    launcher = SshExecutor(ssh_test_host())
    started = await launcher.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-adopt")
    adopter = SshExecutor(ssh_test_host())
    adopted = await adopter.attach(started.launch_id, started.remote_url, started.pid, "t")
    assert adopted.url != started.url  # a tunnel of its own
    async with AgentStreamClient(adopted.url, "t") as stream:
        await open_session(stream, agent_id="mock-agent")
    os.kill(started.pid, signal.SIGKILL)
    assert await asyncio.wait_for(adopted.wait(), 10) is None  # ended; the code went to the launcher
    await launcher.close()
    await adopter.close()


def listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections() if c.status == psutil.CONN_LISTEN}


@pytest.mark.asyncio
async def test_a_request_from_a_process_that_does_not_own_the_stream_uses_a_tunnel_closed_after_it():
    owner = SshExecutor(ssh_test_host())
    started = await owner.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-once")
    other = SshExecutor(ssh_test_host())
    async with other.transient_tunnel(started.remote_url) as url:
        port = urlsplit(url).port
        assert port in listening_ports()
        assert port != urlsplit(started.url).port
        async with AgentStreamClient(url, "t") as stream:
            await open_session(stream, agent_id="mock-agent")
    assert port not in listening_ports()
    assert await started.stop() == 0
    await owner.close()
    await other.close()


def ssh_connections_to(port: int) -> int:
    """How many SSH connections this process holds to the sshd on ``port``."""
    return sum(
        1
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


async def no_ssh_connections_left(port: int, timeout: float = 10) -> None:
    """Every connection to the sshd on ``port`` gone from this process's sockets (the kernel says so in its time)."""
    deadline = time.monotonic() + timeout
    while ssh_connections_to(port):
        assert time.monotonic() < deadline, f"{ssh_connections_to(port)} SSH connection(s) still open"
        await asyncio.sleep(0.05)


async def answer_a_prompt(agentctl) -> None:
    inbox = Inbox()
    async with AgentStreamClient(agentctl.url, agentctl.token, on_notification=inbox) as stream:
        session_id = await open_session(stream, agent_id="mock-agent", cwd=agentctl.cwd)
        await stream.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
        await inbox.next("turn.completed")
        assert message_text(inbox, session_id)


@pytest.mark.asyncio
async def test_more_agents_than_the_host_s_max_sessions_run_and_stop_through_one_executor(tmp_path):
    # sshd refuses a third session on a connection: six agents fill three connections.
    with private_sshd(tmp_path / "sshd.log", MaxSessions="2") as address:
        host = SshExecutor(address)
        agentctls = []
        try:
            # Started at once, as several tasks' sessions are.
            started = await asyncio.gather(
                *(
                    host.launch(MOCK_AGENT, env={}, token=f"t{task}", workdir="", workdir_name=f"task-{task}")
                    for task in range(6)
                ),
                return_exceptions=True,
            )
            agentctls += [agentctl for agentctl in started if isinstance(agentctl, SshAgentctl)]
            assert agentctls == started  # every launch got a session
            assert len({agentctl.pid for agentctl in agentctls}) == 6
            assert ssh_connections_to(address.port) == 3
            # Each is reached through its tunnel, though its connection holds all the sessions it may.
            for agentctl in agentctls:
                await answer_a_prompt(agentctl)
            # Every connection is full: stopping the first agent still works (its kill takes a new one)...
            assert await agentctls[0].stop() == 0
            assert ssh_connections_to(address.port) == 4
            # ...and the next agent goes where there is room now, without another connection.
            agentctls[0] = await host.launch(MOCK_AGENT, env={}, token="t6", workdir="", workdir_name="task-6")
            await answer_a_prompt(agentctls[0])
            assert ssh_connections_to(address.port) == 4
            # A checkout step, too, finds room.
            answer = await host.checkout("no-such-step", {}, timeout=30)
            assert set(answer) == {"error"}
        finally:
            assert [await agentctl.stop() for agentctl in agentctls] == [0] * len(agentctls)
            await host.close()
        await no_ssh_connections_left(address.port)


@pytest.mark.asyncio
async def test_a_process_adopting_more_agents_than_the_host_s_max_sessions_follows_and_stops_each(tmp_path):
    with private_sshd(tmp_path / "sshd.log", MaxSessions="2") as address:
        launcher, adopter = SshExecutor(address), SshExecutor(address)
        started = [
            await launcher.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name=f"task-adopt-{task}")
            for task in range(4)
        ]
        try:
            adopted = [
                await adopter.attach(agentctl.launch_id, agentctl.remote_url, agentctl.pid, "t") for agentctl in started
            ]
            for agentctl in adopted:
                async with AgentStreamClient(agentctl.url, "t") as stream:
                    await open_session(stream, agent_id="mock-agent")
            # The adopter's connections are full of followers; its stop of each still reaches the host.
            assert ssh_connections_to(address.port) == 2 + 2  # the launcher's two and the adopter's two
            assert [await agentctl.stop() for agentctl in adopted] == [None] * 4
            assert [await asyncio.wait_for(agentctl.wait(), 10) for agentctl in started] == [0] * 4
        finally:
            for agentctl in started:
                await agentctl.stop()
            await launcher.close()
            await adopter.close()


@pytest.mark.asyncio
async def test_a_host_whose_key_is_not_the_recorded_one_is_refused():
    host = SshExecutor(ssh_test_host(host_key=OTHER_HOST_KEY))
    with pytest.raises(SshError) as refused:
        await host.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-1")
    assert refused.value.failure is SshFailure.HOST_KEY_MISMATCH


@pytest.mark.asyncio
async def test_a_host_with_no_recorded_key_is_not_contacted():
    host = SshExecutor(ssh_test_host(host_key=""))
    with pytest.raises(SshError) as refused:
        await host.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-1")
    assert refused.value.failure is SshFailure.NO_HOST_KEY


@pytest.mark.asyncio
async def test_an_unreachable_host_is_refused_within_seconds():
    host = SshExecutor(ssh_test_host(port=free_port()))
    began = time.monotonic()
    with pytest.raises(SshError) as refused:
        await host.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-1")
    assert refused.value.failure is SshFailure.UNREACHABLE
    assert time.monotonic() - began < 5


@pytest.mark.asyncio
async def test_a_missing_agentctl_on_the_host_fails_the_launch_saying_so():
    host = SshExecutor(ssh_test_host(agentctl="/nonexistent/kandev-agentctl"))
    with pytest.raises(SshError) as refused:
        await host.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-1")
    assert refused.value.failure is SshFailure.NOT_STARTED
    assert "/nonexistent/kandev-agentctl" in str(refused.value)
    await host.close()


def test_a_host_key_is_read_from_ssh_keyscan_output_or_a_bare_key():
    bare = OTHER_HOST_KEY.split(" ", 1)[1]
    assert trusted_host_key(OTHER_HOST_KEY).export_public_key() == trusted_host_key(bare).export_public_key()
    assert trusted_host_key(f"# 127.0.0.1:22 SSH-2.0-OpenSSH\n{OTHER_HOST_KEY}\n") is not None
    with pytest.raises(SshError):
        trusted_host_key("not a key")


@given(st.text())
def test_any_recorded_host_key_text_is_a_key_or_refused_never_a_crash(text):
    try:
        trusted_host_key(text)
    except SshError as error:
        assert error.failure is SshFailure.NO_HOST_KEY


@given(st.one_of(st.text(), st.builds(json.dumps, st.dictionaries(st.text(), st.text() | st.integers()))))
def test_kandev_checkout_answers_any_request_with_a_result_or_an_error(request_text):
    reply = checkout_answer(request_text, Path("/nonexistent-root"))
    assert set(reply) in ({"result"}, {"error"})
    if "error" in reply:
        assert isinstance(reply["error"]["failure"], str)
        assert isinstance(reply["error"]["detail"], str)
