"""``kandev-agentctl [--host 127.0.0.1] [--port 0] -- <agent argv...>``

Serves the agent stream for one agent execution (``docs/agent-stream.md``).
The bearer token comes from ``KANDEV_AGENTCTL_TOKEN`` only, never from argv,
where any local user could read it. Once listening, agentctl prints exactly one
line on stdout, the ready line, so that whoever started it can learn the port;
everything else, logs included, goes to stderr. SIGTERM shuts down as
``agent.shutdown`` does; so does the agent's exit, after a grace, and so does
being held by no client for ``KANDEV_AGENTCTL_UNHELD_TIMEOUT``, after
cancelling the agent's turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from kandev_web import logs
from kandev_web.agentctl.controller import Controller
from kandev_web.agentctl.durations import DurationError, Timeouts, format_duration, load_timeouts
from kandev_web.agentctl.envelope import ActionError, Frame, Payload
from kandev_web.agentctl.replay import SizeError, load_replay_bytes
from kandev_web.agentctl.scrub import SECRET_NAMES_VAR, Scrubber, ScrubbingFormatter
from kandev_web.agentctl.server import StreamServer, serve_until_shutdown

TOKEN_VAR = "KANDEV_AGENTCTL_TOKEN"  # noqa: S105 - the variable's name, not a token
#: The web app's execution this agentctl serves, named in each of its log lines.
EXECUTION_VAR = "KANDEV_EXECUTION_ID"
#: ``json`` for log lines as JSON objects, like the web app's (``kandev_web/logs.py``).
LOG_FORMAT_VAR = "KANDEV_LOG_FORMAT"
#: agentctl's own settings, never passed on to the agent.
AGENTCTL_ONLY_VARS = frozenset({TOKEN_VAR, SECRET_NAMES_VAR, EXECUTION_VAR, LOG_FORMAT_VAR})
USAGE_ERROR = 2

logger = logging.getLogger("kandev_web.agentctl")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        split = args.index("--")
        own, agent_argv = args[:split], args[split + 1 :]
    else:
        own, agent_argv = args, []

    parser = argparse.ArgumentParser(
        prog="kandev-agentctl",
        usage="KANDEV_AGENTCTL_TOKEN=<secret> %(prog)s [--host HOST] [--port PORT] -- <agent argv...>",
        description="Run one ACP agent and serve its agent stream over WebSocket.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    parser.add_argument(
        "--environment-from-stdin",
        action="store_true",
        help='first read one JSON line {"env": {...}, "workdir": "..."} from stdin (how an SSH launch passes them)',
    )
    options = parser.parse_args(own)
    if not agent_argv:
        parser.error("give the agent command after --")
    if options.environment_from_stdin:
        try:
            _take_environment(sys.stdin.readline())
        except (ValueError, OSError) as error:
            print(f"kandev-agentctl: no usable environment on stdin: {error}", file=sys.stderr)
            return USAGE_ERROR

    token = os.environ.get(TOKEN_VAR)
    if not token:
        print(f"kandev-agentctl: {TOKEN_VAR} is not set; the stream's bearer token comes from it", file=sys.stderr)
        return USAGE_ERROR
    try:
        timeouts = load_timeouts(os.environ)
        replay_bytes = load_replay_bytes(os.environ)
    except (DurationError, SizeError) as error:
        print(f"kandev-agentctl: {error}", file=sys.stderr)
        return USAGE_ERROR

    scrubber = Scrubber.from_environment(os.environ)
    _log_to_stderr(os.environ, scrubber)
    # The agent gets agentctl's environment, but never the stream's token, nor what agentctl's own logging reads.
    agent_env = {name: value for name, value in os.environ.items() if name not in AGENTCTL_ONLY_VARS}
    # Every line this agentctl logs names the web app's execution it serves (when it was told which).
    with logs.bound(execution_id=os.environ.get(EXECUTION_VAR) or None):
        return asyncio.run(
            _serve(options.host, options.port, token, agent_argv, agent_env, timeouts, scrubber, replay_bytes)
        )


def _take_environment(line: str) -> None:
    """Add the variables a launch over SSH sent, and move into its working directory.

    Over SSH, argv is visible to every user of the host and sshd passes on few
    variables, so the token and the profile's secrets come this way instead.
    A relative ``workdir`` is under the login directory; it is made if missing.
    """
    spec = json.loads(line)
    env = spec.get("env") if isinstance(spec, dict) else None
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError('expected {"env": {name: value}, "workdir": "..."}')
    os.environ.update(env)
    workdir = spec.get("workdir") or ""
    if workdir:
        path = Path(workdir).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        os.chdir(path)


def _log_to_stderr(environ: Mapping[str, str], scrubber: Scrubber) -> None:
    """Lines on stderr, scrubbed: JSON objects with ``KANDEV_LOG_FORMAT=json`` (the web app's own), else text."""
    level = environ.get("KANDEV_AGENTCTL_LOG_LEVEL", "INFO").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(logs.ContextIds())
    if environ.get(LOG_FORMAT_VAR) == "json":
        handler.setFormatter(ScrubbingFormatter(logs.json_formatter(static_fields={"process": "agentctl"}), scrubber))
    else:
        handler.setFormatter(ScrubbingFormatter("kandev-agentctl %(levelname)s %(name)s%(ids)s: %(message)s", scrubber))
    logging.basicConfig(level=level if level in logging.getLevelNamesMapping() else "INFO", handlers=[handler])
    # At DEBUG, websockets logs every handshake header, the bearer token included.
    logging.getLogger("websockets").setLevel(max(logging.INFO, logging.getLogger().level))


async def _serve(
    host: str,
    port: int,
    token: str,
    agent_argv: list[str],
    agent_env: dict[str, str],
    timeouts: Timeouts,
    scrubber: Scrubber,
    replay_bytes: int,
) -> int:
    shutdown = asyncio.Event()
    agent_gone = asyncio.Event()
    server = StreamServer(token, replay_bytes=replay_bytes, unheld_after=timeouts.unheld)

    def emit(action: str, payload: Payload) -> None:
        # Whatever the agent said goes out with the profile's secrets masked (scrub.py).
        frame = server.broadcast(action, scrubber.value(payload))
        if action == "agent.exited":
            # Whoever connects from now on hears it too: it may have been
            # reconnecting, or be adopting this execution, when it was said.
            server.greet_with(frame)
            agent_gone.set()

    controller = Controller(
        agent_argv=agent_argv,
        agent_env=agent_env,
        timeouts=timeouts,
        emit=emit,
        request_shutdown=shutdown.set,
        scrubber=scrubber,
    )

    async def handle(frame: Frame) -> Payload:
        try:
            return cast(Payload, scrubber.value(await controller.handle(frame)))  # scrubbed, the same shape
        except ActionError as error:
            raise ActionError(error.code, scrubber.text(error.message), scrubber.value(error.details)) from None

    exiting = asyncio.create_task(_exit_after_agent(agent_gone, shutdown, timeouts), name="exit after the agent")
    orphaned = asyncio.create_task(
        _exit_when_unheld(server.unheld, controller, shutdown, timeouts), name="exit when unheld"
    )
    try:
        return await serve_until_shutdown(
            server, host, port, handle, shutdown=shutdown, close=controller.close, log=logger
        )
    finally:
        exiting.cancel()
        orphaned.cancel()


async def _exit_after_agent(agent_gone: asyncio.Event, shutdown: asyncio.Event, timeouts: Timeouts) -> None:
    """Once the agent has exited no turn can continue, so agentctl ends too, after ``exit_grace``.

    Meanwhile the clients connected have heard ``agent.exited``, and one that
    was reconnecting (or is adopting the execution of a dead web process)
    can still connect and hear it. Without this, agentctl would listen for
    ever, with nobody left to stop it when its web process is gone.
    """
    await agent_gone.wait()
    grace = timeouts.exit_grace.total_seconds()
    logger.info("the agent has exited; agentctl exits in %ss", f"{grace:g}")
    await asyncio.sleep(grace)
    shutdown.set()


async def _exit_when_unheld(
    unheld: asyncio.Event, controller: Controller, shutdown: asyncio.Event, timeouts: Timeouts
) -> None:
    """An agentctl no client has held for ``timeouts.unheld`` is an orphan: it ends its agent's work and exits.

    Its web process is gone and none has adopted it, so nobody will ever read
    or answer what its agent does; a real agent (hundreds of MB) would
    otherwise run for ever. Its turns are cancelled first, as ``agent.cancel``
    would, so the agent can wind them up; then it shuts down as on SIGTERM.
    """
    await unheld.wait()
    logger.warning(
        "no client has connected for %s; cancelling open turns, stopping the agent and exiting",
        format_duration(timeouts.unheld),
    )
    await controller.cancel_turns()
    shutdown.set()


if __name__ == "__main__":
    sys.exit(main())
