"""Starting and stopping local server processes, for the browser suite and the benchmarks.

No pytest here: ``benchmarks/`` imports it too.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import suppress
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
#: Debian's chromium as root on a machine with no network beyond loopback.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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


def server_environ(database: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a kandev-web server under test: the e2e profile, its own SQLite file.

    Inherited ``KANDEV_FEATURES_*`` variables are dropped so no flag leaks in;
    ``extra`` (a spec module's ``SERVER_ENV``, say) is applied last.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("KANDEV_FEATURES_") and key not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "REDIS_URL"}
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "kandev_web.settings",
            "KANDEV_PROFILE": "e2e",
            "DATABASE_URL": f"sqlite:///{database}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra or {})
    return env
