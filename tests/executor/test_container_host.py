"""The container stack's executor host, run for real: the shipped sshd config and scripts, as a user of their own.

The image (the Dockerfile's ``executor`` target) runs ``deploy/executor/entrypoint``
as the unprivileged ``kandev`` user; ``deploy/executor/login-key`` makes the
web processes' login key. Here the same files run on 127.0.0.1 as a throwaway
user made for the module (only the paths and the port come from the
``KANDEV_SSHD_*`` variables the entrypoint reads), and the product's SSH
executor starts agent sessions through them. A broken shipped config, a
script that loses the host key or a hardening line that blocks the tunnel
fails here. Needs root (``useradd``, a private mount namespace), as
``scripts/test`` and CI run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import asyncssh
import psutil
import pytest

from kandev_web.agentctl.stream_client import AgentStreamClient
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshCheckouts, SshExecutor
from testing_support.agentctl import Inbox, message_text, open_session, text_prompt

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "executor"
MOCK_AGENT = [sys.executable, "-m", "kandev_web.mock_agent"]
AGENTCTL = str(Path(sys.executable).parent / "kandev-agentctl")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class HostUser:
    """The throwaway account the executor host runs as, standing in for the image's ``kandev``."""

    name: str
    uid: int
    gid: int
    home: Path

    @property
    def state(self) -> Path:
        """The executor's volume: host key, authorized keys, workdirs."""
        return self.home / "var"

    def run(self, argv: list[str], **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups", *self.env(**env), *argv],
            capture_output=True,
            text=True,
            timeout=30,
        )

    def env(self, **extra: str) -> list[str]:
        """``env -i`` and what a container's process would have: no variable of this test run."""
        base = {"HOME": str(self.home), "USER": self.name, "PATH": "/usr/local/bin:/usr/bin:/bin"}
        return ["env", "-i", *(f"{key}={value}" for key, value in {**base, **extra}.items())]


