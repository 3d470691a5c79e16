"""The agent stream's envelope: one JSON object per WebSocket text frame.

``{"id", "type", "action", "payload", "timestamp"}``, and ``seq`` on the
notifications agentctl broadcasts, as written in ``docs/agent-stream.md#envelope``.
agentctl and every client of the stream build and read frames through this
module, so the two sides cannot drift apart.
"""

from __future__ import annotations

import copy
import json
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from kandev_web.storable import storable

#: No frame on the stream may be larger than this (``docs/agent-stream.md#frame-size``).
MAX_FRAME_BYTES = 1 << 20

#: The notification a client resuming with ``?after_seq`` gets first when some of
#: what it asked for is no longer kept (``docs/agent-stream.md#connection``).
GAP = "stream.gap"

#: Ends a string agentctl cut short so that its notification fits in a frame.
TRUNCATION_MARK = "… [truncated: the frame exceeded 1 MiB]"

Payload = dict[str, Any]

#: Sends a notification to every connected client.
Emit = Callable[[str, Payload], None]


class FrameType(StrEnum):
    REQUEST = "request"
    RESPONSE = "response"
    ERROR = "error"
    NOTIFICATION = "notification"


class ErrorCode(StrEnum):
    BAD_REQUEST = "BAD_REQUEST"
    NOT_FOUND = "NOT_FOUND"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    CONFLICT = "CONFLICT"
    UNAUTHORIZED = "UNAUTHORIZED"
    UNKNOWN_ACTION = "UNKNOWN_ACTION"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    AUTH_REQUIRED = "AUTH_REQUIRED"


