"""The agent stream's WebSocket endpoint: ``GET /agent/stream`` with a bearer token.

Authentication happens before the upgrade, so a wrong or missing token gets a
plain HTTP 401 and never a WebSocket. Every notification goes to every
connected client; a request is answered on the connection it came from.

Every notification broadcast is numbered (``seq``) and kept for a while
(``replay.py``), so that a client connecting with ``?after_seq=<n>`` (a web
process restarted, or taking over) is sent what it missed before anything new.

Each client has one outbox, drained by one task, and everything sent to it
(responses and notifications alike) goes through it. Putting into the outbox
never waits, so the order in which agentctl decides to send things is the
order in which each client receives them.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import re
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import timedelta
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame as WireFrame
from websockets.frames import Opcode
from websockets.http11 import Request, Response
from websockets.protocol import Event
from websockets.server import ServerProtocol

from kandev_web.agentctl import envelope
from kandev_web.agentctl.envelope import ActionError, BadFrame, ErrorCode, Frame, Payload
from kandev_web.agentctl.replay import ReplayBuffer

logger = logging.getLogger(__name__)

PATH = "/agent/stream"

#: Frames up to this size are read and refused with BAD_REQUEST (the limit is
#: MAX_FRAME_BYTES); bigger ones make websockets close the connection (1009),
#: so that no client can make agentctl buffer without bound.
HARD_FRAME_LIMIT = 4 * envelope.MAX_FRAME_BYTES

#: How long closing waits for a client's outbox to drain.
CLOSE_TIMEOUT_SECONDS = 2.0

#: An ``after_seq``: ASCII digits only, and no more than Python turns into an int.
_AFTER_SEQ = re.compile(r"[0-9]{1,4300}")

RequestHandler = Callable[[Frame], Awaitable[Payload]]


class _Connection(ServerConnection):
    """A connection that hands text frames over undecoded, saying which frames were text.

    websockets would fail the whole connection (1007) on a text frame that is
    not UTF-8; agentctl refuses such a frame with ``BAD_REQUEST`` instead and
    keeps the connection, as it does any other unreadable frame. The first
    frame of each message carries its opcode; messages come out in the order
    their first frames came in.
    """

    def __init__(self, protocol: ServerProtocol, server: Server, **kwargs: Any) -> None:
        super().__init__(protocol, server, **kwargs)
        self._text_messages: deque[bool] = deque()
        #: The ``after_seq`` the client resumes after, read before the upgrade; None: it does not resume.
        self.after_seq: int | None = None

    def process_event(self, event: Event) -> None:
        if isinstance(event, WireFrame) and event.opcode in (Opcode.TEXT, Opcode.BINARY):
            self._text_messages.append(event.opcode is Opcode.TEXT)
        super().process_event(event)

    async def receive(self) -> str | bytes:
        """The next message: a text frame's UTF-8 as ``str``, a binary frame's ``bytes``.

        Raises ``BadFrame`` for a text frame that is not UTF-8 (the connection stays open).
        """
        data = await self.recv(decode=False)
        if self._text_messages.popleft():
            return envelope.read_text(data)
        return data


class _Client:
    """One connected client and the ordered queue of frames going to it."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._sending = asyncio.create_task(self._send_all(), name="agent stream outbox")

    def send(self, frame: str) -> None:
        self._outbox.put_nowait(frame)

    async def close(self) -> None:
        """Send what is queued, then close the connection as going away."""
        self._outbox.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._sending), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            self._sending.cancel()
        await self.connection.close(1001, "agentctl is shutting down")

    def abandon(self) -> None:
        self._sending.cancel()

    async def _send_all(self) -> None:
        while (frame := await self._outbox.get()) is not None:
            try:
                await self.connection.send(frame)
            except ConnectionClosed:
                return


