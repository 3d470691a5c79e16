"""What the benchmarks share: a Daphne server of our own, demo data, a headless
chromium, a loopback WebSocket echo baseline, percentiles and /proc readings.

Everything listens on 127.0.0.1. Nothing here is imported by the app or the
tests; it mirrors e2e/conftest.py (server environment, once-migrated database,
``manage.py demo --json``) without depending on pytest, and shares
``testing_support.processes`` with it.

``ROOT`` is the checkout the benchmarks belong to. Every process started here
(the server, and through the agent profile's ``env`` agentctl and the agent)
gets ``PYTHONPATH=ROOT``, so a copy of the repository (say ``git archive HEAD``
unpacked elsewhere, plus this folder) is benchmarked as that copy, not as
whatever the editable install points at.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from kandev_web.executor.address import SshAddress
from testing_support import processes
from testing_support.processes import start_daphne, stop_group, wait_for_http  # shared with the test suites

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(__file__).resolve().parent
PYTHON = sys.executable
PASSWORD = "bench-password-123"
CHROMIUM = processes.CHROMIUM or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    *processes.CHROMIUM_ARGS,
    # A background tab must not be throttled: the benchmark page is the only one.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
]


# Numbers ----------------------------------------------------------------------


def cycle_parser(description: str | None) -> argparse.ArgumentParser:
    """The options every benchmark made of measured question cycles takes (runs, warm-up, quiet, bounds, output)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="measured cycles (default 200)")
    parser.add_argument("--warmup", type=int, default=5, help="cycles run first and not counted (default 5)")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds of quiet between cycles (default 0.05)")
    parser.add_argument("--max-seconds", type=float, default=900, help="stop measuring after this long (default 900)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (server log, agent record)")
    return parser


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Summary:
    name: str
    values: list[float]
    unit: str = "ms"

    @property
    def p50(self) -> float:
        return percentile(self.values, 50)

    @property
    def p95(self) -> float:
        return percentile(self.values, 95)

    @property
    def p99(self) -> float:
        return percentile(self.values, 99)

    def line(self, baseline: Summary | None = None, floor: Summary | None = None) -> str:
        """One line of figures, with each percentile's ratio to ``baseline`` and ``floor`` when given."""
        text = (
            f"{self.name:<44} n={len(self.values):<4} p50={self.p50:8.2f} p95={self.p95:8.2f} "
            f"p99={self.p99:8.2f} max={max(self.values) if self.values else math.nan:8.2f} {self.unit}"
        )
        for label, reference in (("baseline", baseline), ("floor", floor)):
            if reference is not None and reference.values:
                text += (
                    f"  | x {label}: p50 {self.p50 / reference.p50:6.1f}x"
                    f" p95 {self.p95 / reference.p95:6.1f}x p99 {self.p99 / reference.p99:6.1f}x"
                )
        return text

    def as_dict(self, baseline: Summary | None = None, floor: Summary | None = None) -> dict:
        out = {"n": len(self.values), "p50": self.p50, "p95": self.p95, "p99": self.p99, "unit": self.unit}
        if self.values:
            out["max"] = max(self.values)
            out["mean"] = statistics.fmean(self.values)
        for prefix, reference in (("ratio", baseline), ("floor_ratio", floor)):
            if reference is not None and reference.values:
                out[f"{prefix}_p50"] = self.p50 / reference.p50
                out[f"{prefix}_p95"] = self.p95 / reference.p95
                out[f"{prefix}_p99"] = self.p99 / reference.p99
        return out


def machine_description() -> str:
    cpu = "unknown CPU"
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    with suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) // 1024} MiB RAM"
    return f"{os.cpu_count()} x {cpu}{memory}; Linux {platform.release()}; Python {platform.python_version()}"


def git_state() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        return f"{head}{' (+ uncommitted changes)' if dirty else ''}"
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


def load_average() -> str:
    """The 1/5/15-minute load averages: other work on the machine skews every figure."""
    with suppress(OSError):
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return "unknown"


def header(title: str) -> None:
    print(f"== {title}")
    print(f"   machine: {machine_description()}")
    print(f"   code:    {ROOT} at {git_state()}")
    print(f"   load average at start: {load_average()}")
    sys.stdout.flush()


def footer() -> None:
    print(f"   load average at end: {load_average()}")


