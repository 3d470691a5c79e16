"""Newline-delimited JSON-RPC 2.0 over a pair of asyncio streams: ACP's stdio transport.

The ``agent-client-protocol`` SDK has a connection class, but three of its
choices work against what agentctl must do:

- request handlers never see the JSON-RPC id, and ACP's ``$/cancel_request``
  names the request it withdraws by that id;
- every payload is parsed into pydantic models and dumped again, where
  ``session/update`` must reach the web app verbatim and an elicitation's
  ``requestedSchema`` must reach the mapping with its keys, their order and
  their ``_meta`` intact;
- a frame that is JSON but not an object stops its receive loop for good.

So this module moves plain dicts and leaves their meaning to its callers. The
same class serves agentctl (client side), the mock agent and acpdbg.

Ids are compared by value, never by truthiness: the Claude bridge's first
request to the client has id ``0``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeGuard

logger = logging.getLogger(__name__)

JsonRpcId = int | str
RequestHandler = Callable[[Any, JsonRpcId], Awaitable[Any]]
NotificationHandler = Callable[[Any], None]
Direction = Literal["in", "out"]
#: Sees every line as it is read or written, e.g. for acpdbg's frame dump.
FrameObserver = Callable[[Direction, str], None]

#: Generous, because an agent may send a whole file in one tool-call update.
LINE_LIMIT = 50 * 1024 * 1024

#: A JSON escape of a UTF-16 surrogate: the only way a lone surrogate, which no
#: UTF-8 text can carry, gets into a parsed frame (``"\\ud800"``).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class JsonRpcError(Exception):
    """A JSON-RPC error object, received from the peer or to be sent to it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class PeerClosed(ConnectionError):
    """The peer's stream ended before it answered."""


def is_valid_id(value: Any) -> TypeGuard[JsonRpcId]:
    # bool is an int subclass, and `true` is no JSON-RPC id.
    return isinstance(value, int | str) and not isinstance(value, bool)


