"""A scripted stand-in for OpenAI's Chat Completions API, as Kimi Code calls it.

Kimi Code is pointed at ``FakeChatCompletions`` by a provider of ``type =
"openai"`` in its ``config.toml`` (``testing_support.kimi.harness``). The fake
plays one conversation (``docs/testing.md#kimi-code-offline``):

1. a user message holding ``marker`` while the request offers the
   ``AskUserQuestion`` tool: reply with a tool call of it carrying
   ``questions`` (``finish_reason: tool_calls``);
2. a ``role: "tool"`` message answering a call it issued (Kimi may append
   ``<system-reminder>`` user messages after it): record what the tool
   returned (what the model "saw") and reply ``final_text``;
3. anything else (a side call, a prompt without the tool): a short text.

Every request is recorded with the decision taken. Responses are streamed
(``stream: true``: ``chat.completion.chunk`` frames then ``[DONE]``), or one
``chat.completion`` otherwise.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from testing_support.fake_model_server import BackgroundServer, JsonHandler, QuietServer, sse_stream

#: Never issue more tool calls than this: a fake that loops would spin the agent for the test's whole timeout.
MAX_TOOL_CALLS = 3
ASK_TOOL = "AskUserQuestion"
MODEL = "fake-model"


@dataclass
class Exchange:
    """One request the fake received and how it answered."""

    path: str
    body: Any  # decoded JSON, or None
    kind: str = "other"  # ask | after_tool_result | no_tool | side | other
    call_id: str | None = None

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [str((tool.get("function") or {}).get("name")) for tool in tools or [] if isinstance(tool, dict)]


class FakeChatCompletions(BackgroundServer):
    """The scripted Chat Completions API on 127.0.0.1, serving from a thread until ``stop()``."""

    def __init__(self, *, marker: str, questions: list[dict[str, Any]], final_text: str, no_tool_text: str) -> None:
        self.marker = marker
        self.questions = questions
        self.final_text = final_text
        self.no_tool_text = no_tool_text
        self.exchanges: list[Exchange] = []
        self.issued: dict[str, dict[str, Any]] = {}  # tool call id -> arguments
        #: What each issued call returned to the model (the ``role: "tool"`` message's content), by call id.
        self.tool_results: dict[str, str] = {}
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _ChatHandler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake chat completions", daemon=True)

    # What the test reads --------------------------------------------------

    def of_kind(self, *kinds: str) -> list[Exchange]:
        with self._lock:
            return [exchange for exchange in self.exchanges if exchange.kind in kinds]

    def answers(self) -> list[Any]:
        """Each tool result the model received, decoded from JSON where it is JSON, in call order."""
        with self._lock:
            results = [self.tool_results[call] for call in self.issued if call in self.tool_results]
        decoded = []
        for text in results:
            try:
                decoded.append(json.loads(text))
            except ValueError:
                decoded.append(text)
        return decoded

    def summary(self) -> list[str]:
        """One line per request, for failure messages."""
        with self._lock:
            return [f"POST {e.path} -> {e.kind} tools={e.tool_names}" for e in self.exchanges]

    # The script -----------------------------------------------------------

    def decide(self, body: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
        """``(kind, text, tool call or None)`` for one request."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        # What arrived since the model last spoke: tool results, the operator's
        # prompt, and the ``<system-reminder>`` user messages Kimi appends.
        since = len(messages) - next(
            (index for index, m in enumerate(reversed(messages)) if m.get("role") == "assistant"), len(messages)
        )
        tail = messages[since:]
        with self._lock:
            answered = [m for m in tail if m.get("role") == "tool" and str(m.get("tool_call_id")) in self.issued]
            for message in answered:
                self.tool_results[str(message["tool_call_id"])] = _content_text(message.get("content"))
        if answered:
            return "after_tool_result", self.final_text, None
        text = "\n".join(_content_text(m.get("content")) for m in tail if m.get("role") == "user")
        if self.marker not in text:
            return "side", "OK.", None
        if ASK_TOOL not in Exchange("", body).tool_names:
            return "no_tool", self.no_tool_text, None
        with self._lock:
            if len(self.issued) >= MAX_TOOL_CALLS:
                return "side", "Giving up on questions.", None
            call_id = f"call_fake_{len(self.issued) + 1}"
            arguments = {"questions": self.questions}
            self.issued[call_id] = arguments
        return "ask", "", {"id": call_id, "name": ASK_TOOL, "arguments": json.dumps(arguments)}

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def _content_text(content: object) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def chunks(completion_id: str, text: str, call: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` frames of one reply: role, text or the call's pieces, finish, usage."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    frames = [chunk({"role": "assistant", "content": ""})]
    if call is None:
        frames.append(chunk({"content": text}))
        frames.append(chunk({}, "stop"))
    else:
        arguments = call["arguments"]
        middle = len(arguments) // 2  # the arguments arrive as partial JSON, in pieces
        head = {"index": 0, "id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": ""}}
        frames.append(chunk({"tool_calls": [head]}))
        for piece in (arguments[:middle], arguments[middle:]):
            frames.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        frames.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 25, "completion_tokens": 10, "total_tokens": 35}
    frames.append({**chunk({}), "choices": [], "usage": usage})
    return frames


def completion(completion_id: str, text: str, call: dict[str, Any] | None) -> dict[str, Any]:
    """The same reply, unstreamed."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if call is not None:
        message["tool_calls"] = [
            {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}],
        "usage": {"prompt_tokens": 25, "completion_tokens": 10, "total_tokens": 35},
    }


class _Server(QuietServer):
    fake: FakeChatCompletions


class _ChatHandler(JsonHandler):
    server: _Server

    def do_GET(self) -> None:
        self.read_body()
        self.server.fake.record(Exchange(self.path, None))
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "kandev"}]})
        else:
            self._error(404, f"the fake Chat Completions API has no {self.path}")

    def do_POST(self) -> None:
        body = self.read_json()
        fake = self.server.fake
        if self.path.split("?")[0] != "/v1/chat/completions" or not isinstance(body, dict):
            fake.record(Exchange(self.path, body))
            self._error(404, f"the fake Chat Completions API has no {self.path}")
            return
        kind, text, call = fake.decide(body)
        fake.record(Exchange(self.path, body, kind, call["id"] if call else None))
        completion_id = f"chatcmpl-fake{len(fake.exchanges):04d}"
        if body.get("stream"):
            frames: list[tuple[str | None, Any]] = [(None, frame) for frame in chunks(completion_id, text, call)]
            self.send(200, sse_stream([*frames, (None, "[DONE]")]), "text/event-stream")
        else:
            self.send_json(200, completion(completion_id, text, call))

    def _error(self, status: int, message: str) -> None:
        self.send_json(status, {"error": {"message": message, "type": "invalid_request_error", "code": None}})