def _useradd(name: str, home: Path) -> None:
    for _ in range(20):  # another process holding /etc/passwd's lock is worth a retry, nothing else
        done = subprocess.run(
            ["useradd", "--home-dir", str(home), "--no-create-home", "--shell", "/bin/sh", "--user-group", name],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return
        if "lock" not in done.stderr:
            raise RuntimeError(f"useradd {name}: {done.stderr.strip()}")
        time.sleep(0.2)
    raise RuntimeError(f"useradd {name}: /etc/passwd stayed locked")


@pytest.fixture(scope="module")
def host_user() -> Iterator[HostUser]:
    if os.geteuid() != 0:
        pytest.fail("The executor host test makes a user and a mount namespace: run it as root, with scripts/test.")
    name = f"kx{secrets.token_hex(4)}"
    # Under /tmp itself: pytest's own temp directories are private to root.
    home = Path(tempfile.mkdtemp(prefix="kandev-executor-"))
    _useradd(name, home)
    entry = pwd.getpwnam(name)
    user = HostUser(name, entry.pw_uid, entry.pw_gid, home)
    try:
        # The image's mount points (its `RUN mkdir var login-key login-pub`), the user's own.
        for directory in (home, home / "login-key", home / "login-pub", user.state):
            directory.mkdir(exist_ok=True)
            os.chown(directory, user.uid, user.gid)
        yield user
    finally:
        for process in psutil.process_iter(["uids"]):
            if process.info["uids"] and process.info["uids"].real == user.uid:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
        subprocess.run(["userdel", name], check=False, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def login_key(host_user) -> Path:
    """The web processes' private key, made by the shipped ``login-key`` as the compose stack's one-off does."""
    private, public = host_user.home / "login-key", host_user.home / "login-pub"
    made = host_user.run([str(SHIPPED / "login-key"), str(private), str(public)])
    assert made.returncode == 0, made.stderr
    return private / "id_ed25519"


def _untraversable_parents(paths: Iterable[Path]) -> dict[Path, set[str]]:
    """Each directory on the way to ``paths`` that other users may not pass through, with the children needed in it."""
    blocked: dict[Path, set[str]] = {}
    for path in paths:
        path = path.resolve()
        for parent in reversed(path.parents):
            if not parent.stat().st_mode & 0o001:
                blocked.setdefault(parent, set()).add(path.relative_to(parent).parts[0])
                break
    return blocked


def _reachable_view(paths: Iterable[Path]) -> str:
    """Shell lines that, in a private mount namespace, let every user reach ``paths`` (and nothing beside them).

    This venv's interpreter may live under a directory only root may enter
    (pyenv under /root); the executor host's user must run it, as the image's
    user runs /usr/local/bin's. Such a directory is covered, in this process's
    namespace only, by an empty one others may pass through, holding just the
    needed children.
    """
    lines = ["set -eu", 'keep="$(mktemp -d)"']
    kept = []
    for index, (parent, children) in enumerate(_untraversable_parents(paths).items()):
        for name in sorted(children):
            child, held = shlex.quote(str(parent / name)), f'"$keep/{index}-{name}"'
            lines += [f"mkdir {held}", f"mount --rbind {child} {held}"]
        lines.append(f"mount -t tmpfs -o mode=0711 kandev-test {shlex.quote(str(parent))}")
        for name in sorted(children):
            child, held = shlex.quote(str(parent / name)), f'"$keep/{index}-{name}"'
            lines += [f"mkdir {child}", f"mount --move {held} {child}"]
            kept.append(held)
    # rmdir, never rm -r: were a mount still held there, rm would delete what it shows.
    return "\n".join([*lines, *(f"rmdir {held}" for held in kept), 'rmdir "$keep"'])


@dataclass
class RunningHost:
    process: subprocess.Popen
    port: int
    log: Path

    def host_key(self, user: HostUser) -> str:
        """What docs/operating.md#containers has the deployer read out of the container and record."""
        return (user.state / "ssh" / "ssh_host_ed25519_key.pub").read_text()


@contextmanager
def executor_host(user: HostUser) -> Iterator[RunningHost]:
    """``deploy/executor/entrypoint`` as ``user`` on a free loopback port, until the block ends."""
    port = free_port()
    log = user.home / f"sshd-{port}.log"
    env = user.env(
        KANDEV_SSHD_STATE=str(user.state / "ssh"),
        KANDEV_SSHD_LISTEN="127.0.0.1",
        KANDEV_SSHD_PORT=str(port),
        KANDEV_SSHD_AUTHORIZED_KEYS=str(user.home / "login-pub" / "id_ed25519.pub"),
    )
    start = shlex.join(["exec", "setpriv", f"--reuid={user.uid}", f"--regid={user.gid}", "--init-groups", *env])
    # An empty /run, as in the image: no /run/sshd, which only root's sshd needs (the scripts/test one made it here).
    view = [_reachable_view([Path(sys.base_prefix), Path(sys.prefix), ROOT]), "mount -t tmpfs kandev-test /run"]
    script = "\n".join([*view, f"{start} {SHIPPED / 'entrypoint'}"])
    with log.open("w") as output:
        process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        began = time.monotonic()
        while "Server listening on 127.0.0.1 port" not in log.read_text():
            if process.poll() is not None or time.monotonic() - began > 15:
                raise AssertionError(f"the executor host did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield RunningHost(process, port, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def address(user: HostUser, host: RunningHost, key_file: Path, **changes) -> SshAddress:
    """The executor as docs/operating.md#containers registers it: host key, login key file, roots on the volume."""
    recorded = SshAddress(
        host="127.0.0.1",
        port=host.port,
        user=user.name,
        host_key=host.host_key(user),
        agentctl=AGENTCTL,
        workdir_root=str(user.state / "workdirs"),
        worktree_root=str(user.state / "worktrees"),
        key_file=str(key_file),
    )
    return dataclasses.replace(recorded, **changes)


@pytest.mark.asyncio
async def test_an_agent_session_runs_through_the_shipped_executor_host_as_its_unprivileged_user(host_user, login_key):
    with executor_host(host_user) as host:
        executor = SshExecutor(address(host_user, host, login_key))
        agentctl = await executor.launch(MOCK_AGENT, env={}, token="per-execution", workdir="", workdir_name="task-3")
        try:
            # sshd and agentctl run as the host's own user: nothing there is root.
            assert psutil.Process(host.process.pid).name() == "sshd"
            assert psutil.Process(host.process.pid).uids().real == host_user.uid
            assert psutil.Process(agentctl.pid).uids().real == host_user.uid
            assert urlsplit(agentctl.remote_url).hostname == "127.0.0.1"
            assert agentctl.cwd == str(host_user.state / "workdirs" / "task-3")

            inbox = Inbox()
            async with AgentStreamClient(agentctl.url, "per-execution", on_notification=inbox) as stream:
                session_id = await open_session(stream, agent_id="mock-agent", cwd=agentctl.cwd)
                await stream.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("hello")})
                await inbox.next("turn.completed", timeout=15)
                assert message_text(inbox, session_id)
        finally:
            assert await agentctl.stop() == 0
            await executor.close()


@pytest.mark.asyncio
async def test_more_agents_than_sshd_s_default_ten_sessions_run_over_one_web_process_s_connection(host_user, login_key):
    with executor_host(host_user) as host:
        executor = SshExecutor(address(host_user, host, login_key))
        agentctls = []
        try:
            for task in range(12):
                agentctls.append(
                    await executor.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name=f"task-{task}")
                )
            assert len({agentctl.pid for agentctl in agentctls}) == 12
        finally:
            assert [await agentctl.stop() for agentctl in agentctls] == [0] * len(agentctls)
            await executor.close()


@pytest.mark.asyncio
async def test_the_host_key_made_on_the_first_start_stays_the_recorded_one_after_a_restart(host_user, login_key):
    with executor_host(host_user) as first:
        recorded = first.host_key(host_user)
    with executor_host(host_user) as again:
        assert again.host_key(host_user) == recorded
        executor = SshExecutor(address(host_user, again, login_key, host_key=recorded))
        agentctl = await executor.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-4")
        assert await agentctl.stop() == 0
        await executor.close()


