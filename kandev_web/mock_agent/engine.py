"""The interpreter that plays a scenario: a JSON list of steps.

A scenario is data (``scenarios/<name>.json``)::

    {"description": "...", "steps": [{"say": "Hello"}, {"sleep_ms": 50}, ...]}

Each step is an object with exactly one key, the step's name, and its
argument. Strings in arguments are templates: ``{name}`` or ``{name.path.0}``
is replaced by a variable (``session_id``, ``prompt``, ``args``, the words of
the prompt after ``/e2e:<scenario>``, ``turn``, ``said_before`` (the
operator's earlier prompts in this session, quoted), ``mode`` and
``options`` (the session's current mode and its on/off options, as
``verbose on``, or ``none``; ``agent.py``), ``i`` and ``n`` inside
``repeat``, and whatever a request step stored ``as``), rendered as text, or
``none`` when missing; ``{name|default}`` by ``default`` when it is missing.

Steps:

- ``say`` / ``think``: text, streamed as several message / thought chunks
- ``tool_call``, ``tool_call_update``: the ACP fields of that session update
- ``plan``: a list of ACP plan entries
- ``update``: any session update, verbatim
- ``request``: ``{"method", "params", "params_file", "as"}`` sends any request
  to the client and stores its result (or ``{"error": ...}``) under ``as``
  (default ``result``); ``params_file`` (relative to ``scenarios/``) is loaded
  first and ``params`` merged over it (``scenarios/forms/`` holds the
  elicitation forms, copies of frames captured from the Claude bridge). An
  elicitation scenario is
  ``{"request": {"method": "elicitation/create", "params_file": ...,
  "params": {"sessionId": "{session_id}"}, "as": "answer"}}`` followed by
  ``{"say": "You answered {answer.action}: {answer.content}"}``.
  ``"withdraw_after_ms": N`` withdraws the request with ``$/cancel_request``
  when no answer came within N ms, then still waits for the answer a client
  owes to a withdrawn request. ``"wait": false`` sends it and goes on, as
  Codex's async form does: ``await_answer`` takes its answer later in the
  turn, and one still unanswered when the turn ends is withdrawn with
  ``$/cancel_request`` (codex-acp 2.6.0 cancels its async questions then)
- ``await_answer``: ``{"as", "timeout_ms"}`` waits up to ``timeout_ms`` for the
  answer to the request sent ``"wait": false`` under ``as``, and stores it
  there (``none`` if it did not come in time)
- ``notify``: ``{"method", "params"}`` sends any notification to the client
  (``elicitation/complete`` after a URL-mode request, say)
- ``request_permission``: ``session/request_permission`` params without the
  session id; the outcome is stored as ``permission``
- ``stream``: ``{"chunks", "per_second", "text"}`` sends ``chunks`` message
  chunks, one every ``1 / per_second`` s of a steady clock (one sent late does
  not delay the rest), each ``text`` with ``n`` (1, 2, ...) and ``now``, the
  wall-clock time (``time.time()``) it is sent at; both numbers may be
  templates (``"{args.0|300}"``); what ``benchmarks/streaming.py`` measures with
- ``sleep_ms``: a pause that a cancel cuts short
- ``repeat``: ``{"times": N, "steps": [...]}``
- ``parallel``: a list of step lists, played at the same time in one turn
  (say, two requests in flight at once); it ends when every branch has, and a
  ``stop`` in one branch ends the others
- ``write_file``: ``{"path", "text"}`` writes ``text`` to ``path`` (relative,
  inside the session's ``cwd``) and reports it as an edit tool call with its
  diff, as a coding agent does
- ``stderr``: a line of noise on stderr
- ``crash``: ``{"exit_code": N}``, exit at once, mid-turn
- ``stop``: end the turn now with this ``stopReason``
- ``call_mcp_tool`` and ``list_mcp_tools`` (``mcp_steps.py``): use an MCP
  server the client gave the session, over HTTP or stdio

Every scenario honours ``session/cancel``: it is checked before each step,
inside pauses and while a request waits, and the turn then ends with
``stopReason: "cancelled"``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kandev_web.agentctl.jsonrpc import JsonRpcError, JsonRpcPeer

SCENARIOS_DIR = Path(__file__).parent / "scenarios"
_SCENARIO_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?:\|([^{}]*))?\}")
#: A chunk of ``say`` or ``think`` holds this many words.
_WORDS_PER_CHUNK = 3

Step = dict[str, Any]


class ScenarioError(ValueError):
    """A scenario that does not exist or cannot be played."""


class TurnCancelled(Exception):
    """The client cancelled the turn."""


class StopTurn(Exception):
    def __init__(self, stop_reason: str) -> None:
        super().__init__(stop_reason)
        self.stop_reason = stop_reason


@dataclass
class Turn:
    """One prompt being answered: where output goes and what templates can see."""

    peer: JsonRpcPeer
    session_id: str
    cancelled: asyncio.Event
    variables: dict[str, Any] = field(default_factory=dict)
    #: The session's working directory (``session/new``'s ``cwd``), where ``write_file`` writes.
    cwd: str = ""
    #: Sees every update the turn sends: the agent keeps its side of the conversation.
    on_update: Callable[[dict[str, Any]], None] | None = None
    #: Requests sent ``"wait": false``, by their ``as``: their ids and the futures of their answers.
    unawaited: dict[str, tuple[Any, asyncio.Future[Any]]] = field(default_factory=dict)

    async def update(self, update: dict[str, Any]) -> None:
        if self.cancelled.is_set():
            raise TurnCancelled
        self.peer.notify("session/update", {"sessionId": self.session_id, "update": update})
        if self.on_update is not None:
            self.on_update(update)
        await self.peer.drain()

    async def request(self, method: str, params: Any, *, withdraw_after: float | None = None) -> Any:
        """Send a request to the client; a cancel stops waiting for its answer.

        With ``withdraw_after`` (seconds), a request still unanswered by then is
        withdrawn with ``$/cancel_request`` and its answer is still awaited.
        """
        request_id, answer = self.peer.send_request(method, params)
        await self.peer.drain()
        if not await self.wait_for(answer, withdraw_after) and not self.cancelled.is_set():
            self.peer.notify("$/cancel_request", {"requestId": request_id})
            await self.peer.drain()
            await self.wait_for(answer)
        if answer.done():
            return answer.result()
        # As the Claude bridge does: withdraw what the turn no longer needs,
        # and ignore the answer should one still come.
        answer.cancel()
        self.peer.notify("$/cancel_request", {"requestId": request_id})
        raise TurnCancelled

    async def wait_for(self, future: asyncio.Future[Any], timeout: float | None = None) -> bool:
        """Until ``future`` is done, the turn is cancelled or ``timeout`` (seconds) passed: whether it is done."""
        cancel = asyncio.ensure_future(self.cancelled.wait())
        try:
            await asyncio.wait({future, cancel}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
        return future.done()

    async def pause(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.cancelled.wait(), seconds)
        except TimeoutError:
            return
        raise TurnCancelled

    def render(self, value: Any) -> Any:
        if isinstance(value, str):
            return _PLACEHOLDER.sub(self._placeholder, value)
        if isinstance(value, list):
            return [self.render(item) for item in value]
        if isinstance(value, dict):
            return {key: self.render(item) for key, item in value.items()}
        return value

    def _placeholder(self, match: re.Match[str]) -> str:
        value = _lookup(self.variables, match[1])
        return match[2] if value is None and match[2] is not None else _as_text(value)


StepFunction = Callable[[Turn, Any], Awaitable[None]]
STEPS: dict[str, StepFunction] = {}


def step(name: str) -> Callable[[StepFunction], StepFunction]:
    def register(function: StepFunction) -> StepFunction:
        STEPS[name] = function
        return function

    return register


# Playing ------------------------------------------------------------------


async def play(turn: Turn, steps: list[Step]) -> str:
    """Play the steps and return the turn's ACP ``stopReason``."""
    try:
        await run_steps(turn, steps)
    except TurnCancelled:
        return "cancelled"
    except StopTurn as stop:
        return stop.stop_reason
    finally:
        _withdraw_unanswered(turn)
    return "cancelled" if turn.cancelled.is_set() else "end_turn"