class StreamServer:
    """Serves the agent stream; ``handle`` answers each request.

    ``unheld`` is set once no client has been connected for ``unheld_after``
    on end, counted from when the server starts listening and again from
    each time its last client leaves; None never sets it.
    """

    def __init__(self, token: str, *, replay_bytes: int = 8 << 20, unheld_after: timedelta | None = None) -> None:
        self._expected_authorization = f"Bearer {token}".encode()
        self._clients: set[_Client] = set()
        self._answering: set[asyncio.Task[None]] = set()
        self._server: Server | None = None
        self._handle: RequestHandler | None = None
        self._greeting: str | None = None
        self._replay = ReplayBuffer(replay_bytes)
        self._unheld_after = unheld_after
        self._unheld_timer: asyncio.TimerHandle | None = None
        self._closing = False
        self.unheld = asyncio.Event()

    async def start(self, host: str, port: int, handle: RequestHandler) -> str:
        """Listen, and return the stream's URL with the port actually bound."""
        self._handle = handle
        self._server = await serve(
            self._serve,
            host,
            port,
            process_request=self._authorize,
            max_size=HARD_FRAME_LIMIT,
            create_connection=_Connection,
        )
        bound_port = self._server.sockets[0].getsockname()[1]
        # Whoever launched agentctl and never connects holds nothing either.
        self._start_unheld_clock()
        url_host = f"[{host}]" if ":" in host else host
        return f"ws://{url_host}:{bound_port}{PATH}"

    def broadcast(self, action: str, payload: Payload) -> str:
        """Send a notification, with the next ``seq``, to every client, and keep it for replay; return its frame."""
        seq = self._replay.last_seq + 1
        frame = envelope.notification(action, payload, seq=seq)
        if (size := len(frame.encode())) > envelope.MAX_FRAME_BYTES:
            # Its strings were cut as far as they go; only a structure this
            # big gets here, and it is sent rather than lost.
            logger.warning("a %s notification of %d bytes exceeds the 1 MiB frame limit", action, size)
        self._replay.add(seq, action, frame)
        for client in self._clients:
            client.send(frame)
        return frame

    def greet_with(self, frame: str) -> None:
        """Send this broadcast frame, as its first, to every client that connects from now on not resuming.

        A resuming client has it in its replay, unless it applied it already.
        """
        self._greeting = frame

    async def close(self) -> None:
        self._closing = True
        self._stop_unheld_clock()
        for task in self._answering:
            task.cancel()
        await asyncio.gather(*(client.close() for client in list(self._clients)), return_exceptions=True)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _authorize(self, connection: ServerConnection, request: Request) -> Response | None:
        if urlsplit(request.path).path != PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        authorization = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(authorization, self._expected_authorization):
            response = connection.respond(HTTPStatus.UNAUTHORIZED, "A valid bearer token is required\n")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        assert isinstance(connection, _Connection)  # serve()'s create_connection
        try:
            connection.after_seq = _after_seq(request.path)
        except ValueError:
            return connection.respond(HTTPStatus.BAD_REQUEST, "after_seq must be a non-negative integer\n")
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        assert isinstance(connection, _Connection)  # serve()'s create_connection
        client = _Client(connection)
        # From what it is owed to joining the broadcast, without an await: no
        # notification can be sent in between, so none is missed or sent twice.
        if connection.after_seq is not None:
            self._resume(client, connection.after_seq)
        elif self._greeting is not None:
            client.send(self._greeting)
        self._clients.add(client)
        self._stop_unheld_clock()
        logger.info("client connected (%d connected)", len(self._clients))
        try:
            while True:
                try:
                    data = await connection.receive()
                except BadFrame as bad:
                    client.send(envelope.error(ErrorCode.BAD_REQUEST, bad.message, id=None, action=None))
                    continue
                task = asyncio.create_task(self._answer(client, data), name="agent stream request")
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
        except ConnectionClosed:
            pass
        finally:
            self._clients.discard(client)
            client.abandon()
            logger.info("client disconnected (%d connected)", len(self._clients))
            if not self._clients:
                self._start_unheld_clock()

    def _resume(self, client: _Client, after_seq: int) -> None:
        """Queue what a client that has applied ``after_seq`` is owed, telling it first of any gap."""
        gap, frames = self._replay.since(after_seq)
        if gap:
            first_kept = self._replay.first_kept_seq
            logger.info("a client resuming after seq %d missed what was dropped before seq %d", after_seq, first_kept)
            client.send(envelope.notification(envelope.GAP, {"after_seq": after_seq, "first_kept_seq": first_kept}))
        for frame in frames:
            client.send(frame)

    def _start_unheld_clock(self) -> None:
        if self._unheld_after is None or self._closing or self._clients or self.unheld.is_set():
            return
        self._stop_unheld_clock()
        self._unheld_timer = asyncio.get_running_loop().call_later(self._unheld_after.total_seconds(), self.unheld.set)

    def _stop_unheld_clock(self) -> None:
        if self._unheld_timer is not None:
            self._unheld_timer.cancel()
            self._unheld_timer = None

    async def _answer(self, client: _Client, data: str | bytes) -> None:
        try:
            frame = envelope.decode_request(data)
        except BadFrame as bad:
            client.send(envelope.error(ErrorCode.BAD_REQUEST, bad.message, id=bad.id, action=bad.action))
            return
        assert self._handle is not None
        try:
            payload = await self._handle(frame)
        except ActionError as error:
            client.send(
                envelope.error(error.code, error.message, id=frame.id, action=frame.action, details=error.details)
            )
        except Exception:
            logger.exception("the %s action failed", frame.action)
            client.send(
                envelope.error(
                    ErrorCode.INTERNAL_ERROR, "agentctl failed to handle the request", id=frame.id, action=frame.action
                )
            )
        else:
            client.send(envelope.response(frame, payload))


def _after_seq(target: str) -> int | None:
    """The ``after_seq`` in a request target's query; None without one; ``ValueError`` for a malformed one."""
    values = parse_qs(urlsplit(target).query, keep_blank_values=True).get("after_seq")
    if values is None:
        return None
    if len(values) != 1 or not _AFTER_SEQ.fullmatch(values[0]):
        raise ValueError("after_seq must be one non-negative integer")
    return int(values[0])


async def serve_until_shutdown(
    server: StreamServer,
    host: str,
    port: int,
    handle: RequestHandler,
    *,
    shutdown: asyncio.Event,
    close: Callable[[], Awaitable[None]],
    log: logging.Logger,
) -> int:
    """agentctl's life around its server: listen, print the ready line, wait, close.

    It prints exactly one line on stdout once listening, ``{"event": "ready",
    "url", "pid", "cwd"}``, for whoever started it to read the port (and, over
    SSH, the working directory) from; it stops on SIGTERM or SIGINT, or when
    ``shutdown`` is set, and ``close()``s its own work before the server goes.
    """
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, shutdown.set)
    try:
        url = await server.start(host, port, handle)
    except OSError as error:
        log.error("cannot listen on %s:%d: %s", host, port, error.strerror or error)
        return 1
    sys.stdout.write(json.dumps({"event": "ready", "url": url, "pid": os.getpid(), "cwd": os.getcwd()}) + "\n")
    sys.stdout.flush()
    log.info("serving at %s", url)
    await shutdown.wait()
    log.info("shutting down")
    await close()
    await server.close()
    return 0
