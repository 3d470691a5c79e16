"""An orphan's agentctl that cannot be adopted is stopped, and nothing else ever is."""

import socket
import subprocess
import sys

from kandev_web.agentctl.launcher import agentctl_command
from kandev_web.sessions.ownership import Orphan
from kandev_web.sessions.runner import _stop_stray_agentctl


def _orphan(pid: int, *, host: str | None = None) -> Orphan:
    owner = f"{host or socket.gethostname()}:4242:abcdef12"
    return Orphan(1, 1, "ws://127.0.0.1:1/agent/stream", "t", pid=pid, previous_owner=owner)


def test_a_pid_reused_by_another_program_is_left_alone() -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _stop_stray_agentctl(_orphan(other.pid))
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_an_agentctl_on_another_machine_is_not_this_machine_s_to_stop() -> None:
    agentctl = subprocess.Popen(
        [*agentctl_command(), "--", sys.executable, "-c", "pass"],
        env={"KANDEV_AGENTCTL_TOKEN": "t", "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert b'"ready"' in agentctl.stdout.readline()
        _stop_stray_agentctl(_orphan(agentctl.pid, host="elsewhere"))
        assert agentctl.poll() is None
        _stop_stray_agentctl(_orphan(agentctl.pid))
        assert agentctl.wait(timeout=10) == 0  # SIGTERM: a clean shutdown
    finally:
        if agentctl.poll() is None:
            agentctl.kill()
            agentctl.wait()
