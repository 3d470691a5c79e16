"""A scripted stand-in for the OpenAI Responses API, as Codex reads it.

Codex (inside ``@agentclientprotocol/codex-acp``) is signed in through the ACP
``gateway`` method with this server's ``/v1`` as its base URL, and then calls
``POST /v1/responses`` with ``stream: true``. The fake plays one scripted
conversation:

1. the operator's prompt (a user message holding ``marker``) when the tool the
   script wants is offered: reply with a ``function_call`` of it (its
   ``arguments`` the scripted JSON);
2. a request whose input carries the ``function_call_output`` of a call it
   issued: record that output and reply ``final_text``;
3. the title side call (a turn of its own, on a smaller model, quoting the
   prompt): reply with a title;
4. anything else (a prompt without the marker): reply with short text.

Codex offers most tools in the request's ``tools``; some (in Plan mode,
``request_user_input``) arrive as an input item ``{"type":
"additional_tools"}``: both are looked at. Every request is recorded, with the
decision taken, so a test can assert what the model received back. The
answer is a server-sent event stream with the events Codex reads:
``response.created``, ``response.output_item.added``, the deltas,
``response.output_item.done`` and ``response.completed``.

Only the standard library: the server runs in a thread, beside the test's
event loop, and never blocks it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from testing_support.fake_model_server import BackgroundServer, JsonHandler, QuietServer, sse_stream

#: Never issue more calls than this, whatever Codex sends: a fake that loops
#: would otherwise spin Codex for the test's whole timeout.
MAX_CALLS = 3
MODEL = "gpt-5-codex"
#: Codex's title side call quotes the operator's first message: it must not get the scripted tool call.
TITLE_MARKER = "generate a very short title"
#: The input items that carry a tool's result back to the model.
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


@dataclass
class Exchange:
    """One HTTP request the fake received and how it answered."""

    method: str
    path: str
    body: Any  # decoded JSON, or None
    kind: str = "other"  # call | after_output | no_tool | side | title | other
    call_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: ``time.time()`` when its body had been read, and when the answer had been written.
    t_received: float = 0.0
    t_sent: float = 0.0

    @property
    def tool_names(self) -> list[str]:
        return offered_tools(self.body)

    def outputs(self) -> list[dict[str, Any]]:
        """The ``function_call_output`` items of its input."""
        return [item for item in _input(self.body) if item.get("type") in OUTPUT_TYPES]


@dataclass
class Call:
    """One tool call the script makes: ``name`` with ``arguments`` (JSON-encoded for the wire).

    With ``code`` it is a call of a custom (freeform) tool instead, whose input
    is that text: Codex's ``exec``, which runs JavaScript that calls the nested
    tools (``tools.exec_command``, an MCP server's ``tools.mcp__<server>__<tool>``).
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    code: str | None = None


def offered_tools(body: Any) -> list[str]:
    """Every tool name the request offers, in ``tools`` or in ``additional_tools`` input items."""
    names: list[str] = []
    if not isinstance(body, dict):
        return names
    lists = [body.get("tools") or []]
    lists += [item.get("tools") or [] for item in _input(body) if item.get("type") == "additional_tools"]
    for tools in lists:
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            # A namespace (``functions``, an MCP server's) nests its tools; the model calls them by their own name.
            nested = tool.get("tools") if tool.get("type") == "namespace" else [tool]
            names += [
                inner["name"]
                for inner in nested or []
                if isinstance(inner, dict) and isinstance(inner.get("name"), str)
            ]
    return names


class FakeResponsesApi(BackgroundServer):
    """The scripted Responses API on 127.0.0.1, serving from a thread until ``stop()``."""

    def __init__(
        self,
        *,
        marker: str,
        call: Call,
        final_text: str,
        no_tool_text: str = "No such tool here.",
        retry_on: str | None = None,
        max_calls: int = MAX_CALLS,
    ) -> None:
        """``retry_on``: a text in the call's output on which the model calls again (an MCP server still starting).

        ``max_calls``: at most this many calls in all (a benchmark asks one per prompt, many times).
        """
        self.marker = marker
        self.max_calls = max_calls
        self.retry_on = retry_on
        self.call = call
        self.final_text = final_text
        self.no_tool_text = no_tool_text
        self.exchanges: list[Exchange] = []
        self.issued: list[str] = []  # call ids, in order
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _ResponsesHandler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake responses api", daemon=True)

    @property
    def base_url(self) -> str:
        """What the gateway sign-in names as ``baseUrl``: Codex appends ``/responses``."""
        return f"{self.url}/v1"

    # What the test reads --------------------------------------------------

    def of_kind(self, *kinds: str) -> list[Exchange]:
        with self._lock:
            return [exchange for exchange in self.exchanges if exchange.kind in kinds]

    def outputs_received(self) -> list[str]:
        """The ``output`` of every ``function_call_output`` the model got for a call it issued, in order."""
        found = []
        for exchange in self.of_kind("after_output"):
            found += [item.get("output") for item in exchange.outputs() if item.get("call_id") in self.issued]
        return [output if isinstance(output, str) else json.dumps(output) for output in found]

    def summary(self) -> list[str]:
        """One line per request, for failure messages."""
        with self._lock:
            return [f"{e.method} {e.path} -> {e.kind} tools={e.tool_names}" for e in self.exchanges]

    # The script -----------------------------------------------------------

    def decide(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """``(kind, output items)`` for one /v1/responses request."""
        items = _input(body)
        with self._lock:
            issued = set(self.issued)
        # Only this turn's: a later prompt's request carries the earlier turns' outputs too.
        user_turns = [index for index, item in enumerate(items) if item.get("role") == "user"]
        this_turn = items[user_turns[-1] + 1 :] if user_turns else items
        outputs = [item for item in this_turn if item.get("type") in OUTPUT_TYPES and item.get("call_id") in issued]
        if outputs:
            last = json.dumps(outputs[-1].get("output"))
            if self.retry_on and self.retry_on in last and len(issued) < self.max_calls:
                return self._issue()
            return "after_output", [_message(self.final_text)]
        last_user = next((item for item in reversed(items) if item.get("role") == "user"), None)
        if last_user is None or self.marker not in _text_of(last_user):
            return "side", [_message("OK.")]
        if TITLE_MARKER in _text_of(last_user):
            return "title", [_message("Scripted conversation")]
        if self.call.name not in offered_tools(body):
            return "no_tool", [_message(self.no_tool_text)]
        return self._issue()

    def _issue(self) -> tuple[str, list[dict[str, Any]]]:
        with self._lock:
            if len(self.issued) >= self.max_calls:
                return "side", [_message("Giving up.")]
            call_id = f"call_fake_{len(self.issued) + 1}"
            self.issued.append(call_id)
        return "call", [_function_call(call_id, self.call)]

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def _input(body: Any) -> list[dict[str, Any]]:
    items = body.get("input") if isinstance(body, dict) else None
    return [item for item in items or [] if isinstance(item, dict)] if isinstance(items, list) else []


def _text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _function_call(call_id: str, call: Call) -> dict[str, Any]:
    if call.code is not None:
        return {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": call_id,
            "name": call.name,
            "input": call.code,
        }
    return {
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": call.name,
        "arguments": json.dumps(call.arguments),
    }


def _usage() -> dict[str, Any]:
    return {
        "input_tokens": 25,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 35,
    }


def sse_events(response_id: str, output: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The stream for one response: created, each item added/deltas/done, completed."""
    base = {"id": response_id, "object": "response", "model": MODEL, "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": base}
    done_items = []
    for index, item in enumerate(output):
        item = {**item, "id": f"{'msg' if item['type'] == 'message' else 'fc'}_{response_id}_{index}"}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
            yield {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "delta": text,
            }
        elif item["type"] == "custom_tool_call":
            yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "input": ""}}
            yield {
                "type": "response.custom_tool_call_input.delta",
                "item_id": item["id"],
                "output_index": index,
                "delta": item["input"],
            }
        else:
            yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}}
            yield {
                "type": "response.function_call_arguments.delta",
                "item_id": item["id"],
                "output_index": index,
                "delta": item["arguments"],
            }
            yield {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": index,
                "arguments": item["arguments"],
            }
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
        done_items.append(item)
    yield {
        "type": "response.completed",
        "response": {**base, "status": "completed", "output": done_items, "usage": _usage()},
    }


class _Server(QuietServer):
    fake: FakeResponsesApi


class _ResponsesHandler(JsonHandler):
    server: _Server

    def do_GET(self) -> None:
        self.read_body()
        self.server.fake.record(Exchange("GET", self.path, None))
        if self.path.split("?")[0] == "/v1/models":
            self.send_json(200, {"object": "list", "data": []})
        else:
            self._error(404, f"the fake Responses API has no {self.path}")

    def do_POST(self) -> None:
        raw = self.read_body()
        received = time.time()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        fake = self.server.fake
        if self.path.split("?")[0] != "/v1/responses" or not isinstance(body, dict):
            fake.record(Exchange("POST", self.path, body))
            self._error(404, f"the fake Responses API has no {self.path}")
            return
        kind, output = fake.decide(body)
        call_id = next((item["call_id"] for item in output if "call_id" in item), None)
        exchange = Exchange("POST", self.path, body, kind, call_id, headers=dict(self.headers.items()))
        exchange.t_received = received
        fake.record(exchange)
        response_id = f"resp_fake{len(fake.exchanges):04d}"
        stream = sse_stream((event["type"], event) for event in sse_events(response_id, output))
        self.send(200, stream, "text/event-stream")
        exchange.t_sent = time.time()

    def _error(self, status: int, message: str) -> None:
        self.send_json(status, {"error": {"type": "invalid_request_error", "message": message}})
