"""Log lines a deployer can search: time, level, logger, and the ids of the work each line is about.

One line per record: JSON (``KANDEV_LOG_FORMAT=json``, the ``prod``
default) or text. The ids come from context variables set where work
starts: a request's or a socket's by :class:`RequestIds`, an agent execution's and
its session's by the runner (:func:`bound`), so every line logged while
handling them carries them without each call naming them. Only ids: lines
never hold prompt, question, answer or token text, because the messages are
written that way (``tests/test_logs.py`` checks a session's lines). No
Django here, so agentctl can use it too.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

if TYPE_CHECKING:
    from asgiref.typing import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, ASGISendEvent, Scope

_IDS: dict[str, contextvars.ContextVar[str | None]] = {
    name: contextvars.ContextVar(name, default=None) for name in ("request_id", "execution_id", "session_id")
}
#: A request id a proxy sent that we keep as it is; anything else is replaced by our own.
_GIVEN_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")


@contextmanager
def bound(**ids: object) -> Iterator[None]:
    """Every line logged inside the block names these ids (``execution_id=12, session_id=7``)."""
    tokens = [(_IDS[name], _IDS[name].set(str(value))) for name, value in ids.items() if value is not None]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


class ContextIds(logging.Filter):
    """Puts the ids bound where the line was logged on its record (``ids`` too, for the text format)."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = {name: value for name, var in _IDS.items() if (value := var.get()) is not None}
        for name, value in found.items():
            setattr(record, name, value)
        record.ids = "".join(f" {name}={value}" for name, value in found.items())
        return True


def json_formatter(static_fields: dict[str, str] | None = None) -> JsonFormatter:
    """One JSON object per line: ``time`` (UTC, RFC 3339), ``level``, ``logger``, ``message``, the ids, ``exc_info``.

    An id is there when it was bound (the record's extra attributes are), absent otherwise.
    """
    return JsonFormatter(
        "{levelname}{name}{message}",
        style="{",
        timestamp="time",
        rename_fields={"levelname": "level", "name": "logger"},
        reserved_attrs=[*RESERVED_ATTRS, "ids"],
        static_fields=static_fields,
    )


def request_id(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The id a proxy gave the request (``X-Request-ID``) when well formed, else a new one of our own."""
    given = next((value for name, value in headers if name.lower() == b"x-request-id"), b"")
    text = given.decode("latin-1")
    return text if _GIVEN_REQUEST_ID.match(text) else uuid.uuid4().hex


class RequestIds:
    """ASGI middleware: every line logged while serving a request or a socket names its ``request_id``.

    Outside Django's middleware on purpose: Django logs a failed request
    ("Not Found: ...") after its middleware has returned. The id goes back
    as ``X-Request-ID``, so one id follows a request through the load
    balancer's lines and ours.
    """

    def __init__(self, app: ASGI3Application) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        given = request_id(scope.get("headers", []))

        async def send_with_id(message: ASGISendEvent) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", given.encode())]}
            await send(message)

        with bound(request_id=given):
            return await self.app(scope, receive, send_with_id)