def test_a_task_worktree_is_made_on_the_executor_volume_by_kandev_checkout_over_the_shipped_host(host_user, login_key):
    repository = host_user.home / "repository"
    for step in (
        ["git", "init", "-q", "-b", "main", str(repository)],
        [
            "git",
            "-C",
            str(repository),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ):
        done = host_user.run(step)
        assert done.returncode == 0, done.stderr
    with executor_host(host_user) as host:
        made = SshCheckouts(address(host_user, host, login_key)).perform(
            "make", {"repo": str(repository), "base": "main", "task_id": 5, "branch_stem": "kandev/task-5", "taken": []}
        )
    assert made["branch"] == "kandev/task-5"
    assert made["path"] == str(host_user.state / "worktrees" / "task-5")
    assert Path(made["path"], ".git").exists()
    assert Path(made["path"]).stat().st_uid == host_user.uid


def _connect(user: HostUser, host: RunningHost, **options):
    known = asyncssh.import_public_key(host.host_key(user))
    return asyncssh.connect(
        "127.0.0.1", host.port, username=user.name, known_hosts=([known], [], []), agent_path=None, config=(), **options
    )


@pytest.mark.asyncio
async def test_the_host_lets_in_only_the_login_key_and_tunnels_only_to_its_own_loopback(host_user, login_key):
    stranger = asyncssh.generate_private_key("ssh-ed25519")
    with executor_host(host_user) as host:
        with pytest.raises(asyncssh.PermissionDenied):
            await _connect(host_user, host, client_keys=[stranger], password_auth=False, kbdint_auth=False)
        with pytest.raises(asyncssh.PermissionDenied):
            await _connect(host_user, host, client_keys=[], password="anything")

        async with _connect(host_user, host, client_keys=[str(login_key)]) as connection:
            listener = await asyncio.start_server(lambda reader, writer: writer.close(), "127.0.0.1", 0)
            port = listener.sockets[0].getsockname()[1]
            try:
                # agentctl's loopback, by the address the web side asks for: open...
                _reader, writer = await connection.open_connection("127.0.0.1", port)
                writer.close()
                # ...anything else, even this machine by another name, is refused: no hop onto the network.
                with pytest.raises(asyncssh.ChannelOpenError):
                    await connection.open_connection("localhost", port)
                with pytest.raises(asyncssh.ChannelListenError):
                    await connection.forward_remote_port("127.0.0.1", 0, "127.0.0.1", port)
                # No terminals.
                with pytest.raises(asyncssh.ChannelOpenError):
                    await connection.create_process("true", term_type="xterm")
            finally:
                listener.close()
        # The login user itself: sshd logs no one else in.
        assert "Accepted publickey for " + host_user.name in host.log.read_text()


def test_the_login_key_is_made_once_and_its_public_half_rewritten_from_it(host_user, login_key):
    first = login_key.read_text()
    public = host_user.home / "login-pub" / "id_ed25519.pub"
    public.write_text("ssh-ed25519 AAAA-stale\n")
    again = host_user.run([str(SHIPPED / "login-key"), str(login_key.parent), str(public.parent)])
    assert again.returncode == 0, again.stderr
    assert login_key.read_text() == first
    derived = asyncssh.import_private_key(first).export_public_key().decode().split()[:2]
    assert public.read_text().split()[:2] == derived
    assert not (login_key.parent / "id_ed25519.pub").exists()  # the private volume holds the private half only


def test_the_host_does_not_start_without_a_login_key(host_user, tmp_path):
    done = host_user.run(
        [str(SHIPPED / "entrypoint")],
        KANDEV_SSHD_STATE=str(host_user.state / "ssh"),
        KANDEV_SSHD_PORT=str(free_port()),
        KANDEV_SSHD_LISTEN="127.0.0.1",
        KANDEV_SSHD_AUTHORIZED_KEYS=str(host_user.home / "no-such.pub"),
    )
    assert done.returncode != 0
    assert "no login key" in done.stderr


def test_sshd_reads_the_shipped_config_as_keys_only_without_root_or_forwarding_beyond_loopback(tmp_path):
    key = tmp_path / "host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    config = ["-f", str(SHIPPED / "sshd_config"), "-h", str(key), "-o", "ListenAddress=127.0.0.1:2222"]
    effective = subprocess.run(
        ["/usr/sbin/sshd", "-T", *config],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    settings = dict(line.split(" ", 1) for line in effective.splitlines() if " " in line)
    assert settings["authenticationmethods"] == "publickey"
    assert settings["passwordauthentication"] == settings["kbdinteractiveauthentication"] == "no"
    assert settings["permitrootlogin"] == "no"
    assert settings["strictmodes"] == "yes"
    assert settings["allowtcpforwarding"] == "local"
    assert settings["permitopen"] == "127.0.0.1:*"
    for refused in ("allowagentforwarding", "x11forwarding", "permittunnel", "permittty", "allowstreamlocalforwarding"):
        assert settings[refused] == "no", refused
    assert "subsystem" not in settings  # no sftp
