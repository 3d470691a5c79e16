"""``acpdbg``: run one ACP session against any agent command and print every frame.

    acpdbg [--elicitation form|none] [--prompt TEXT] [--answers FILE] [--cwd DIR] -- <agent argv...>

Each JSON-RPC frame is printed on its own line of stdout: ``>>`` for frames
sent to the agent, ``<<`` for frames received from it. The agent's stderr and
acpdbg's own remarks go to stderr.

The client capabilities are agentctl's, with ``elicitation: {form: {}}`` only
under ``--elicitation form``: running the same prompt once with and once
without repeats the bridge A/B in two commands
(``docs/decisions/bridge-ab.md#the-bridge-ab``). Elicitations are answered with the ACP
results listed in ``--answers FILE`` (a JSON list, used in order), or else
typed on stdin; permission requests get the first allow option.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from kandev_web.agentctl.acp_client import PROTOCOL_VERSION
from kandev_web.agentctl.capabilities import client_capabilities
from kandev_web.agentctl.jsonrpc import LINE_LIMIT, Direction, JsonRpcError, JsonRpcId, JsonRpcPeer, PeerClosed

#: The bridge A/B probe's prompt (docs/decisions/bridge-ab.md#the-bridge-ab).
DEFAULT_PROMPT = "use the AskUserQuestion tool right now to ask me to pick a colour."
DECLINE = {"action": "decline"}
STOP_SECONDS = 5.0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    own, agent_argv = args[:split], args[split + 1 :]
    parser = argparse.ArgumentParser(
        prog="acpdbg",
        usage="%(prog)s [--elicitation form|none] [--prompt TEXT] [--answers FILE] [--cwd DIR] -- <agent argv...>",
        description="Run one ACP session against an agent and print every JSON-RPC frame (>> sent, << received).",
    )
    parser.add_argument("--elicitation", choices=["form", "none"], default="none", help="advertise form elicitation")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, help="the one prompt to send (default: the A/B probe)")
    parser.add_argument("--answers", metavar="FILE", help="JSON list of ACP elicitation results, used in order")
    parser.add_argument("--cwd", default=os.getcwd(), help="the session's working directory (default: here)")
    options = parser.parse_args(own)
    if not agent_argv:
        parser.error("give the agent command after --")
    answers = None
    if options.answers:
        try:
            with open(options.answers) as file:
                answers = json.load(file)
        except (OSError, ValueError) as error:
            parser.error(f"cannot read --answers: {error}")
        if not isinstance(answers, list) or not all(isinstance(answer, dict) for answer in answers):
            parser.error("--answers must hold a JSON list of elicitation results")
    return asyncio.run(
        _session(
            agent_argv,
            elicitation=options.elicitation == "form",
            prompt=options.prompt,
            answers=answers,
            cwd=os.path.abspath(options.cwd),
        )
    )


class _Answerer:
    """Answers what the agent asks: elicitations from the list or stdin, permissions with "allow"."""

    def __init__(self, answers: list[dict[str, Any]] | None) -> None:
        self._answers = answers
        self.elicitations = 0

    async def elicitation(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        self.elicitations += 1
        if self._answers is None:
            return await self._ask()
        if not self._answers:
            _remark("no answers left in the file; declining")
            return DECLINE
        return self._answers.pop(0)

    async def permission(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        options = params.get("options", []) if isinstance(params, dict) else []
        for option in options:
            if str(option.get("kind", "")).startswith("allow"):
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    async def _ask(self) -> dict[str, Any]:
        while True:
            _remark("answer the elicitation with an ACP result as JSON (empty line: decline):")
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line.strip():
                return DECLINE
            try:
                answer = json.loads(line)
            except ValueError:
                _remark("that is not JSON")
                continue
            if isinstance(answer, dict):
                return answer
            _remark('the answer must be a JSON object, such as {"action": "accept", "content": {...}}')


async def _session(
    agent_argv: list[str], *, elicitation: bool, prompt: str, answers: list[dict[str, Any]] | None, cwd: str
) -> int:
    try:
        process = await asyncio.create_subprocess_exec(
            *agent_argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )
    except OSError as error:
        _remark(f"cannot start {agent_argv[0]!r}: {error.strerror or error}")
        return 1
    assert process.stdin
    assert process.stdout
    answerer = _Answerer(answers)
    peer = JsonRpcPeer(
        process.stdout,
        process.stdin,
        requests={"elicitation/create": answerer.elicitation, "session/request_permission": answerer.permission},
        observe=_print_frame,
        label="agent",
    )
    reading = asyncio.create_task(peer.run())
    capabilities = client_capabilities(None, elicitation=elicitation)
    try:
        await peer.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities, "clientInfo": {"name": "acpdbg"}},
        )
        session = await peer.request("session/new", {"cwd": cwd, "mcpServers": []})
        session_id = session.get("sessionId") if isinstance(session, dict) else None
        result = await peer.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": prompt}]}
        )
    except (JsonRpcError, PeerClosed) as error:
        _remark(f"the session failed: {error}")
        exit_code = 1
    else:
        stop_reason = result.get("stopReason") if isinstance(result, dict) else None
        _remark(f"stopReason={stop_reason} prompts=1 elicitations={answerer.elicitations}")
        exit_code = 0
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), STOP_SECONDS)
    except TimeoutError:
        process.terminate()
        await process.wait()
    await reading
    return exit_code


def _print_frame(direction: Direction, line: str) -> None:
    print(">>" if direction == "out" else "<<", line, flush=True)


def _remark(text: str) -> None:
    print(f"acpdbg: {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