# /proc --------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """Resident set size of one process, KiB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux: /proc/<pid>/task/*/children)."""
    found: list[int] = []
    with suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with suppress(OSError):
                found += [int(x) for x in (task / "children").read_text().split()]
    return found


def cmdline(pid: int) -> str:
    with suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return ""


def ancestors(pid: int) -> list[str]:
    """The command names (``/proc/<pid>/comm``) of ``pid``'s parent, its parent, ...: who started it."""
    names = []
    with suppress(OSError, ValueError, IndexError):
        while pid > 1:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
    return names


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


# A server of our own ------------------------------------------------------------


def server_environ(database: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The e2e suite's server environment, importable from here and quieter."""
    quiet = {"PYTHONPATH": str(ROOT), "LOG_LEVEL": os.environ.get("KANDEV_BENCH_LOG_LEVEL", "WARNING")}
    return processes.server_environ(database, {**quiet, **(extra or {})})


def migrated_database(directory: Path) -> Path:
    database = directory / "db.sqlite3"
    migrate(server_environ(database))
    return database


def migrate(env: dict[str, str]) -> None:
    """``manage.py migrate`` on the database ``env`` names."""
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


@dataclass
class Server:
    url: str
    env: dict[str, str]
    process: processes.Process
    log_path: Path
    manager: processes.ManageWorker = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.manager = processes.ManageWorker(self.env)

    @property
    def pid(self) -> int:
        return self.process.pid

    def manage(self, *args: str) -> str:
        """What ``manage.py *args`` prints, run against this server's database (Django started once per server)."""
        return self.manager.run(*args)

    def create_operator(self, username: str, *, tasks: bool = True, workspace: str | None = None) -> dict:
        """An operator (``manage.py demo``) in ``workspace``, by default a workspace of their own."""
        return json.loads(
            self.manage(
                "demo",
                "--json",
                "--username",
                username,
                "--password",
                PASSWORD,
                "--workspace",
                workspace or f"{username}'s workspace",
                "--no-staff",
                "--no-showcase",
                *([] if tasks else ["--no-tasks"]),
            )
        )

    def add_profile(
        self,
        workspace_id: int,
        name: str,
        command: list[str],
        env: dict[str, str],
        working_dir: str,
        *,
        agent_id: str = "bench-agent",
        **fields,
    ) -> None:
        """An agent profile running ``command`` (our scripted agent) in this workspace; ``fields``: more of its own."""
        code = (
            "import json\n"
            "from kandev_web.agents.models import AgentProfile\n"
            "spec = json.loads({spec!r})\n"
            "AgentProfile.objects.update_or_create(workspace_id=spec.pop('workspace_id'), name=spec.pop('name'),"
            " defaults=spec)\n"
        )
        spec = {
            "workspace_id": workspace_id,
            "name": name,
            "agent_id": agent_id,
            "command": command,
            "env": env,
            "working_dir": working_dir,
            **fields,
        }
        self.manage("shell", "-c", code.format(spec=json.dumps(spec)))

    def descendants(self) -> list[int]:
        out, todo = [], [self.pid]
        while todo:
            for child in children_of(todo.pop()):
                out.append(child)
                todo.append(child)
        return out

    def agentctl_pids(self) -> list[int]:
        return [
            pid for pid in self.descendants() if "kandev-agentctl" in cmdline(pid) or "agentctl.cli" in cmdline(pid)
        ]


@contextmanager
def running_server(
    env: dict[str, str], log_path: Path, *, module: str = "daphne", application: str = "kandev_web.asgi:application"
):
    """Daphne serving ``application`` (kandev-web) with ``env`` in its own process group, until the block ends.

    ``module`` is what runs Daphne: ``daphne`` itself, or ``benchmarks.trace_server``.
    """
    with running_servers(env, [log_path], module=module, application=application) as (server,):
        yield server


@contextmanager
def running_servers(
    env: dict[str, str],
    log_paths: list[Path],
    *,
    module: str = "daphne",
    application: str = "kandev_web.asgi:application",
):
    """One Daphne per log path, as ``running_server``, started at once: each takes seconds to import Django."""
    with ExitStack() as closing:
        ports, started = [], []
        for log_path in log_paths:
            log = closing.enter_context(log_path.open("w"))
            # This checkout's Daphne is forked, its libraries imported already (testing_support/forked.py).
            command = None if module == "daphne" else (PYTHON, "-m", module)
            port, process = start_daphne(env, command=command, application=application, output=log)
            closing.callback(stop_group, process)
            ports.append(port)
            started.append(process)
        deadline = time.monotonic() + 30
        for port, process in zip(ports, started, strict=True):
            wait_for_http(port, process, deadline)
        servers = [
            Server(url=f"http://127.0.0.1:{port}", env=env, process=process, log_path=log_path)
            for port, process, log_path in zip(ports, started, log_paths, strict=True)
        ]
        for server in servers:
            closing.callback(server.manager.close)
        yield servers


@contextmanager
def workdir(keep: bool = False, prefix: str = "kandev-bench-"):
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)
        else:
            print(f"   kept {path}")


