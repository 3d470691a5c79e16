"""A scripted stand-in for the Anthropic Messages API (the proxy that refuses everything is re-exported).

The Claude CLI inside the real bridge is pointed at ``FakeMessagesApi`` with
``ANTHROPIC_BASE_URL``. It plays one scripted conversation
(``docs/decisions/bridge-ab.md#running-the-real-bridge-offline``):

1. the operator's prompt (a user message holding ``marker``) in the main
   conversation: if the request offers the ``AskUserQuestion`` tool, reply
   with a ``tool_use`` of it carrying ``questions`` (``stop_reason: tool_use``);
   otherwise reply ``no_tool_text`` with ``end_turn``;
2. a user message carrying the ``tool_result`` of a tool use it issued: reply
   ``final_text`` with ``end_turn``;
3. anything else is a side call (title generation, 0.101.0's prompt
   suggestion, ...): reply with short text and ``end_turn``.

Trailing ``role: "system"`` messages, which CLI 2.1.318 appends after the user
turn, are skipped before deciding. Every request is recorded, with the
decision taken, so a test can assert which tools were offered and which tool
result the model got. Responses are SSE (``stream: true``) with the event
order the real API uses, or a plain JSON message otherwise.

Only the standard library: the servers run in threads, beside the test's
event loop, and never block it (``testing_support.fake_model_server``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from testing_support.fake_model_server import BackgroundServer as _Background
from testing_support.fake_model_server import DenyingProxy, JsonHandler, sse_stream
from testing_support.fake_model_server import QuietServer as _QuietServer

__all__ = ["DenyingProxy", "Exchange", "FakeMessagesApi", "sse_events", "tool_result_text"]

#: The 0.101.0 prompt-suggestion side call (answering it with a tool_use is rejected).
SUGGESTION_MARKER = "Reply with ONLY the suggestion"
#: Never issue more tool uses than this, whatever the CLI sends: a fake that
#: loops would otherwise spin the CLI for the test's whole timeout.
MAX_TOOL_USES = 3
#: The Claude CLI's tools for waiting on MCP servers still connecting, and for loading deferred tools.
WAIT_FOR_MCP = "WaitForMcpServers"
TOOL_SEARCH = "ToolSearch"
MODEL = "claude-sonnet-4-5"


@dataclass
class Exchange:
    """One HTTP request the fake received and how it answered."""

    method: str
    path: str
    body: Any  # decoded JSON, or None
    kind: str = "other"  # ask | wait | no_tool | after_tool_result | side | hello | count_tokens | other
    tool_use_id: str | None = None

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [tool.get("name") for tool in tools or [] if isinstance(tool, dict)]

    @property
    def last_message(self) -> dict[str, Any] | None:
        return _last_turn(self.body)

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last (non-system) message."""
        message = self.last_message or {}
        return [block for block in _blocks(message) if block.get("type") == "tool_result"]