def _withdraw_unanswered(turn: Turn) -> None:
    """The turn is over: what it asked without waiting and is still unanswered is withdrawn, as Codex does."""
    for request_id, answer in turn.unawaited.values():
        if not answer.done():
            answer.cancel()
            turn.peer.notify("$/cancel_request", {"requestId": request_id})


async def run_steps(turn: Turn, steps: list[Step]) -> None:
    for each in steps:
        if turn.cancelled.is_set():
            raise TurnCancelled
        ((name, argument),) = each.items()
        await STEPS[name](turn, argument)


# Loading ------------------------------------------------------------------


def scenario_names() -> list[str]:
    return sorted(path.stem for path in SCENARIOS_DIR.glob("*.json"))


def load_scenario(name: str) -> list[Step]:
    """The steps of ``scenarios/<name>.json``, checked before anything is played."""
    path = SCENARIOS_DIR / f"{name}.json"
    if not _SCENARIO_NAME.fullmatch(name) or not path.is_file():
        raise ScenarioError(f"there is no scenario called {name!r}")
    scenario = json.loads(path.read_text())
    return check_steps(scenario.get("steps") if isinstance(scenario, dict) else None, where=name)


def check_steps(steps: Any, *, where: str) -> list[Step]:
    """Return ``steps`` if every step is known and well-formed; raise ``ScenarioError`` if not."""
    if not isinstance(steps, list):
        raise ScenarioError(f"{where}: steps must be a list")
    for index, each in enumerate(steps):
        if not (isinstance(each, dict) and len(each) == 1 and next(iter(each)) in STEPS):
            raise ScenarioError(f"{where}: step {index} must be one of {sorted(STEPS)} with its argument")
        if "repeat" in each:
            check_steps(each["repeat"].get("steps"), where=f"{where}: step {index}")
        if "parallel" in each:
            branches = each["parallel"]
            if not isinstance(branches, list) or not branches:
                raise ScenarioError(f"{where}: step {index}: parallel must be a non-empty list of step lists")
            for number, branch in enumerate(branches):
                check_steps(branch, where=f"{where}: step {index} branch {number}")
    return steps


