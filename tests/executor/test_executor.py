"""kandev-executor over real processes and sockets: agentctl started on an executor host.

The executor's agentctls listen on 127.0.0.2, another address than the web
machine's 127.0.0.1, so the URL the web side uses is the one the executor
advertises, not one it could have guessed.
"""

import asyncio
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kandev_web import git
from kandev_web.agentctl.launcher import AgentctlProcess
from kandev_web.agentctl.stream_client import AgentStreamClient, StreamError, ValidationFailed
from kandev_web.agentctl.testing import Inbox, message_text, open_session, text_prompt
from kandev_web.executor.cli import TOKEN_VAR
from kandev_web.executor.client import ExecutorAddress, ExecutorClient, RemoteCheckouts
from kandev_web.executor.service import advertised_url
from kandev_web.executor.testing import executor_command, running_executor
from kandev_web.sessions.runtime import Endpoint

MOCK_AGENT = [sys.executable, "-m", "kandev_web.mock_agent"]


@pytest.fixture
def executor(tmp_path):
    env = {**os.environ, "EXECUTOR_SIDE": "yes"}
    with running_executor(
        tmp_path / "workdirs", agentctl_host="127.0.0.2", env=env, log=tmp_path / "executor.log"
    ) as running:
        yield running


def agent_recording_env(path: Path) -> list[str]:
    """The mock agent, after writing the environment it was given to ``path``."""
    return ["sh", "-c", f"env > {shlex.quote(str(path))}; exec {shlex.join(MOCK_AGENT)}"]


def parent_pid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError("no PPid")


@pytest.mark.asyncio
async def test_an_agent_runs_on_the_executor_host_and_is_reached_by_url_and_token(executor, tmp_path):
    client = ExecutorClient(executor.address)
    seen_env = tmp_path / "agent.env"
    remote = await client.launch(
        agent_recording_env(seen_env),
        env={"PROFILE_VAR": "from-profile"},
        token="per-execution",
        workdir="",
        workdir_name="task-7",
    )
    assert urlsplit(remote.url).hostname == "127.0.0.2"
    assert parent_pid(remote.pid) == executor.process.pid
    assert remote.cwd == str(executor.workdir_root / "task-7") and Path(remote.cwd).is_dir()

    inbox = Inbox()
    async with AgentStreamClient(remote.url, "per-execution", on_notification=inbox) as stream:
        session_id = await open_session(stream, agent_id="mock-agent", cwd=remote.cwd)
        await stream.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
        await inbox.next("turn.completed")
        assert message_text(inbox, session_id)

    env = dict(line.split("=", 1) for line in seen_env.read_text().splitlines() if "=" in line)
    assert env["EXECUTOR_SIDE"] == "yes"  # the executor host's environment...
    assert env["PROFILE_VAR"] == "from-profile"  # ...plus the profile's
    assert TOKEN_VAR not in env and "KANDEV_AGENTCTL_TOKEN" not in env
    assert await remote.stop() == 0
    await client.close()
    log = (tmp_path / "executor.log").read_text()
    assert "started agentctl" in log  # it does log, but never a credential
    assert "per-execution" not in log and executor.address.token not in log


@pytest.mark.asyncio
async def test_a_killed_agentctl_is_reported_to_whoever_launched_it(executor):
    client = ExecutorClient(executor.address)
    remote = await client.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-1")
    os.kill(remote.pid, signal.SIGKILL)
    assert await asyncio.wait_for(remote.wait(), 10) == -signal.SIGKILL
    await client.close()


@pytest.mark.asyncio
async def test_a_web_process_that_adopts_an_execution_learns_an_end_it_missed(executor):
    launcher = ExecutorClient(executor.address)
    remote = await launcher.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-2")
    await launcher.close()  # the web process that started it is gone
    os.kill(remote.pid, signal.SIGKILL)  # and agentctl ends while nobody listens

    adopter = ExecutorClient(executor.address)
    followed = await adopter.attach(remote.launch_id, remote.url, remote.pid, "t")
    assert await asyncio.wait_for(followed.wait(), 10) == -signal.SIGKILL
    await adopter.close()


@pytest.mark.asyncio
async def test_stopping_the_executor_stops_its_agentctls(tmp_path):
    with running_executor(tmp_path / "workdirs") as running:
        client = ExecutorClient(running.address)
        remote = await client.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-3")
        running.process.send_signal(signal.SIGTERM)
        # agentctl treats SIGTERM as agent.shutdown and exits cleanly; the end is reported before the executor goes.
        assert await asyncio.wait_for(remote.wait(), 15) == 0
        await client.close()
    assert not Path(f"/proc/{remote.pid}").exists()


