"""A scripted ACP "agent" for tests: it plays a JSON list of steps and nothing more.

    python scripted_agent.py SCRIPT.json RECORD.jsonl

It can do what a real agent does by accident (malformed lines, unknown
methods, id 0, early exits, stderr floods) on cue. Steps:

- ``{"expect": "<method>"}``: read frames until one with this method arrives
- ``{"expect_response": <id>}``: read frames until the answer to request <id> arrives
- ``{"reply": <result>}`` / ``{"reply_error": {"code", "message"}}``: answer the
  latest expected request
- ``{"send": <frame>}``: write one JSON-RPC frame
- ``{"raw": "<text>"}``: write a line exactly as given
- ``{"stderr": "<text>"}``: write to stderr
- ``{"echo": "<sessionId>"}``: report the latest frame read as an
  ``agent_message_chunk`` whose text is that frame's JSON
- ``{"exit": <code>}`` / ``{"signal": "<SIGNAME>"}``: end abruptly

After the last step it reads until stdin closes and exits 0. Every frame read
goes to RECORD, one per line, after a first line ``{"pid", "env"}``.
"""

import json
import os
import signal
import sys

RECORDED_ENV = ("KANDEV_AGENTCTL_TOKEN", "SCRIPTED_AGENT_MARKER")


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def act(kind: str, argument, latest: dict | None) -> None:
    """Do a step that only writes or ends the process; ``latest`` is the last frame read."""
    if kind == "send":
        write(json.dumps(argument))
    elif kind == "raw":
        write(argument)
    elif kind == "stderr":
        sys.stderr.write(argument + "\n")
        sys.stderr.flush()
    elif kind == "echo":
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": json.dumps(latest)}}
        write(
            json.dumps(
                {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": argument, "update": chunk}}
            )
        )
    elif kind == "exit":
        os._exit(argument)
    elif kind == "signal":
        os.kill(os.getpid(), signal.Signals[argument])
    else:
        raise SystemExit(f"unknown step {kind!r}")


def main() -> None:
    with open(sys.argv[1]) as file:
        steps = json.load(file)
    # Line-buffered and never closed: a step may end the process with os._exit,
    # and every line recorded before that must already be on disk.
    record = open(sys.argv[2], "a", buffering=1)  # noqa: SIM115
    env = {name: os.environ[name] for name in RECORDED_ENV if name in os.environ}
    record.write(json.dumps({"pid": os.getpid(), "env": env}) + "\n")

    def read() -> dict:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        record.write(line if line.endswith("\n") else line + "\n")
        return json.loads(line)

    latest = None
    latest_request = None
    for step in steps:
        ((kind, argument),) = step.items()
        if kind == "expect":
            while (latest := read()).get("method") != argument:
                pass
            if "id" in latest:
                latest_request = latest
        elif kind == "expect_response":
            while not ("method" not in (latest := read()) and latest.get("id") == argument):
                pass
        elif kind == "reply":
            write(json.dumps({"jsonrpc": "2.0", "id": latest_request["id"], "result": argument}))
        elif kind == "reply_error":
            write(json.dumps({"jsonrpc": "2.0", "id": latest_request["id"], "error": argument}))
        else:
            act(kind, argument, latest)
    while True:
        read()


if __name__ == "__main__":
    main()
