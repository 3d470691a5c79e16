"""``KANDEV_ALLOW_EXECUTOR_SERVICE=true KANDEV_EXECUTOR_TOKEN=<secret> kandev-executor [--host H] [--port P] ...``

Retired: executor hosts are reached over SSH (``kandev_web/executor/ssh.py``),
which needs nothing of ours listening there. This service starts whatever a
holder of its token asks, and its agentctls listen on the network, so it runs
only when ``KANDEV_ALLOW_EXECUTOR_SERVICE`` says so: on a closed network.

Runs on an executor host: the machine where agents (and their agentctl) run,
apart from the web machines. Web processes reach it at
``ws://<host>:<port>/executor/stream`` with the token, ask it to start one
agentctl per execution, then talk to that agentctl directly. Like agentctl it
prints one ready line on stdout and logs to stderr; the token comes from the
environment only, never argv, where any local user could read it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from kandev_web.agentctl.server import StreamServer, serve_until_shutdown
from kandev_web.executor.service import ExecutorService

TOKEN_VAR = "KANDEV_EXECUTOR_TOKEN"
ALLOW_VAR = "KANDEV_ALLOW_EXECUTOR_SERVICE"
PATH = "/executor/stream"
USAGE_ERROR = 2
_WILDCARDS = ("0.0.0.0", "::", "")

logger = logging.getLogger("kandev_web.executor")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kandev-executor",
        usage="KANDEV_EXECUTOR_TOKEN=<secret> %(prog)s [options]",
        description="Start agentctl processes on this machine for kandev-web.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=7310, help="port to listen on; 0 picks a free one (default: 7310)")
    parser.add_argument(
        "--agentctl-host",
        help="interface each agentctl listens on (default: the same as --host)",
    )
    parser.add_argument(
        "--advertise-host",
        help="host name web machines use to reach this machine's agentctls "
        "(default: the agentctl interface, or this machine's name when that is a wildcard)",
    )
    parser.add_argument(
        "--workdir-root",
        type=Path,
        default=Path.cwd() / "workdirs",
        help="where agents' working directories are made when a profile names none (default: ./workdirs)",
    )
    parser.add_argument(
        "--worktree-root",
        type=Path,
        default=Path.cwd() / "worktrees",
        help="where tasks' git worktrees are made for repositories on this machine (default: ./worktrees)",
    )
    options = parser.parse_args(argv)

    if os.environ.get(ALLOW_VAR, "").lower() not in ("1", "true", "yes", "on"):
        print(
            f"kandev-executor: retired and unsafe on open networks (use SSH executors); set {ALLOW_VAR}=true to run it",
            file=sys.stderr,
        )
        return USAGE_ERROR
    token = os.environ.get(TOKEN_VAR)
    if not token:
        print(f"kandev-executor: {TOKEN_VAR} is not set; web processes authenticate with it", file=sys.stderr)
        return USAGE_ERROR
    logging.basicConfig(stream=sys.stderr, level="INFO", format="kandev-executor %(levelname)s %(name)s: %(message)s")
    # At DEBUG, websockets logs every handshake header, the bearer token included.
    logging.getLogger("websockets").setLevel(logging.INFO)

    agentctl_host = options.agentctl_host or options.host
    advertise_host = options.advertise_host or (socket.getfqdn() if agentctl_host in _WILDCARDS else None)
    base_env = {name: value for name, value in os.environ.items() if name != TOKEN_VAR}
    return asyncio.run(
        _serve(
            options.host,
            options.port,
            token,
            agentctl_host,
            advertise_host,
            options.workdir_root.resolve(),
            base_env,
            options.worktree_root.resolve(),
        )
    )


async def _serve(
    host: str,
    port: int,
    token: str,
    agentctl_host: str,
    advertise_host: str | None,
    workdir_root: Path,
    base_env: dict[str, str],
    worktree_root: Path,
) -> int:
    server = StreamServer(token, path=PATH)
    service = ExecutorService(
        emit=server.broadcast,
        base_env=base_env,
        agentctl_host=agentctl_host,
        advertise_host=advertise_host,
        workdir_root=workdir_root,
        worktree_root=worktree_root,
    )
    # Stopping the executor stops its agentctls first; their ends are reported as usual.
    return await serve_until_shutdown(
        server, host, port, service.handle, shutdown=asyncio.Event(), close=service.close, log=logger
    )


if __name__ == "__main__":
    sys.exit(main())
