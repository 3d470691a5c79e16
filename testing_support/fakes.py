"""The services kandev-web sends to, played by the test: a browser vendor's Web Push service and a
chat tool's webhook receiver on loopback, and agentctl as the web app's answer service sees it.

The push service and the webhook receiver are each a :class:`LoopbackService`:
an HTTP server on a free port of 127.0.0.1, answering each POST from a
thread with a status it decides and keeping what it got, so a test can check
it as the real receiver would.

The push service checks each push as a real one must: the VAPID JWT (RFC
8292: ES256, ``aud`` the endpoint's origin, ``exp`` in the future, ``sub``
set) against the key kandev's pages hand browsers, and decrypts the body
(RFC 8291, aes128gcm) with the subscribing browser's private key via
http-ece. Each endpoint answers with the status it was made with (410: gone).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from standardwebhooks import Webhook as StandardWebhook


class LoopbackService:
    """An HTTP service of the test's own on 127.0.0.1, serving from a daemon thread until :meth:`close`.

    A POST is read whole and handed to :meth:`answer`, whose status is the
    reply (with an empty body): the fakes differ only in what they keep and
    what they say.
    """

    def __init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _PostHandler)
        self.server.service = self
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def answer(self, path: str, headers: Message, body: bytes) -> int:
        """The status to reply to a POST of ``body`` to ``path``."""
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    service: LoopbackService


class _PostHandler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = self.server.service.answer(self.path, self.headers, body)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


# --- Web Push ---------------------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class FakeBrowser:
    """The keys a browser makes when it subscribes: a P-256 key pair and a 16-byte auth secret."""

    private_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        raw = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(raw)

    def subscription(self, endpoint: str) -> dict:
        """As ``PushSubscription.toJSON()`` gives it."""
        keys = {"p256dh": self.p256dh, "auth": b64url(self.auth)}
        return {"endpoint": endpoint, "expirationTime": None, "keys": keys}


@dataclass
class Push:
    path: str
    #: Lower-cased names: HTTP's are case-insensitive (pywebpush sends ``authorization``).
    headers: dict[str, str]
    body: bytes
    status: int
    #: ``time.time()`` when the request had been read, for benchmarks/web_push.py.
    at: float = 0.0

    def decrypt(self, browser: FakeBrowser) -> dict:
        assert self.headers["content-encoding"] == "aes128gcm"
        plain = http_ece.decrypt(
            self.body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
        )
        return json.loads(plain)

    def vapid_claims(self, public_key: str, endpoint: str) -> dict:
        """The JWT's claims, once its signature, audience, expiry and subject are checked."""
        scheme, _, parameters = self.headers["authorization"].partition(" ")
        assert scheme.lower() == "vapid", self.headers["authorization"][:10]
        fields = dict(part.strip().split("=", 1) for part in parameters.split(","))
        assert fields["k"] == public_key, "signed with another key than the one browsers subscribe with"
        header_b64, claims_b64, signature_b64 = fields["t"].split(".")
        header = json.loads(unb64url(header_b64))
        assert header["alg"] == "ES256"
        raw = unb64url(signature_b64)
        assert len(raw) == 64
        signature = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(public_key))
        try:
            key.verify(signature, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise AssertionError("the VAPID signature does not verify") from None
        claims = json.loads(unb64url(claims_b64))
        origin = urlsplit(endpoint)
        assert claims["aud"] == f"{origin.scheme}://{origin.netloc}"
        assert time.time() < claims["exp"] <= time.time() + 24 * 3600  # RFC 8292 §2: at most a day ahead
        assert claims["sub"].startswith(("mailto:", "https://"))
        return claims


class PushService(LoopbackService):
    def __init__(self) -> None:
        self.statuses: dict[str, int] = {}
        self.received: list[Push] = []
        self.arrived = threading.Condition()
        super().__init__()

    def answer(self, path: str, headers: Message, body: bytes) -> int:
        at = time.time()
        status = self.statuses.get(path, 404)
        lowered = {name.lower(): value for name, value in headers.items()}
        with self.arrived:
            self.received.append(Push(path, lowered, body, status, at))
            self.arrived.notify_all()
        return status

    def endpoint(self, name: str, status: int = 201) -> str:
        """A subscription's endpoint on this service, answering every push with ``status``."""
        path = f"/push/{name}"
        self.statuses[path] = status
        return f"{self.origin}{path}"

    def pushes_to(self, endpoint: str) -> list[Push]:
        path = urlsplit(endpoint).path
        return [push for push in self.received if push.path == path]

    def wait_for(self, endpoint: str, count: int = 1, timeout: float = 30) -> list[Push]:
        """The pushes to ``endpoint`` once there are ``count`` of them."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.pushes_to(endpoint)) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.pushes_to(endpoint))} pushes to {endpoint} after {timeout} s"
                self.arrived.wait(left)
        return self.pushes_to(endpoint)


# --- Webhooks ---------------------------------------------------------------------------------------


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    #: ``time.time()`` when it had been read.
    at: float = field(default_factory=time.time)

    @property
    def payload(self) -> dict:
        return json.loads(self.body)


class Receiver(LoopbackService):
    """A webhook receiver, as a chat tool's would be: it verifies what it gets.

    Answers each POST with the next of ``statuses`` (the last one again once
    they run out); a status of 0 means: say nothing for ``stall`` seconds,
    like a receiver that hangs.
    """

    def __init__(self, statuses: list[int] | None = None, stall: float = 3.0) -> None:
        self.statuses = statuses or [200]
        self.stall = stall
        self.received: list[Received] = []
        super().__init__()

    def answer(self, path: str, headers: Message, body: bytes) -> int:
        self.received.append(Received(dict(headers.items()), body))
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        if status == 0:
            time.sleep(self.stall)
            status = 200
        return status

    @property
    def url(self) -> str:
        return f"{self.origin}/hook?token=abc"

    def verified(self, secret: str) -> list[dict]:
        """Every payload received, after checking each one's signature as a receiver must: with the
        Standard Webhooks library (``standardwebhooks``), not with kandev's own code."""
        for item in self.received:
            assert StandardWebhook(secret).verify(item.body, item.headers) == item.payload, item.headers
            assert item.headers["webhook-id"] == item.payload["delivery"]
            assert item.headers["X-Kandev-Event"] == item.payload["event"]
            assert item.headers["Content-Type"] == "application/json"
        return [item.payload for item in self.received]


# --- agentctl, for tests that need no real process -------------------------------------------------


# --- Hostile receivers, for the outgoing client's guards ------------------------------------------


class DripReceiver:
    """A receiver that reads a request, then answers one byte every ``interval`` seconds, like a tarpit.

    A read timeout never fires on it (a byte always comes in time); only a
    total deadline ends it. ``requested`` is set when a request has been
    read, ``cut`` when the client hung up before the answer was all sent
    (``requested_at`` and ``cut_at`` say when, by ``time.time()``).
    """

    ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Slow: " + b"." * 40 + b"\r\n\r\n"

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requested = threading.Event()
        self.cut = threading.Event()
        self.finished = threading.Event()
        self.requested_at: float | None = None
        self.cut_at: float | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/drip"

    @property
    def seconds(self) -> float:
        """How long the whole answer takes to drip out."""
        return len(self.ANSWER) * self.interval

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            connection, _ = self.listener.accept()
            with connection:
                _read_request(connection)
                self.requested_at = time.time()
                self.requested.set()
                for byte in self.ANSWER:
                    readable, _, _ = select.select([connection], [], [], self.interval)
                    if readable and not connection.recv(1):  # the client hung up
                        break
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        break
                else:
                    self.finished.set()
                    return
                self.cut_at = time.time()
                self.cut.set()

    def close(self) -> None:
        self.listener.close()


class RedirectingReceiver(LoopbackService):
    """Answers every POST with ``status`` and a ``Location`` pointing at ``to``."""

    def __init__(self, to: str, status: int = 307) -> None:
        self.to = to
        self.status = status
        self.received: list[str] = []
        super().__init__()
        self.server.RequestHandlerClass = _RedirectHandler

    def answer(self, path: str, headers: Message, body: bytes) -> int:
        self.received.append(path)
        return self.status


class _RedirectHandler(_PostHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        service = self.server.service
        assert isinstance(service, RedirectingReceiver)
        self.send_response(service.answer(self.path, self.headers, body))
        self.send_header("Location", service.to)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Listener:
    """A bare TCP listener on 127.0.0.1 that accepts nothing: :meth:`was_reached` says whether anyone connected."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]

    def was_reached(self, wait: float = 0.3) -> bool:
        self.socket.settimeout(wait)
        try:
            connection, _ = self.socket.accept()
        except TimeoutError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.socket.close()


def _read_request(connection: socket.socket) -> bytes:
    """One HTTP request's head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body