@pytest.mark.asyncio
async def test_a_working_directory_named_by_the_profile_is_used_as_is(executor, tmp_path):
    client = ExecutorClient(executor.address)
    wanted = tmp_path / "checkout" / "repo"
    remote = await client.launch(MOCK_AGENT, env={}, token="t", workdir=str(wanted), workdir_name="task-4")
    assert remote.cwd == str(wanted) and wanted.is_dir()
    await remote.stop()
    await client.close()


@pytest.mark.asyncio
async def test_a_bad_launch_request_is_refused_with_every_problem(executor):
    async with AgentStreamClient(executor.address.url, executor.address.token) as stream:
        with pytest.raises(ValidationFailed) as refused:
            await stream.request(
                "executor.launch",
                {"argv": [], "env": {"A": 1}, "token": "", "workdir": "relative/dir", "workdir_name": "../escape"},
            )
        assert len(refused.value.details["problems"]) == 5
        with pytest.raises(StreamError) as unknown:
            await stream.request("executor.format_disk", {})
        assert unknown.value.code == "UNKNOWN_ACTION"
        listing = await stream.request("executor.list", {})
        assert listing == {"agentctls": []}  # nothing was started


@pytest.mark.asyncio
async def test_a_wrong_token_is_refused_before_the_upgrade(executor):
    with pytest.raises(StreamError) as refused:
        async with AgentStreamClient(executor.address.url, "not-the-token"):
            pass
    assert refused.value.code == "UNAUTHORIZED"


def test_without_a_token_the_executor_does_not_start(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != TOKEN_VAR}
    result = subprocess.run([*executor_command(), "--port", "0"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert TOKEN_VAR in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    ("url", "host", "expected"),
    [
        ("ws://0.0.0.0:4100/agent/stream", "gpu-1.lan", "ws://gpu-1.lan:4100/agent/stream"),
        ("ws://[::]:4100/agent/stream", "fd00::7", "ws://[fd00::7]:4100/agent/stream"),
        ("ws://10.0.0.5:4100/agent/stream", None, "ws://10.0.0.5:4100/agent/stream"),
    ],
)
def test_agentctl_urls_name_the_host_other_machines_use(url, host, expected):
    assert advertised_url(url, host) == expected


def test_credentials_stay_out_of_reprs_that_end_up_in_logs_and_tracebacks():
    for value in (
        ExecutorAddress("ws://gpu-1:7310/executor/stream", "s3cret"),
        AgentctlProcess(None, "ws://127.0.0.1:1/agent/stream", 1, "s3cret"),
        Endpoint(1, "ws://127.0.0.1:1/agent/stream", "s3cret"),
    ):
        assert "s3cret" not in repr(value)


# --- A task's checkout on the executor host ---------------------------------------------------------------


def test_a_checkout_step_is_done_on_the_executor_host_and_a_git_failure_comes_back_with_its_kind(executor, tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=A",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    checkouts = RemoteCheckouts(executor.address)

    made = checkouts.make(str(repo), "main", 12, "kandev/task-12-x", [])

    assert made["branch"] == "kandev/task-12-x"
    assert Path(made["path"]).parent == executor.workdir_root.parent / "worktrees"
    with pytest.raises(git.GitError) as raised:
        checkouts.commit_of(str(repo), "no-such-branch")
    assert raised.value.failure is git.Failure.NO_SUCH_REF
    with pytest.raises(git.GitError) as raised:
        checkouts.inspect(str(tmp_path), "")
    assert raised.value.failure is git.Failure.NOT_A_REPOSITORY


@pytest.mark.asyncio
async def test_a_malformed_checkout_step_is_refused_with_every_problem(executor):
    client = ExecutorClient(executor.address)
    with pytest.raises(ValidationFailed) as refused:
        await client.request("executor.checkout", {"op": "remove", "args": {"repo": "relative", "extra": 1}})
    assert refused.value.details["problems"] == [
        "unexpected argument 'extra'",
        "repo must be an absolute path",
        "path must be str",
        "branch must be str",
    ]
    with pytest.raises(ValidationFailed, match="op must be one of inspect, commit_of, make"):
        await client.request("executor.checkout", {"op": "rm -rf /", "args": {}})
    await client.close()


def test_the_retired_executor_does_not_start_unless_explicitly_allowed(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "KANDEV_ALLOW_EXECUTOR_SERVICE"}
    result = subprocess.run(
        [*executor_command(), "--port", "0"], env={**env, TOKEN_VAR: "t"}, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "KANDEV_ALLOW_EXECUTOR_SERVICE" in result.stderr and "unsafe on open networks" in result.stderr
