"""A stdio relay between agentctl and a real ACP agent that stamps what ``bench_agent.py`` stamps.

    python benchmarks/codex_tap.py <agent argv...>     (agentctl's agent command)

``latency --agent codex`` runs the real Codex adapter behind this relay, so
(a) and (b) start and end where they do with the scripted agent: **written**
is ``time.time()`` right after an ``elicitation/create`` line from the agent
has been written to agentctl (the write(2) returned), **read** right after
the line with agentctl's answer to it was read. What the agent itself takes
(the model's call -> its ``elicitation/create``; the answer -> the model's
next request) is outside both and measured apart, by the fake Responses API.
The relay adds a pipe hop and a JSON parse of each line; it records to the
``KANDEV_BENCH_RECORD`` file as the scripted agent does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

RECORD_VAR = "KANDEV_BENCH_RECORD"


class Record:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1)  # noqa: SIM115 - open for the relay's whole life
        self._lock = threading.Lock()

    def add(self, event: dict) -> None:
        with self._lock:
            self._file.write(json.dumps(event) + "\n")


def _message(line: bytes) -> dict:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def main(argv: list[str]) -> int:
    record = Record(os.environ[RECORD_VAR])
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin
    assert child.stdout
    asked: set = set()
    lock = threading.Lock()

    def from_agent() -> None:
        assert child.stdout
        out = sys.stdout.buffer
        seq = 0
        for line in child.stdout:
            out.write(line)
            out.flush()
            t = time.time()
            message = _message(line)
            if message.get("method") == "elicitation/create":
                seq += 1
                with lock:
                    asked.add(message.get("id"))
                record.add({"event": "written", "seq": seq, "id": message.get("id"), "t": t})

    relay = threading.Thread(target=from_agent, daemon=True)
    relay.start()
    for line in sys.stdin.buffer:
        t = time.time()
        message = _message(line)
        if message.get("method") == "session/prompt":
            record.add({"event": "prompt", "t": t})
        elif "method" not in message and message.get("id") in asked:
            with lock:
                asked.discard(message["id"])
            record.add({"event": "read", "id": message["id"], "t": t, "result": message.get("result")})
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    relay.join()
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