# Steps --------------------------------------------------------------------


@step("say")
async def _say(turn: Turn, text: str) -> None:
    for chunk in _chunks(turn.render(text)):
        await turn.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": chunk}})


@step("think")
async def _think(turn: Turn, text: str) -> None:
    for chunk in _chunks(turn.render(text)):
        await turn.update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": chunk}})


@step("tool_call")
async def _tool_call(turn: Turn, fields: dict[str, Any]) -> None:
    await turn.update({"sessionUpdate": "tool_call", **turn.render(fields)})


@step("tool_call_update")
async def _tool_call_update(turn: Turn, fields: dict[str, Any]) -> None:
    await turn.update({"sessionUpdate": "tool_call_update", **turn.render(fields)})


@step("plan")
async def _plan(turn: Turn, entries: list[dict[str, Any]]) -> None:
    await turn.update({"sessionUpdate": "plan", "entries": turn.render(entries)})


@step("update")
async def _update(turn: Turn, update: dict[str, Any]) -> None:
    await turn.update(turn.render(update))


@step("request")
async def _request(turn: Turn, spec: dict[str, Any]) -> None:
    params: Any = {}
    if "params_file" in spec:
        params = json.loads((SCENARIOS_DIR / spec["params_file"]).read_text())
    if "params" in spec:
        params = {**params, **spec["params"]}
    name = spec.get("as", "result")
    if spec.get("wait", True) is False:
        turn.unawaited[name] = turn.peer.send_request(spec["method"], turn.render(params))
        await turn.peer.drain()
        return
    try:
        withdraw_after = spec["withdraw_after_ms"] / 1000 if "withdraw_after_ms" in spec else None
        result = await turn.request(spec["method"], turn.render(params), withdraw_after=withdraw_after)
    except JsonRpcError as error:
        result = {"error": error.to_object()}
    turn.variables[name] = result


@step("await_answer")
async def _await_answer(turn: Turn, spec: dict[str, Any]) -> None:
    _, answer = turn.unawaited[spec["as"]]
    answered = await turn.wait_for(answer, float(turn.render(str(spec["timeout_ms"]))) / 1000)
    if turn.cancelled.is_set():
        raise TurnCancelled
    if answered and not answer.cancelled():
        error = answer.exception()
        result = {"error": error.to_object()} if isinstance(error, JsonRpcError) else answer.result()
        turn.variables[spec["as"]] = result


@step("notify")
async def _notify(turn: Turn, spec: dict[str, Any]) -> None:
    if turn.cancelled.is_set():
        raise TurnCancelled
    turn.peer.notify(spec["method"], turn.render(spec.get("params", {})))
    await turn.peer.drain()