class JsonRpcPeer:
    """One end of a JSON-RPC conversation: sends requests, answers the other side's.

    Request handlers each run in their own task, since one may wait an hour for
    an operator. Notification handlers run inline, in the order the frames
    arrived, so that forwarded ``session/update``s keep their order; a request
    handler's synchronous start runs inline too (see ``_start_handler``).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        requests: Mapping[str, RequestHandler] | None = None,
        notifications: Mapping[str, NotificationHandler] | None = None,
        observe: FrameObserver | None = None,
        label: str = "peer",
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._requests = dict(requests or {})
        self._notifications = dict(notifications or {})
        self._observe = observe
        self._label = label
        self._ids = itertools.count()
        self._pending: dict[JsonRpcId, asyncio.Future[Any]] = {}
        self._handlers: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    # Outgoing ---------------------------------------------------------------

    def send_request(self, method: str, params: Any) -> tuple[JsonRpcId, asyncio.Future[Any]]:
        """Write a request now and return its id and the future of its result.

        Writing happens before this returns, which lets a caller acknowledge
        "the prompt was sent" before the answer can possibly be read.
        """
        if self._closed:
            raise PeerClosed(f"the {self._label} has closed its stream")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id, future

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; raise ``JsonRpcError`` or ``PeerClosed``."""
        request_id, future = self.send_request(method, params)
        try:
            await self.drain()
            return await future
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: Any) -> None:
        if self._closed:
            raise PeerClosed(f"the {self._label} has closed its stream")
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def drain(self) -> None:
        """Wait until written frames are handed to the OS.

        A peer that died mid-write is noticed by the reading side, which fails
        every pending request; there is nothing more to do about it here.
        """
        try:
            await self._writer.drain()
        except ConnectionError:
            logger.debug("the %s stopped reading", self._label)

    async def settle_handlers(self, timeout: float) -> None:
        """Give handlers whose answer is already decided the moment to write it.

        Called before closing the stream, so that an answer agentctl has just
        given (say, "cancelled" to a parked permission) reaches the peer.
        """
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=timeout)

    def _write(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        if self._observe is not None:
            self._observe("out", line)
        if not self._writer.is_closing():
            self._writer.write(line.encode() + b"\n")

    # Incoming ---------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch frames until the peer's stream ends.

        On the way out, every request still waiting for an answer fails with
        ``PeerClosed`` and every handler still working on the peer's requests
        is cancelled, since nobody is left to read its answer.
        """
        try:
            while line := await self._read_line():
                self._receive(line)
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(PeerClosed(f"the {self._label} closed its stream before answering"))
            self._pending.clear()
            for task in self._handlers:
                task.cancel()

    async def _read_line(self) -> bytes:
        while True:
            try:
                return await self._reader.readline()
            except ValueError:
                # Longer than LINE_LIMIT. The reader has dropped what it buffered;
                # the line's tail, if any, arrives next and is refused as not JSON.
                logger.warning("the %s sent a line longer than %d bytes; skipped", self._label, LINE_LIMIT)

    def _receive(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return
        if self._observe is not None:
            self._observe("in", text)
        try:
            message = json.loads(text)
            if _SURROGATE_ESCAPE.search(text):
                # Paired escapes decode to one character; lone ones would make every
                # later encode of this text (a stream frame, a database row) fail.
                message = _without_lone_surrogates(message)
        except (ValueError, RecursionError):
            # RecursionError: nested deeper than the parser goes, as unreadable as
            # a line that is not JSON. Never log the line itself: it may hold
            # prompt or question text.
            logger.warning("the %s sent a line that is not JSON (%d bytes); skipped", self._label, len(line))
            return
        if not isinstance(message, dict):
            logger.warning("the %s sent JSON that is not a JSON-RPC message; skipped", self._label)
            return

        if "method" in message:
            method = message["method"]
            if "id" not in message:
                if isinstance(method, str):
                    self._dispatch_notification(method, message.get("params"))
                return
            if not isinstance(method, str) or not is_valid_id(message["id"]):
                bad_id = message["id"] if is_valid_id(message["id"]) else None
                self._write(
                    {"jsonrpc": "2.0", "id": bad_id, "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}}
                )
                return
            self._start_handler(method, message.get("params"), message["id"])
        elif "id" in message:
            self._settle(message)
        else:
            logger.warning("the %s sent a message with neither method nor id; skipped", self._label)

    def _dispatch_notification(self, method: str, params: Any) -> None:
        handler = self._notifications.get(method)
        if handler is None:
            logger.debug("ignored %s notification from the %s", method, self._label)
            return
        try:
            handler(params)
        except Exception:
            logger.exception("handling the %s notification failed", method)

    def _start_handler(self, method: str, params: Any, request_id: JsonRpcId) -> None:
        handler = self._requests.get(method)
        if handler is None:
            error = JsonRpcError(METHOD_NOT_FOUND, "Method not found", {"method": method})
            self._write({"jsonrpc": "2.0", "id": request_id, "error": error.to_object()})
            return
        # Started eagerly: the handler runs up to its first await before the
        # next line is read, so it has parked its request by the time a
        # `$/cancel_request` right behind it arrives, and whatever it
        # announces keeps its place among the notifications around it.
        task = asyncio.Task(
            self._answer(method, handler, params, request_id),
            loop=asyncio.get_running_loop(),
            name=f"jsonrpc {method}",
            eager_start=True,
        )
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _answer(self, method: str, handler: RequestHandler, params: Any, request_id: JsonRpcId) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            reply["result"] = await handler(params, request_id)
        except JsonRpcError as error:
            reply["error"] = error.to_object()
        except Exception:
            logger.exception("handling the %s request failed", method)
            reply["error"] = JsonRpcError(INTERNAL_ERROR, "Internal error").to_object()
        if not self._closed:
            self._write(reply)
            await self.drain()

    def _settle(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        future = self._pending.pop(request_id, None) if is_valid_id(request_id) else None
        if future is None:
            logger.warning("the %s answered a request that is not pending; skipped", self._label)
            return
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {}
            code = error.get("code")
            future.set_exception(
                JsonRpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item) for key, item in value.items()}
    return value
