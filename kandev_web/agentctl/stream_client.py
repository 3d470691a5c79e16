"""An asyncio client of the agent stream, for the web app and for tests.

``request()`` returns a response's payload or raises the error's code as its
own exception, so callers write ``except NotFound`` rather than comparing
strings. Notifications go to one callback, in the order they arrived, and a
response is taken after the notifications that came before it, unless its
request was sent with ``ordered=False``: then it is taken the moment it is
read, behind no notification still being handled. When the
connection drops, requests in flight fail with ``AgentStreamNotConnected`` and
the client reconnects with exponential backoff; ``on_reconnect`` then runs, the
place to resynchronise (``agent.elicitations.list``) what was missed.

A client given ``after_seq`` resumes instead: it connects with
``?after_seq=<n>`` and, on every reconnection, asks for what follows the last
notification it handled (``last_seq``), so a dropped connection loses nothing
that agentctl still keeps (``docs/agent-stream.md#resuming``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Self
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.protocol import State

from kandev_web.agentctl import envelope
from kandev_web.agentctl.envelope import BadFrame, ErrorCode, Frame, FrameType, Payload
from kandev_web.storable import storable, unstorable_count

logger = logging.getLogger(__name__)

#: agentctl forwards the agent's updates verbatim, and one tool-call update
#: carrying a large diff can outgrow the 1 MiB frame limit; refusing it
#: would drop the connection and lose it, so the client reads larger frames.
MAX_INCOMING_BYTES = 16 * envelope.MAX_FRAME_BYTES

NotificationCallback = Callable[[str, Payload], Awaitable[None] | None]
#: Called with the client after each reconnection, to resynchronise through it.
DisconnectHook = Callable[["AgentStreamClient"], Awaitable[None]]
ReconnectHook = Callable[["AgentStreamClient"], Awaitable[None]]


class StreamError(Exception):
    """An ``error`` answer from agentctl; ``code`` is its error code (``docs/agent-stream.md#envelope``)."""

    code: str = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, code: str | None = None, details: Payload | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or {}


class NotFound(StreamError):
    code = ErrorCode.NOT_FOUND


class ValidationFailed(StreamError):
    """The payload did not fit; ``details["problems"]`` says why."""

    code = ErrorCode.VALIDATION_ERROR


class Conflict(StreamError):
    code = ErrorCode.CONFLICT


class AgentStreamNotConnected(StreamError):
    """There is no connection to agentctl right now (or any more)."""

    code = "NOT_CONNECTED"


class NotSent(AgentStreamNotConnected):
    """The connection had already closed: the request was never written, so agentctl did nothing with it.

    Unlike a connection that drops after the request went out, this is always
    safe to send again, on another connection.
    """


_ERRORS_BY_CODE: dict[str, type[StreamError]] = {
    ErrorCode.NOT_FOUND: NotFound,
    ErrorCode.VALIDATION_ERROR: ValidationFailed,
    ErrorCode.CONFLICT: Conflict,
}


def error_from_payload(payload: Payload) -> StreamError:
    code = str(payload.get("code", ErrorCode.INTERNAL_ERROR))
    details = payload.get("details")
    return _ERRORS_BY_CODE.get(code, StreamError)(
        str(payload.get("message", "")), code=code, details=details if isinstance(details, dict) else {}
    )


@dataclass(frozen=True)
class StreamEvent:
    """One notification as a client handles it: its action, payload and place in the stream.

    ``seq`` is None for what agentctl does not number (``stream.gap``), or a
    peer that numbers nothing.
    """

    action: str
    payload: Payload
    seq: int | None


EventCallback = Callable[[StreamEvent], Awaitable[None] | None]


@dataclass(frozen=True)
class Backoff:
    """Delays between reconnection attempts: doubling from ``initial`` up to ``maximum``."""

    initial: float = 0.1
    maximum: float = 5.0
    #: Give up after this many failed attempts in a row; None keeps trying.
    attempts: int | None = None

    def delay(self, attempt: int) -> float:
        return min(self.maximum, self.initial * 2.0**attempt)


class AgentStreamClient:
    """One connection to one agentctl, kept up until ``close()``."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        on_notification: NotificationCallback | None = None,
        on_reconnect: ReconnectHook | None = None,
        on_disconnect: DisconnectHook | None = None,
        backoff: Backoff = Backoff(),
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        on_event: EventCallback | None = None,
        after_seq: int | None = None,
    ) -> None:
        if after_seq is not None and after_seq < 0:
            raise ValueError("after_seq must be 0 or more")
        self._url = url
        self._token = token
        self._on_notification = on_notification
        self._on_event = on_event
        #: None: not resuming. Else the seq of the last notification handled.
        self._last_seq = after_seq
        self._on_reconnect = on_reconnect
        self._on_disconnect = on_disconnect
        self._backoff = backoff
        self._open_timeout = open_timeout
        #: A silent peer (a frozen agentctl, a dead route) is noticed after
        #: about twice this long, so requests fail fast instead of hanging.
        self._ping_interval = ping_interval
        self._connection: ClientConnection | None = None
        self._pending: dict[str, asyncio.Future[Payload]] = {}
        #: The requests in flight whose answers are taken as soon as they are read (``ordered=False``).
        self._unordered: set[str] = set()
        self._running: asyncio.Task[None] | None = None
        self._stopped = asyncio.Event()
        self._down = asyncio.Event()
        self._hooks: set[asyncio.Task[None]] = set()

    @property
    def connected(self) -> bool:
        return self._connection is not None

    @property
    def last_seq(self) -> int | None:
        """The seq of the last notification whose callbacks have returned (from ``after_seq``); None when not resuming.

        The next (re)connection asks agentctl for what follows it.
        """
        return self._last_seq

    async def connect(self) -> None:
        """Open the first connection; raise rather than retry if that fails.

        ``StreamError`` with code ``UNAUTHORIZED`` for a wrong token,
        ``AgentStreamNotConnected`` when agentctl cannot be reached.
        """
        if self._running is not None:
            raise RuntimeError("connect() was already called")
        self._connection = await self._open()
        self._running = asyncio.create_task(self._run(self._connection), name="agent stream client")

    async def close(self) -> None:
        """Stop reconnecting and close the connection; requests in flight fail."""
        running, self._running = self._running, None
        if running is not None:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        for hook in self._hooks:
            hook.cancel()
        if self._connection is not None:
            await self._connection.close()
            self._connection = None
        self._fail_pending()
        self._stopped.set()

    async def wait_disconnected(self) -> None:
        """Return once the current connection has ended and every frame it carried was handled."""
        if self._connection is None:
            return
        await self._down.wait()

    async def wait_closed(self) -> None:
        """Return once the client has stopped for good.

        That is after ``close()``, or when reconnecting was given up: the
        backoff ran out of attempts or agentctl refused the token.
        """
        await self._stopped.wait()

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def request(
        self, action: str, payload: Payload | None = None, *, timeout: float = 30.0, ordered: bool = True
    ) -> Payload:
        """Send a request and return its response payload.

        ``ordered=False`` for a request whose caller needs no notification
        that came before its answer to have been handled first: the answer
        then does not wait behind them (an elicitation's announcement, say,
        which takes its handler tens of milliseconds).

        Raises ``NotFound``, ``ValidationFailed``, ``Conflict`` or another
        ``StreamError`` for an error answer; ``NotSent`` when the connection
        was down (or closing) before anything was written,
        ``AgentStreamNotConnected`` when it drops later, before the answer;
        ``TimeoutError``.
        """
        connection = self._connection
        if connection is None or connection.state is not State.OPEN:
            raise NotSent("not connected to agentctl")
        request_id = str(uuid.uuid4())
        answer: asyncio.Future[Payload] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        if not ordered:
            self._unordered.add(request_id)
        try:
            try:
                await connection.send(envelope.request(action, payload or {}, id=request_id))
            except ConnectionClosed:
                raise AgentStreamNotConnected("the connection to agentctl closed") from None
            async with asyncio.timeout(timeout):
                return await answer
        finally:
            self._pending.pop(request_id, None)
            self._unordered.discard(request_id)

    # Connection lifecycle -------------------------------------------------

    def _target(self) -> str:
        """The URL to connect to: a resuming client's asks for what follows what it handled."""
        if self._last_seq is None:
            return self._url
        url = urlsplit(self._url)
        query = [(name, value) for name, value in parse_qsl(url.query, keep_blank_values=True) if name != "after_seq"]
        return urlunsplit(url._replace(query=urlencode([*query, ("after_seq", str(self._last_seq))])))

    async def _open(self) -> ClientConnection:
        try:
            return await connect(
                self._target(),
                additional_headers={"Authorization": f"Bearer {self._token}"},
                max_size=MAX_INCOMING_BYTES,
                # Frames come from the same machine or network, a few hundred
                # bytes each, many a second: deflating them would cost both
                # ends more CPU than it saves. Not offered, so never used.
                compression=None,
                open_timeout=self._open_timeout,
                ping_interval=self._ping_interval,
                ping_timeout=self._ping_interval,
                close_timeout=self._ping_interval,
            )
        except InvalidStatus as error:
            if error.response.status_code == HTTPStatus.UNAUTHORIZED:
                raise StreamError("agentctl refused the token", code=ErrorCode.UNAUTHORIZED) from None
            raise AgentStreamNotConnected(f"agentctl answered HTTP {error.response.status_code}") from None
        except (OSError, TimeoutError, InvalidHandshake) as error:
            # InvalidHandshake: something accepted the connection and closed it unanswered,
            # as a tunnel or proxy does while agentctl cannot be reached behind it.
            raise AgentStreamNotConnected(f"cannot reach agentctl at {self._url}: {error}") from None

    async def _run(self, connection: ClientConnection) -> None:
        while True:
            self._down.clear()
            await self._read(connection)
            self._connection = None
            self._down.set()
            self._fail_pending()
            if self._on_disconnect is not None:
                await self._run_hook(self._on_disconnect)
            reconnected = await self._reconnect()
            if reconnected is None:
                self._stopped.set()
                return
            connection = self._connection = reconnected
            if self._on_reconnect is not None:
                # Its own task: the hook sends requests, whose answers this task reads.
                hook = asyncio.create_task(self._run_hook(self._on_reconnect), name="agent stream on_reconnect")
                self._hooks.add(hook)
                hook.add_done_callback(self._hooks.discard)

    async def _reconnect(self) -> ClientConnection | None:
        attempt = 0
        while self._backoff.attempts is None or attempt < self._backoff.attempts:
            await asyncio.sleep(self._backoff.delay(attempt))
            attempt += 1
            try:
                connection = await self._open()
            except AgentStreamNotConnected as error:
                logger.info("reconnecting to agentctl failed (attempt %d): %s", attempt, error)
                continue
            except StreamError:
                logger.error("agentctl refused the token; not reconnecting")
                return None
            logger.info("reconnected to agentctl")
            return connection
        if attempt:
            logger.warning("gave up reconnecting to agentctl after %d attempts", attempt)
        return None

    async def _run_hook(self, hook: ReconnectHook) -> None:
        try:
            await hook(self)
        except Exception:
            logger.exception("on_reconnect failed")

    # Frames ---------------------------------------------------------------

    async def _read(self, connection: ClientConnection) -> None:
        # Frames are handled one at a time in the order they came, by a task
        # of their own, so reading goes on meanwhile and an unordered
        # request's answer is taken as soon as it is read.
        frames: asyncio.Queue[tuple[Frame, Payload] | None] = asyncio.Queue()
        handling = asyncio.create_task(self._handle_in_order(frames), name="agent stream frames")
        try:
            async for data in connection:
                read = self._decode(data)
                if read is None:
                    continue
                frame, payload = read
                if frame.type is not FrameType.NOTIFICATION and frame.id in self._unordered:
                    self._answer(frame, payload)
                else:
                    frames.put_nowait(read)
        except ConnectionClosed:
            pass
        except asyncio.CancelledError:
            handling.cancel()
            raise
        finally:
            frames.put_nowait(None)
        # Every frame the connection carried is handled before it counts as down.
        await handling

    async def _handle_in_order(self, frames: asyncio.Queue[tuple[Frame, Payload] | None]) -> None:
        while (read := await frames.get()) is not None:
            frame, payload = read
            if frame.type is FrameType.NOTIFICATION:
                await self._notify(frame, payload)
            else:
                self._answer(frame, payload)

    def _decode(self, data: str | bytes) -> tuple[Frame, Payload] | None:
        try:
            frame = envelope.decode(data)
        except BadFrame as bad:
            logger.warning("agentctl sent a frame that is not an envelope: %s", bad.message)
            return None
        # Every payload is the agent's text on its way to rows and pages: this is
        # the one door it comes in by, so it is made storable here.
        payload = storable(frame.payload)
        if payload is not frame.payload:
            logger.info(
                "agentctl's %s carried %d characters no database can store; they read as U+FFFD",
                frame.action or frame.type.value,
                unstorable_count(frame.payload),
            )
        return frame, payload

    def _answer(self, frame: Frame, payload: Payload) -> None:
        answer = self._pending.get(frame.id) if frame.id is not None else None
        if answer is None or answer.done():
            if frame.type is FrameType.ERROR:
                logger.warning("agentctl refused a frame: %s", frame.payload.get("message"))
            return
        if frame.type is FrameType.RESPONSE:
            answer.set_result(payload)
        else:
            answer.set_exception(error_from_payload(payload))

    async def _notify(self, frame: Frame, payload: Payload) -> None:
        seq, last_seq = frame.seq, self._last_seq
        if seq is not None and last_seq is not None and seq <= last_seq:
            return  # handled already: a resuming client never handles one twice
        if (on_notification := self._on_notification) is not None:
            await _callback(frame.action, lambda: on_notification(frame.action, payload))
        if (on_event := self._on_event) is not None:
            await _callback(frame.action, lambda: on_event(StreamEvent(frame.action, payload, seq)))
        if seq is not None and last_seq is not None:
            self._last_seq = seq

    def _fail_pending(self) -> None:
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(AgentStreamNotConnected("the connection to agentctl closed"))
        self._pending.clear()


async def _callback(action: str, call: Callable[[], Awaitable[None] | None]) -> None:
    """Run one notification callback; one that fails is logged, and the stream goes on."""
    try:
        result = call()
        if inspect.isawaitable(result):
            await result
    except Exception:
        logger.exception("the notification callback failed on %s", action)