class ActionError(Exception):
    """An action failed in a way the requester should hear about as an ``error`` frame."""

    def __init__(self, code: ErrorCode, message: str, details: Payload | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    @classmethod
    def invalid(cls, problems: list[str]) -> ActionError:
        """A payload that does not fit its action; ``details.problems`` lists why."""
        return cls(ErrorCode.VALIDATION_ERROR, "; ".join(problems), {"problems": problems})


class BadFrame(Exception):
    """A frame that is not a valid request envelope.

    Carries whatever ``id`` and ``action`` could still be read, so that the
    ``BAD_REQUEST`` answer can name the request it refuses.
    """

    def __init__(self, message: str, *, id: str | int | None = None, action: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.id = id
        self.action = action


@dataclass(frozen=True)
class Frame:
    """One envelope, as read off the stream."""

    id: str | None
    type: FrameType
    action: str
    payload: Payload
    #: A broadcast notification's place in its execution's stream (from 1);
    #: None on every other frame, and on a notification whose ``seq`` is unusable.
    seq: int | None = None


def timestamp() -> str:
    """Now, as RFC 3339 in UTC with millisecond precision."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode(
    type: FrameType, action: str | None, payload: Payload, *, id: str | int | None, seq: int | None = None
) -> str:
    # The payload is agent text the other end decodes strictly (``decode``: no lone
    # surrogate, no NaN) and the web app stores: made storable, it is never refused.
    payload = storable(payload)
    envelope: Payload = {"id": id, "type": type.value, "action": action}
    if seq is not None:
        envelope["seq"] = seq
    envelope |= {"payload": payload, "timestamp": timestamp()}
    frame = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate cannot go out as UTF-8; escaped, the frame is still JSON text.
    return frame if _is_text(frame) else json.dumps(envelope, separators=(",", ":"))


def request(action: str, payload: Payload, *, id: str) -> str:
    return encode(FrameType.REQUEST, action, payload, id=id)


def response(frame: Frame, payload: Payload) -> str:
    return encode(FrameType.RESPONSE, frame.action, payload, id=frame.id)


def error(
    code: ErrorCode,
    message: str,
    *,
    id: str | int | None,
    action: str | None,
    details: Payload | None = None,
) -> str:
    payload = {"code": code.value, "message": message, "details": details or {}}
    return encode(FrameType.ERROR, action, payload, id=id)


def notification(action: str, payload: Payload, *, seq: int | None = None) -> str:
    """A notification frame within ``MAX_FRAME_BYTES`` whenever cutting strings can get it there.

    What an agent says (a tool call's whole diff, say) can outgrow a frame.
    Rather than drop it or break the contract, its longest strings are cut and
    marked, and the payload says ``"truncated": true``. Only a payload whose
    very structure is too big is sent whole (the caller hears of it by size).

    ``seq`` is the notification's place in the stream, for a client to resume
    after it; only what agentctl broadcasts has one.
    """
    frame_id = str(uuid.uuid4())
    frame = encode(FrameType.NOTIFICATION, action, payload, id=frame_id, seq=seq)
    if len(frame.encode()) <= MAX_FRAME_BYTES:
        return frame
    fitted = shorten_to_fit(
        payload,
        lambda candidate: len(encode(FrameType.NOTIFICATION, action, candidate, id=frame_id, seq=seq).encode()),
        MAX_FRAME_BYTES,
    )
    return frame if fitted is None else encode(FrameType.NOTIFICATION, action, fitted, id=frame_id, seq=seq)


def shorten_to_fit(payload: Payload, size_of: Callable[[Payload], int], limit: int) -> Payload | None:
    """A copy of ``payload`` with its longest strings cut to a prefix plus ``TRUNCATION_MARK``
    until ``size_of`` it is at most ``limit``; None when no string is left to cut.

    Keys, numbers and the shape are kept; only string values shrink.
    """
    fitted = copy.deepcopy(payload)
    fitted["truncated"] = True
    mark_bytes = _utf8_bytes(TRUNCATION_MARK)
    while (excess := size_of(fitted) - limit) > 0:
        slot = _longest_string(fitted)
        if slot is None or _utf8_bytes(slot[0][slot[1]]) <= mark_bytes:
            return None
        container, key = slot
        # Cut in bytes, since the limit is in bytes; a character split in two
        # is dropped whole. Escapes only make the JSON shrink faster.
        encoded = container[key].encode("utf-8", "surrogatepass")
        keep = max(0, len(encoded) - excess - mark_bytes)
        container[key] = encoded[:keep].decode("utf-8", "ignore") + TRUNCATION_MARK
    return fitted


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _longest_string(value: Any) -> tuple[Any, Any] | None:
    """Where the longest string value (in UTF-8 bytes) sits: ``(container, key or index)``."""
    best: tuple[Any, Any] | None = None
    best_length = -1
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            if isinstance(item, str):
                if (length := _utf8_bytes(item)) > best_length:
                    best, best_length = (node, key), length
            elif isinstance(item, dict | list):
                stack.append(item)
    return best


#: How deeply a frame's JSON may nest. Real payloads (a prompt's content
#: blocks, an MCP server's headers) stay under ten levels; the limit keeps a
#: hostile frame from exhausting the stack of whatever walks it later.
MAX_DEPTH = 64


def read_text(data: bytes) -> str:
    """A text frame's bytes as text; raise ``BadFrame`` when they are not UTF-8.

    agentctl reads text frames undecoded (``server``), so that invalid UTF-8
    is refused like any other unreadable frame instead of closing the connection.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadFrame(f"the frame is not valid UTF-8 (byte {error.start})") from None


def _refuse_non_finite(constant: str) -> float:
    raise ValueError(f"{constant} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"the number {text[:20]}… is too large")
    return number


def _loads(data: str) -> Any:
    """``json.loads`` that refuses what JSON has no meaning for: NaN, Infinity, numbers that overflow."""
    try:
        return json.loads(data, parse_constant=_refuse_non_finite, parse_float=_finite_float)
    except RecursionError:
        raise BadFrame(f"the frame nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        # Also a 5000-digit integer: Python refuses to convert it.
        raise BadFrame(f"the frame is not JSON: {error}") from None


def _is_text(value: str) -> bool:
    """Whether ``value`` can be written as UTF-8: no lone surrogate (``"\\ud800"`` in JSON) in it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unreadable(value: Any) -> str | None:
    """Why ``value`` cannot be carried on (too deep, a lone surrogate in a key or a string), or None.

    Iterative, so that it needs no stack however the value nests.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if not _is_text(node):
                return "the frame holds a lone surrogate, which is not text"
        elif isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                return f"the frame nests deeper than {MAX_DEPTH} levels"
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, item in items:
                if isinstance(key, str) and not _is_text(key):
                    return "the frame holds a lone surrogate, which is not text"
                stack.append((item, depth + 1))
    return None


def decode(data: str | bytes, *, max_bytes: int | None = None) -> Frame:
    """Read any envelope; raise ``BadFrame`` for anything that is not one, whatever the frame holds."""
    try:
        return _decode(data, max_bytes=max_bytes)
    except BadFrame:
        raise
    except Exception as error:  # no frame may go unanswered, whatever it breaks
        raise BadFrame(f"the frame could not be read ({type(error).__name__})") from None


def _decode(data: str | bytes, *, max_bytes: int | None) -> Frame:
    if isinstance(data, bytes):
        raise BadFrame("frames must be JSON text, not binary")
    envelope = _loads(data)
    if not isinstance(envelope, dict):
        raise BadFrame("the frame is not a JSON object")

    # Echo back what we can read, even from a frame we refuse; never what
    # could not be written back as text.
    raw_id = envelope.get("id")
    readable_id = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    if isinstance(readable_id, str) and not _is_text(readable_id):
        readable_id = None
    raw_action = envelope.get("action")
    action = raw_action if isinstance(raw_action, str) and _is_text(raw_action) else None

    def refuse(message: str) -> BadFrame:
        return BadFrame(message, id=readable_id, action=action)

    if max_bytes is not None and (size := len(data.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise refuse(f"the frame is {size} bytes; the limit is {max_bytes} bytes")
    if (problem := _unreadable(envelope)) is not None:
        raise refuse(problem)
    raw_type = envelope.get("type")
    if not (isinstance(raw_type, str) and raw_type in FrameType):
        raise refuse('"type" must be one of request, response, error, notification')
    type = FrameType(raw_type)
    if not action:
        raise refuse('"action" must be a non-empty string')
    if type is not FrameType.NOTIFICATION and not (isinstance(raw_id, str) and raw_id):
        raise refuse('"id" must be a non-empty string')
    # A missing or null payload reads as {}: clients need not spell out "nothing".
    payload = envelope.get("payload")
    if payload is None:
        payload = {}
    if not isinstance(payload, dict):
        raise refuse('"payload" must be a JSON object')
    seq = envelope.get("seq") if type is FrameType.NOTIFICATION else None
    return Frame(
        id=readable_id if isinstance(readable_id, str) else None,
        type=type,
        action=action,
        payload=payload,
        # An unusable seq costs the client its resumption, never the frame.
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else None,
    )


def decode_request(data: str | bytes) -> Frame:
    """Read a frame sent to agentctl, which only accepts requests of at most 1 MiB."""
    frame = decode(data, max_bytes=MAX_FRAME_BYTES)
    if frame.type is not FrameType.REQUEST:
        raise BadFrame(f'agentctl only accepts "request" frames, not "{frame.type}"', id=frame.id, action=frame.action)
    return frame