def tool_result_text(block: dict[str, Any]) -> str:
    """A tool_result block's content as text (it may be a string or text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class FakeMessagesApi(_Background):
    """The scripted Messages API on 127.0.0.1, serving from a thread until ``stop()``."""

    def __init__(
        self,
        *,
        marker: str,
        questions: list[dict[str, Any]],
        final_text: str,
        no_tool_text: str,
        tool: str = "AskUserQuestion",
    ) -> None:
        """``tool`` is the tool the model calls when offered: AskUserQuestion (with ``questions``),
        or an MCP server's tool by the CLI's name for it (``mcp__<server>__<tool>``, no input)."""
        self.marker = marker
        self.tool = tool
        self.questions = questions
        self.final_text = final_text
        self.no_tool_text = no_tool_text
        self.exchanges: list[Exchange] = []
        self.issued: dict[str, dict[str, Any]] = {}  # tool-use id -> input
        self.waits: set[str] = set()  # tool-use ids of WaitForMcpServers calls
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _MessagesHandler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake messages api", daemon=True)

    # What the test reads --------------------------------------------------

    def of_kind(self, *kinds: str) -> list[Exchange]:
        with self._lock:
            return [exchange for exchange in self.exchanges if exchange.kind in kinds]

    def main_requests(self) -> list[Exchange]:
        """The main conversation's requests: the prompt and the tool-result follow-up."""
        return self.of_kind("ask", "no_tool", "after_tool_result")

    def summary(self) -> list[str]:
        """One line per request, for failure messages."""
        with self._lock:
            return [
                f"{e.method} {e.path} -> {e.kind} tools={len(e.tool_names)}"
                + (f" AskUserQuestion={'AskUserQuestion' in e.tool_names}" if e.tool_names else "")
                for e in self.exchanges
            ]

    # The script -----------------------------------------------------------

    def decide(self, body: Any) -> tuple[str, list[dict[str, Any]], str]:
        """``(kind, content blocks, stop_reason)`` for one /v1/messages request."""
        last = _last_turn(body)
        if last is None or last.get("role") != "user":
            return "side", [_text("OK.")], "end_turn"
        blocks = _blocks(last)
        with self._lock:
            answered = [b for b in blocks if b.get("type") == "tool_result" and b.get("tool_use_id") in self.issued]
            waited = bool(answered) and all(b["tool_use_id"] in self.waits for b in answered)
        if answered and not waited:
            return "after_tool_result", [_text(self.final_text)], "end_turn"
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tools = [tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)]
        if not waited and (SUGGESTION_MARKER in text or self.marker not in text or not tools):
            return "side", [_text("OK.")], "end_turn"
        loader = next((name for name in (TOOL_SEARCH, WAIT_FOR_MCP) if name in tools), None)
        if self.tool not in tools and loader and self.tool.startswith("mcp__") and len(self.waits) < MAX_TOOL_USES:
            # An MCP tool may not be in the list yet: older CLIs connect MCP
            # servers in the background (a model waits with WaitForMcpServers),
            # newer ones defer MCP tools until ToolSearch loads them.
            tool_input = {"query": f"select:{self.tool}"} if loader == TOOL_SEARCH else {}
            with self._lock:
                tool_use_id = f"toolu_fake{len(self.issued) + 1:02d}"
                self.issued[tool_use_id] = tool_input
                self.waits.add(tool_use_id)
            return "wait", [{"type": "tool_use", "id": tool_use_id, "name": loader, "input": tool_input}], "tool_use"
        if self.tool not in tools:
            return "no_tool", [_text(self.no_tool_text)], "end_turn"
        with self._lock:
            if len(self.issued) >= MAX_TOOL_USES:
                return "side", [_text("Giving up on questions.")], "end_turn"
            tool_use_id = f"toolu_fake{len(self.issued) + 1:02d}"
            tool_input = {"questions": self.questions} if self.tool == "AskUserQuestion" else {}
            self.issued[tool_use_id] = tool_input
        return (
            "ask",
            [{"type": "tool_use", "id": tool_use_id, "name": self.tool, "input": tool_input}],
            "tool_use",
        )

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def _last_turn(body: Any) -> dict[str, Any] | None:
    """The last message that is not a trailing ``role: "system"`` one."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") != "system":
            return message
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _usage() -> dict[str, int]:
    return {"input_tokens": 25, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _message(message_id: str, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(),
    }


def sse_events(
    message_id: str, content: list[dict[str, Any]], stop_reason: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The stream for one message: message_start, each block start/delta(s)/stop, message_delta, message_stop."""
    yield "message_start", {"type": "message_start", "message": _message(message_id, [], None)}
    for index, block in enumerate(content):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": _text("")}
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                },
            )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            partial = json.dumps(block["input"])
            middle = len(partial) // 2  # the input arrives as partial JSON, in pieces
            for piece in (partial[:middle], partial[middle:]):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class _Server(_QuietServer):
    fake: FakeMessagesApi


class _MessagesHandler(JsonHandler):
    server: _Server

    def do_HEAD(self) -> None:
        self.read_body()
        kind = "hello" if self.path.split("?")[0] == "/api/hello" else "other"
        self.server.fake.record(Exchange("HEAD", self.path, None, kind))
        self._send(200 if kind == "hello" else 404, b"", "text/plain", head=True)

    def do_GET(self) -> None:
        self.read_body()
        kind = "hello" if self.path.split("?")[0] == "/api/hello" else "other"
        self.server.fake.record(Exchange("GET", self.path, None, kind))
        if kind == "hello":
            self._send(200, b"{}", "application/json")
        else:
            self._error(404, "not_found_error", f"the fake Messages API has no {self.path}")

    def do_POST(self) -> None:
        body = self.read_json()
        path = self.path.split("?")[0]
        fake = self.server.fake
        if path == "/v1/messages/count_tokens":
            fake.record(Exchange("POST", self.path, body, "count_tokens"))
            self._send(200, json.dumps({"input_tokens": 25}).encode(), "application/json")
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            fake.record(Exchange("POST", self.path, body, "other"))
            self._error(404, "not_found_error", f"the fake Messages API has no {self.path}")
            return
        kind, content, stop_reason = fake.decide(body)
        tool_use_id = next((block["id"] for block in content if block["type"] == "tool_use"), None)
        fake.record(Exchange("POST", self.path, body, kind, tool_use_id))
        message_id = f"msg_fake{len(fake.exchanges):04d}"
        if body.get("stream"):
            self._send(200, sse_stream(sse_events(message_id, content, stop_reason)), "text/event-stream")
        else:
            self._send(200, json.dumps(_message(message_id, content, stop_reason)).encode(), "application/json")

    def _error(self, status: int, kind: str, message: str) -> None:
        body = {"type": "error", "error": {"type": kind, "message": message}}
        self._send(status, json.dumps(body).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str, *, head: bool = False) -> None:
        self.send(status, body, content_type, head=head, request_id="req_fake")
