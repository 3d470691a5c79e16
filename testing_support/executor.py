"""The SSH executor host ``scripts/test`` runs, for tests and benchmarks: its address, another sshd like it."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kandev_web.executor.address import SshAddress

#: What ``scripts/test`` exports about the sshd it starts on this machine's loopback.
SSH_TEST_VARS = (
    "KANDEV_TEST_SSH_HOST",
    "KANDEV_TEST_SSH_PORT",
    "KANDEV_TEST_SSH_USER",
    "KANDEV_TEST_SSH_KEY",
    "KANDEV_TEST_SSH_HOST_KEY",
    "KANDEV_TEST_SSH_AGENTCTL",
)
#: Its config file, for another sshd like it (``private_sshd``).
SSH_TEST_CONFIG_VAR = "KANDEV_TEST_SSH_CONFIG"


def ssh_test_host(**changes: object) -> SshAddress:
    """The SSH executor host ``scripts/test`` runs: a real sshd on 127.0.0.1, this venv's agentctl."""
    missing = [name for name in SSH_TEST_VARS if not os.environ.get(name)]
    if missing:
        raise RuntimeError(f"{', '.join(missing)} not set: run the tests with scripts/test, which starts an sshd")
    address = SshAddress(
        host=os.environ["KANDEV_TEST_SSH_HOST"],
        port=int(os.environ["KANDEV_TEST_SSH_PORT"]),
        user=os.environ["KANDEV_TEST_SSH_USER"],
        host_key=os.environ["KANDEV_TEST_SSH_HOST_KEY"],
        agentctl=os.environ["KANDEV_TEST_SSH_AGENTCTL"],
        key_file=os.environ["KANDEV_TEST_SSH_KEY"],
    )
    return dataclasses.replace(address, **changes)


@contextmanager
def private_sshd(log: Path, **options: str) -> Iterator[SshAddress]:
    """Another sshd like ``scripts/test``'s, on a free loopback port, with sshd ``options``, until the block ends.

    Same config, host key and login as that one, so ``ssh_test_host`` reaches it
    with only the port changed; ``options`` (``MaxSessions="2"``) override the
    config, as ``sshd -o`` does. It runs as this process's user (root under
    ``scripts/test``), in the foreground, logging to ``log``.
    """
    config = os.environ.get(SSH_TEST_CONFIG_VAR)
    if not config:
        raise RuntimeError(f"{SSH_TEST_CONFIG_VAR} not set: run the tests with scripts/test, which starts an sshd")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = [f"-o{name}={value}" for name, value in {"PidFile": "none", **options}.items()]
    # -p replaces the config's Port; -D keeps sshd this process's child, so the block's end stops it.
    process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", config, "-p", str(port), "-E", str(log), *settings])
    try:
        began = time.monotonic()
        while f"Server listening on 127.0.0.1 port {port}" not in (log.read_text() if log.exists() else ""):
            if process.poll() is not None or time.monotonic() - began > 15:
                raise RuntimeError(f"sshd did not start on port {port}: {log.read_text() if log.exists() else ''}")
            time.sleep(0.05)
        yield ssh_test_host(port=port)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def ssh_executor_command(name: str, host: SshAddress) -> list[str]:
    """The ``manage.py executor`` arguments that register ``host`` (its key stored from its key file)."""
    return [
        "executor",
        name,
        "--ssh",
        f"{host.user}@{host.host}:{host.port}",
        "--host-key",
        host.host_key,
        "--private-key-file",
        host.key_file,
        "--agentctl",
        host.agentctl,
        "--workdir-root",
        host.workdir_root,
        "--worktree-root",
        host.worktree_root,
    ]


#: A well-formed host key that no sshd here has.
STRANGER_HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN6BomRUofCii6uq7xl1awFsIlQPttCEDhQ/+cBNkQyt"


def unreachable_ssh_host() -> dict[str, object]:
    """An ``Executor``'s fields for an SSH host nobody answers: loopback port 9 (discard) refuses at once."""
    return {"host": "127.0.0.1", "port": 9, "user": "kandev", "host_key": STRANGER_HOST_KEY}


def ssh_test_host_fields(**changes: object) -> dict[str, object]:
    """An ``Executor``'s fields for scripts/test's sshd (``ssh_test_host``), its private key included."""
    host = ssh_test_host(**changes)
    return {
        "host": host.host,
        "port": host.port,
        "user": host.user,
        "host_key": host.host_key,
        "private_key": Path(host.key_file).read_text(),
        "agentctl": host.agentctl,
    }