@step("request_permission")
async def _request_permission(turn: Turn, params: dict[str, Any]) -> None:
    try:
        result = await turn.request("session/request_permission", {"sessionId": turn.session_id, **turn.render(params)})
    except JsonRpcError as error:
        result = {"outcome": {"outcome": "error", "error": error.to_object()}}
    turn.variables["permission"] = result.get("outcome") if isinstance(result, dict) else None


@step("stream")
async def _stream(turn: Turn, spec: dict[str, Any]) -> None:
    chunks, per_second = int(turn.render(str(spec["chunks"]))), float(turn.render(str(spec["per_second"])))
    start = asyncio.get_running_loop().time()
    for index in range(chunks):
        await turn.pause(max(0.0, start + index / per_second - asyncio.get_running_loop().time()))
        turn.variables.update(n=index + 1, now=f"{time.time():.6f}")
        text = turn.render(spec["text"])
        await turn.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


@step("sleep_ms")
async def _sleep(turn: Turn, milliseconds: int) -> None:
    await turn.pause(milliseconds / 1000)


@step("repeat")
async def _repeat(turn: Turn, spec: dict[str, Any]) -> None:
    for index in range(spec["times"]):
        turn.variables.update(i=index, n=index + 1)
        await run_steps(turn, spec["steps"])


@step("parallel")
async def _parallel(turn: Turn, branches: list[list[Step]]) -> None:
    tasks = [asyncio.ensure_future(run_steps(turn, branch)) for branch in branches]
    try:
        _, running = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        if running and not turn.cancelled.is_set():
            # A branch stopped the turn. On a cancel, by contrast, every branch
            # ends by itself, withdrawing its own request as it goes.
            for task in running:
                task.cancel()
        await asyncio.wait(tasks)
    finally:
        for task in tasks:
            task.cancel()
    for task in tasks:
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error


def _write_inside(cwd: str, path: str, text: str) -> tuple[Path, str | None]:
    """Write ``text`` to ``path`` inside ``cwd``: the file, and what it held before (None if it was new)."""
    root = Path(cwd).resolve()
    target = (root / path).resolve()
    if not cwd or not target.is_relative_to(root) or target == root:
        raise ScenarioError(f"write_file: {path!r} is not a file inside the session's cwd")
    old = target.read_text() if target.is_file() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target, old


@step("write_file")
async def _write_file(turn: Turn, spec: dict[str, Any]) -> None:
    spec = turn.render(spec)
    # In a thread: the agent's loop keeps answering the client while the disk works.
    target, old = await asyncio.to_thread(_write_inside, turn.cwd, spec["path"], spec["text"])
    diff = {"type": "diff", "path": str(target), "oldText": old, "newText": spec["text"]}
    call = f"write-{turn.variables.get('turn', '')}-{spec['path']}"
    await turn.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call,
            "title": f"Write {spec['path']}",
            "kind": "edit",
            "status": "completed",
            "locations": [{"path": str(target)}],
            "content": [diff],
        }
    )


@step("read_env")
async def _read_env(turn: Turn, names: list[str]) -> None:
    """Make environment variables ``{env.NAME}`` to later steps: what the agent was really given."""
    turn.variables["env"] = {**turn.variables.get("env", {}), **{name: os.environ.get(name) for name in names}}


@step("stderr")
async def _stderr(turn: Turn, text: str) -> None:
    print(turn.render(text), file=sys.stderr, flush=True)


@step("crash")
async def _crash(turn: Turn, spec: dict[str, Any]) -> None:
    await turn.peer.drain()
    # os._exit, not sys.exit: a crash runs no cleanup and answers nothing.
    os._exit(spec.get("exit_code", 1))


@step("stop")
async def _stop(turn: Turn, stop_reason: str) -> None:
    raise StopTurn(stop_reason)


# Helpers ------------------------------------------------------------------


def _chunks(text: str) -> list[str]:
    """Split text into a few words per chunk; joined, the chunks are the text."""
    words = re.findall(r"\s*\S+\s*", text)
    return ["".join(words[start : start + _WORDS_PER_CHUNK]) for start in range(0, len(words), _WORDS_PER_CHUNK)]


def _lookup(variables: dict[str, Any], path: str) -> Any:
    value: Any = variables
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
