"""Test servers and manage workers forked from one process that has imported their libraries already.

A kandev-web process started as a new interpreter spends ~0.8 CPU-seconds
before it serves, three quarters of it importing Django, Channels, Twisted,
asyncssh and the like; the suites start some two hundred servers and manage
workers. Here they are forked from multiprocessing's fork server instead,
which imported those libraries once (:mod:`testing_support.server_libraries`):
each child then runs only what depends on its environment, its settings and
kandev_web, as its own process with its own pid, process group, working
directory, environment and log.

A child gets the environment it is given, whole, before anything reads it:
the libraries imported beforehand read none of it, and never configure
Django's settings (``server_libraries`` checks).

:class:`Forked` gives the harness the part of :class:`subprocess.Popen` it
uses (``pid``, ``poll``, ``wait``, ``returncode``, ``kill``).

As with any multiprocessing start method but fork, a child imports the main
module of the process that started it (as ``__mp_main__``): a script that
starts servers (``python -m benchmarks.latency``, say) keeps its work under
``if __name__ == "__main__":``. pytest's workers have no such module.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

#: Imported by the fork server before it forks anything.
LIBRARIES = "testing_support.server_libraries"

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload([LIBRARIES])


class Forked:
    """A process forked by :func:`start`, with the :class:`subprocess.Popen` methods the harness calls."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process
        self.pid: int = process.pid  # type: ignore[assignment]  # set once started

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(f"forked {self._process.name}", timeout or 0)
        return self._process.exitcode

    def send_signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start(target: Callable[..., None], *args: object) -> Forked:
    """``target(*args)`` in a child of the fork server. Sockets and connections among ``args`` are passed on."""
    process = _context.Process(target=target, args=args, name=target.__name__, daemon=True)
    process.start()
    return Forked(process)


def become(env: dict[str, str], cwd: Path, log: Path | None) -> None:
    """Make this child the process a new interpreter with ``env`` in ``cwd`` would be, writing to ``log``.

    Its own session, as ``start_new_session=True`` gave it: stopping its
    group stops what it started, and none of the test process's.
    """
    if LIBRARIES not in sys.modules:
        # The fork server ignores a preload that fails. A child must not start slowly instead:
        # it fails, with the import's own error when there is one.
        try:
            importlib.import_module(LIBRARIES)
        except Exception as error:
            raise RuntimeError(f"the fork server could not import {LIBRARIES}") from error
        raise RuntimeError(f"the fork server did not import {LIBRARIES}")
    os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    output = os.open(log or os.devnull, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    # As PYTHONUNBUFFERED would have: the log shows each line when it is written.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def serve_daphne(env: dict[str, str], cwd: Path, log: Path | None, listener: socket.socket, application: str) -> None:
    """Daphne serving ``application`` on ``listener``, as ``python -m daphne --fd N application`` would."""
    become(env, cwd, log)
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(["--fd", str(listener.fileno()), application])


def run_manage_worker(env: dict[str, str], cwd: Path, connection) -> None:
    """:func:`testing_support.manage_worker.serve` on ``connection``, with ``env``."""
    become(env, cwd, None)
    from testing_support.manage_worker import serve

    serve(connection)
