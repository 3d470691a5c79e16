"""Run a real ``kandev-executor`` for tests and benchmarks: a token, a free port, its ready line."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kandev_web.executor.cli import TOKEN_VAR
from kandev_web.executor.client import ExecutorAddress


@dataclass
class RunningExecutor:
    address: ExecutorAddress
    process: subprocess.Popen
    workdir_root: Path


def executor_command() -> list[str]:
    script = Path(sys.executable).parent / "kandev-executor"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kandev_web.executor.cli"]


@contextmanager
def running_executor(
    workdir_root: Path,
    *,
    agentctl_host: str = "127.0.0.1",
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    worktree_root: Path | None = None,
) -> Iterator[RunningExecutor]:
    """A kandev-executor on a free loopback port until the block ends, then SIGTERM (which stops its agentctls)."""
    token = secrets.token_urlsafe(24)
    stderr = log.open("w") if log else None
    worktree_root = worktree_root or workdir_root.parent / "worktrees"
    argv = [*executor_command(), "--port", "0", "--agentctl-host", agentctl_host, "--workdir-root", str(workdir_root)]
    process = subprocess.Popen(
        [*argv, "--worktree-root", str(worktree_root)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        env={**(os.environ if env is None else env), TOKEN_VAR: token},
        text=True,
    )
    try:
        assert process.stdout
        ready = json.loads(process.stdout.readline() or "null")
        if not (isinstance(ready, dict) and ready.get("event") == "ready"):
            raise RuntimeError(f"kandev-executor did not start (exit code {process.wait(5)})")
        yield RunningExecutor(ExecutorAddress(ready["url"], token), process, workdir_root)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if stderr:
            stderr.close()
