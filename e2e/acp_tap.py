"""A logging shim between agentctl and the mock agent (AC-19's witness of the ACP traffic).

Used as an agent profile's command: ``python e2e/acp_tap.py [mock agent args]``.
It starts ``python -m kandev_web.mock_agent``, relays stdin and stdout line
by line, and appends every frame it relays to the file named by ``ACP_TAP_LOG``
as one JSON line: ``{"direction": "client->agent" | "agent->client", "frame": ...}``
(``frame`` is null and ``raw`` holds the line if it is not JSON). A frame is
logged before it is passed on, so a reply is never logged before what it
answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from typing import IO

LOG_VAR = "ACP_TAP_LOG"
CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"


def main() -> int:
    log = open(os.environ[LOG_VAR], "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life
    lock = threading.Lock()
    agent = subprocess.Popen(
        [sys.executable, "-m", "kandev_web.mock_agent", *sys.argv[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert agent.stdin is not None
    assert agent.stdout is not None

    def record(direction: str, line: bytes) -> None:
        try:
            entry = {"direction": direction, "frame": json.loads(line)}
        except ValueError:
            entry = {"direction": direction, "frame": None, "raw": line.decode(errors="replace")}
        with lock:
            log.write(json.dumps(entry) + "\n")
            log.flush()

    def relay(source: IO[bytes], sink: IO[bytes], direction: str) -> None:
        try:
            for line in iter(source.readline, b""):
                record(direction, line)  # before passing it on, so what answers it is logged later
                sink.write(line)
                sink.flush()
        except (BrokenPipeError, ValueError):
            pass  # the other side is gone
        finally:
            with contextlib.suppress(BrokenPipeError, ValueError):
                sink.close()  # so the end of the stream reaches the other side

    upstream = threading.Thread(target=relay, args=(sys.stdin.buffer, agent.stdin, CLIENT_TO_AGENT), daemon=True)
    upstream.start()
    relay(agent.stdout, sys.stdout.buffer, AGENT_TO_CLIENT)
    return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
