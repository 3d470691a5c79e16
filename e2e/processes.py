"""Starting and stopping local server processes, for the browser suite and the benchmarks.

No pytest here: ``benchmarks/`` imports it too.
"""

import os
import signal
import socket
import subprocess
import time
from contextlib import suppress


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, deadline: float) -> None:
    """Until ``process`` accepts connections on ``port``; it must not exit meanwhile."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start listening")


def stop_group(process: subprocess.Popen) -> None:
    """End ``process`` and everything in its process group (agentctl, agents)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
