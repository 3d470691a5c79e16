"""Starting and stopping local server processes, for the test suites and the benchmarks.

No pytest here: ``benchmarks/`` imports it too.
"""

import http.cookiejar
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO

from . import forked

#: A server or worker process: started as a new interpreter, or forked (``forked.py``).
Process = subprocess.Popen | forked.Forked

#: The repository: servers run ``manage.py`` and ``kandev_web`` from here.
ROOT = Path(__file__).resolve().parent.parent
#: The password of every operator a :class:`Server` makes.
PASSWORD = "e2e-password-123"

#: Debian's whole chromium: the browser the benchmarks measure in, and the one for the few specs that
#: need what the headless shell lacks (``FULL_CHROMIUM`` in ``e2e/conftest.py``).
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
#: Debian's chromium-headless-shell, the headless Chromium Playwright itself runs by default: the same
#: Blink and V8 without the browser around them, about half the whole browser's CPU over the browser
#: suite, which matters on a two-core machine. It grants no notifications, so no Web Push.
HEADLESS_SHELL = os.environ.get("CHROMIUM_HEADLESS_SHELL_PATH") or shutil.which("chromium-headless-shell")
#: Either, as root on a machine with no network beyond loopback.
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


def wait_for_http(port: int, process: Process, deadline: float) -> None:
    """Until ``process`` answers HTTP on ``port`` (any status); it must not exit meanwhile.

    A connection alone says nothing where the socket was bound before the
    server started: the kernel accepts it into the backlog.
    """

    def answers() -> None:
        with suppress(urllib.error.HTTPError):  # an answer all the same
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).close()

    _wait_until(answers, process, deadline, "server did not start answering")


def wait_for_port(port: int, process: Process, deadline: float) -> None:
    """Until ``process`` accepts connections on ``port``; it must not exit meanwhile."""

    def accepts() -> None:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()

    _wait_until(accepts, process, deadline, "server did not start listening")


def _wait_until(attempt: Callable[[], None], process: Process, deadline: float, failure: str) -> None:
    """Until ``attempt`` raises no ``OSError``, while ``process`` runs and before ``deadline``."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            attempt()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(failure)


def stop_group(process: Process) -> None:
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


def git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


class ManageWorker:
    """``manage.py`` with ``env``, Django started once: one forked ``testing_support.manage_worker``, on first use."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.process: forked.Forked | None = None
        self.connection: Connection | None = None
        self.lock = threading.Lock()  # one command at a time, whichever thread sends it

    def run(self, *args: str) -> str:
        """What ``manage.py *args`` prints; a failed command raises, with its traceback."""
        with self.lock:
            if self.connection is None:
                self.connection, theirs = multiprocessing.Pipe()
                self.process = forked.start(forked.run_manage_worker, self.env, ROOT, theirs)
                theirs.close()
            try:
                self.connection.send(list(args))
                reply = self.connection.recv()
            except (EOFError, OSError) as error:
                status = self.process.poll() if self.process else None
                raise RuntimeError(f"manage.py {' '.join(args)}: the manage worker exited ({status})") from error
        if not reply["ok"]:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{reply['stdout']}{reply['error']}")
        return reply["stdout"]

    def close(self) -> None:
        if self.connection is None or self.process is None:
            return
        self.connection.close()  # it ends when it reads the end
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a thread some command started holds it
            self.process.kill()
            self.process.wait()


@dataclass
class Server:
    url: str
    env: dict[str, str]
    process: Process
    manager: ManageWorker = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.manager = ManageWorker(self.env)

    def manage(self, *args: str) -> str:
        """What ``manage.py *args`` prints, run against this server's database."""
        return self.manager.run(*args)

    def session_cookie(self, username: str) -> str:
        """``username``'s session cookie, signed in through the login form, as a ``Cookie`` header's value."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(f"{self.url}/login/", timeout=20).close()
        token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
        form = {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}
        opener.open(f"{self.url}/login/", urllib.parse.urlencode(form).encode(), timeout=20).close()
        sessions = [cookie.value for cookie in jar if cookie.name == "sessionid"]
        assert sessions, f"{username} could not sign in"
        return f"sessionid={sessions[0]}"

    def create_operator(self, username: str, *, workspace: str, staff: bool = False, tasks: bool = False) -> dict:
        # --no-showcase: no test gets the demo's flag override or repository by accident (e2e/test_demo.py does).
        args = ["demo", "--json", "--no-showcase", "--username", username, "--password", PASSWORD]
        args += ["--workspace", workspace]
        args += [] if staff else ["--no-staff"]
        args += [] if tasks else ["--no-tasks"]
        return json.loads(self.manage(*args))


@contextmanager
def two_web_processes(
    postgres_url: str, redis_url: str, logs: Path, extra: dict[str, str] | None = None
) -> Iterator[tuple[Server, Server]]:
    """Two web processes on one PostgreSQL database and one Redis, as on several machines; logs in ``logs``."""
    env = server_environ(
        logs / "unused.sqlite3",
        {
            "DATABASE_URL": postgres_url,
            "REDIS_URL": redis_url,
            "KANDEV_CHANNEL_PREFIX": f"e2e-{uuid.uuid4().hex[:8]}",
            # Both web processes run on this one machine, so agentctl on loopback reaches them.
            "KANDEV_SILENCED_CHECKS": "kandev.E002",
            **(extra or {}),
        },
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with running_server(env, logs / "a.log") as a, running_server(env, logs / "b.log") as b:
        yield a, b


def start_daphne(
    env: dict[str, str],
    *,
    cwd: Path = ROOT,
    command: tuple[str, ...] | None = None,
    application: str = "kandev_web.asgi:application",
    output: IO[str] | None = None,
) -> tuple[int, Process]:
    """A Daphne serving ``application`` from ``cwd`` with ``env``, writing to ``output``: its port and process.

    ``command`` runs another Daphne (an installed one, say); without it, this
    checkout's is forked (``forked.py``), its libraries imported already.
    It serves a socket made and bound here (``--fd``), not a port named for it
    to bind: a free port found first and bound later was now and then taken by
    another process in between, and the test then talked to whatever held it.
    Its own process group, so the agentctl and agent processes it started end
    with it instead of outliving the test. :func:`wait_for_http` says when it
    is up.
    """
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        port = listener.getsockname()[1]
        if command is None:
            log = Path(output.name) if output is not None else None
            return port, forked.start(forked.serve_daphne, env, cwd, log, listener, application)
        process = subprocess.Popen(
            [*command, "--fd", str(listener.fileno()), application],
            cwd=cwd,
            env=env,
            stdout=output or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if output is not None else subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=[listener.fileno()],
        )
        return port, process


@contextmanager
def daphne(
    env: dict[str, str],
    *,
    cwd: Path = ROOT,
    command: tuple[str, ...] | None = None,
    output: IO[str] | None = None,
    timeout: float = 60,
) -> Iterator[tuple[int, Process]]:
    """:func:`start_daphne` until the block ends, once it answers."""
    port, process = start_daphne(env, cwd=cwd, command=command, output=output)
    try:
        wait_for_http(port, process, time.monotonic() + timeout)
        yield port, process
    finally:
        stop_group(process)


@contextmanager
def running_server(env: dict[str, str], log_path: Path) -> Iterator[Server]:
    """A Daphne process serving kandev-web with ``env``, until the block ends."""
    with log_path.open("w") as log, daphne(env, output=log, timeout=30) as (port, process):
        server = Server(url=f"http://127.0.0.1:{port}", env=env, process=process)
        try:
            yield server
        finally:
            server.manager.close()