# The loopback WebSocket baseline ------------------------------------------------


class EchoBaseline:
    """A bare WebSocket echo server in its own process, and a client here.

    One round trip = send a 100-byte text frame, read the echo; timed with
    ``time.perf_counter`` in this process. The server is ``benchmarks/echo_server.py``
    (the ``websockets`` asyncio server, as agentctl uses), so both ends are
    separate processes talking over 127.0.0.1, like browser and Daphne.

    ``via`` (the several-machines profile's SSH host): the client reaches the
    server through an SSH tunnel to the host's loopback, made as a web process
    makes its tunnel to an agentctl there (``SshExecutor.tunnel``), so the
    round trip shows what one SSH hop adds.
    """

    PAYLOAD = "x" * 100

    def __init__(self, via: SshAddress | None = None) -> None:
        self.process = subprocess.Popen(
            [PYTHON, str(BENCH_DIR / "echo_server.py")], stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        assert self.process.stdout
        url = f"ws://127.0.0.1:{int(self.process.stdout.readline())}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ssh = None
        if via is not None:
            from kandev_web.executor.ssh import SshExecutor

            # asyncssh serves the tunnel's local end from a loop of its own, beside this thread's sync client.
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, name="echo-ssh", daemon=True).start()
            self._ssh = SshExecutor(via)
            url = asyncio.run_coroutine_threadsafe(self._ssh.tunnel(url), self._loop).result(30)
        from websockets.sync.client import connect

        self.connection = connect(url, compression=None, proxy=None)
        self.samples: list[float] = []

    def round_trip(self) -> float:
        start = time.perf_counter()
        self.connection.send(self.PAYLOAD)
        self.connection.recv()
        elapsed = (time.perf_counter() - start) * 1000
        self.samples.append(elapsed)
        return elapsed

    def close(self) -> None:
        with suppress(Exception):
            self.connection.close()
        if self._loop is not None and self._ssh is not None:
            with suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._ssh.close(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        stop_group(self.process)


# Scripted agent's record --------------------------------------------------------


@dataclass
class AgentRecord:
    """Reads ``benchmarks/bench_agent.py``'s JSON-lines record as it grows."""

    path: Path
    _offset: int = 0
    _partial: str = ""
    events: list[dict] = field(default_factory=list)

    def poll(self) -> list[dict]:
        if not self.path.exists():
            return []
        with self.path.open() as file:
            file.seek(self._offset)
            chunk = file.read()
            self._offset = file.tell()
        text = self._partial + chunk
        lines = text.split("\n")
        self._partial = lines.pop()
        new = [json.loads(line) for line in lines if line.strip()]
        self.events += new
        return new

    def wait_for(self, predicate, timeout: float = 10.0, interval: float = 0.0005) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if predicate(event):
                    return event
            if time.monotonic() > deadline:
                raise TimeoutError("the agent did not record the expected event in time")
            if not self.poll():
                time.sleep(interval)


class Control:
    """The benchmark's side of the agent's control FIFO: one command per line."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        # Read-write, so opening never blocks waiting for the agent to open its end.
        self.fd = os.open(path, os.O_RDWR)

    def send(self, command: str) -> None:
        os.write(self.fd, (command + "\n").encode())

    def close(self) -> None:
        with suppress(OSError):
            os.close(self.fd)


def bench_agent_command() -> list[str]:
    return [PYTHON, str(BENCH_DIR / "bench_agent.py")]
