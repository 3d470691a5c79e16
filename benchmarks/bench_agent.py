"""A scripted ACP agent for the benchmarks: it sends ``elicitation/create`` on cue.

    KANDEV_BENCH_RECORD=record.jsonl KANDEV_BENCH_CONTROL=control.fifo python bench_agent.py

It speaks ACP over stdio as agentctl expects (``initialize``, ``session/new``,
``session/prompt`` left open, ``session/cancel``) and takes commands, one per
line, from the control FIFO the benchmark writes to:

- ``go N``: send one ``elicitation/create`` (a single-select question with the
  Claude bridge's custom-answer companion, as in
  ``kandev_web/mock_agent/scenarios/forms/single-question-0.65.0.json``) on each
  of up to N sessions that have an open prompt and no question outstanding;
- ``end``: answer every open prompt with ``end_turn``.

One agent session can so produce any number of elicitations, one after the
other, inside one turn. Every frame is timestamped on this process's wall clock
(``time.time()``, CLOCK_REALTIME) and written to the record as JSON lines:

- ``{"event": "written", "id", "session", "seq", "t"}``: right after the
  ``write(2)`` of the ``elicitation/create`` line to stdout returned;
- ``{"event": "read", "id", "session", "t", "result"}``: right after the
  ``read(2)`` from stdin that brought agentctl's answer returned (several
  frames read in one ``read(2)`` share its time);
- ``{"event": "prompt", "session", "t"}`` and ``{"event": "session", ...}``.

Nothing of kandev-web is imported: this is the agent side only.
"""

from __future__ import annotations

import json
import os
import selectors
import sys
import time

RECORD_VAR = "KANDEV_BENCH_RECORD"
CONTROL_VAR = "KANDEV_BENCH_CONTROL"


def form(session_id: str, seq: int) -> dict:
    return {
        "mode": "form",
        "sessionId": session_id,
        "toolCallId": f"toolu_bench_{seq}",
        "message": f"Benchmark question {seq}: pick a colour",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": {
                    "type": "string",
                    "title": "Colour",
                    "oneOf": [
                        {"const": "Red", "title": "Red", "description": "The warm one."},
                        {"const": "Blue", "title": "Blue", "description": "The cool one."},
                    ],
                },
                "question_0_custom": {
                    "type": "string",
                    "title": "Other",
                    "description": "Type your own answer instead of choosing an option above (optional).",
                    "_meta": {"_askUserQuestionCustomAnswer": {"questionId": "question_0", "isCustomAnswer": True}},
                },
            },
        },
    }


class Agent:
    def __init__(self, record_path: str) -> None:
        self.record = open(record_path, "a", buffering=1)  # noqa: SIM115 - lives as long as the process
        self.sessions: list[str] = []
        self.prompts: dict[str, object] = {}  # session id -> open session/prompt request id
        self.outstanding: dict[object, str] = {}  # our elicitation request id -> session id
        self.busy: set[str] = set()  # sessions with a question outstanding
        self.next_id = 1
        self.seq = 0
        self.cursor = 0

    def log(self, **event) -> None:
        self.record.write(json.dumps(event) + "\n")

    def write(self, frame: dict) -> float:
        data = (json.dumps(frame) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(1, view)
            view = view[written:]
        return time.time()

    def reply(self, request_id, result) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    # Frames from agentctl ------------------------------------------------------

    def frame(self, frame: dict, t_read: float) -> None:
        method = frame.get("method")
        if method is None:
            session = self.outstanding.pop(frame.get("id"), None)
            if session is not None:
                self.busy.discard(session)
            self.log(
                event="read",
                id=frame.get("id"),
                session=session,
                t=t_read,
                result=frame.get("result"),
                error=frame.get("error"),
            )
            return
        if method == "initialize":
            self.reply(
                frame["id"],
                {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "bench-agent", "version": "1"}},
            )
        elif method == "session/new":
            session = f"bench-{len(self.sessions) + 1}"
            self.sessions.append(session)
            self.reply(frame["id"], {"sessionId": session})
            self.log(event="session", session=session, t=t_read)
        elif method == "session/prompt":
            session = frame["params"]["sessionId"]
            self.prompts[session] = frame["id"]
            self.log(event="prompt", session=session, t=t_read)
        elif method == "session/cancel":
            session = frame["params"]["sessionId"]
            if session in self.prompts:
                self.reply(self.prompts.pop(session), {"stopReason": "cancelled"})
        elif "id" in frame:
            self.write({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32601, "message": "method not found"}})

    # Commands from the benchmark -------------------------------------------------

    def command(self, line: str) -> None:
        words = line.split()
        if not words:
            return
        if words[0] == "go":
            self.ask(int(words[1]) if len(words) > 1 else 1)
        elif words[0] == "end":
            for session, request_id in list(self.prompts.items()):
                self.reply(request_id, {"stopReason": "end_turn"})
                del self.prompts[session]

    def ask(self, count: int) -> None:
        eligible = [s for s in self.sessions if s in self.prompts and s not in self.busy]
        if not eligible:
            self.log(event="nothing_to_ask", t=time.time())
            return
        # Round robin over sessions, so repeated "go 1" spread over all of them.
        start = self.cursor % len(eligible)
        chosen = (eligible[start:] + eligible[:start])[:count]
        self.cursor += len(chosen)
        for session in chosen:
            request_id = self.next_id
            self.next_id += 1
            self.seq += 1
            self.outstanding[request_id] = session
            self.busy.add(session)
            t = self.write(
                {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": form(session, self.seq)}
            )
            self.log(event="written", id=request_id, session=session, seq=self.seq, t=t)


def lines(buffer: bytearray, chunk: bytes):
    buffer += chunk
    while (end := buffer.find(b"\n")) >= 0:
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        if line.strip():
            yield line


def main() -> None:
    agent = Agent(os.environ[RECORD_VAR])
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "stdin")
    control_path = os.environ.get(CONTROL_VAR)
    if control_path:
        selector.register(os.open(control_path, os.O_RDONLY | os.O_NONBLOCK), selectors.EVENT_READ, "control")
    buffers = {"stdin": bytearray(), "control": bytearray()}
    while True:
        for key, _ in selector.select():
            try:
                chunk = os.read(key.fd, 1 << 20)
            except BlockingIOError:
                continue
            t_read = time.time()
            if not chunk:
                if key.data == "stdin":
                    return  # agentctl closed our stdin: we are done
                selector.unregister(key.fd)
                continue
            for line in lines(buffers[key.data], chunk):
                if key.data == "stdin":
                    try:
                        agent.frame(json.loads(line), t_read)
                    except (ValueError, KeyError, TypeError) as error:
                        sys.stderr.write(f"bench-agent: bad frame: {error}\n")
                else:
                    agent.command(line.decode())


if __name__ == "__main__":
    main()
